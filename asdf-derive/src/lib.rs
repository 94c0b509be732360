//! `#[derive(AsdfType)]` for asdf-core: tag-aware conversion of Rust structs and enums to
//! and from ASDF trees. Use it through `asdf_core::AsdfType`; the attributes are described
//! on [`macro@AsdfType`].

#![forbid(unsafe_code)]

mod attr;
mod expand;

use proc_macro::TokenStream;

/// Derives `asdf_core::convert::ToAsdf` and `asdf_core::convert::FromAsdf`, so the type
/// can be written to and read from an ASDF tree.
///
/// ```
/// use asdf_core::convert::{from_node, to_node};
/// use asdf_core::AsdfType;
///
/// #[derive(AsdfType, Debug, PartialEq)]
/// #[asdf(
///     tag = "asdf://example.org/tags/observation-1.1.0",
///     tag_pattern = "asdf://example.org/tags/observation-1.*"
/// )]
/// struct Observation {
///     target: String,
///     #[asdf(rename = "exposure_time")]
///     exposure: f64,
///     comment: Option<String>, // left out when `None`, may be missing on read
/// }
///
/// let obs = Observation { target: "M31".into(), exposure: 30.0, comment: None };
/// let node = to_node(&obs)?;
/// assert_eq!(node.tag(), Some("asdf://example.org/tags/observation-1.1.0"));
/// assert_eq!(node.get("exposure_time").and_then(|n| n.as_f64()), Some(30.0));
/// assert!(node.get("comment").is_none());
/// assert_eq!(from_node::<Observation>(&node)?, obs);
/// # Ok::<(), asdf_core::convert::ConvertError>(())
/// ```
///
/// # How types are written
///
/// | Rust | ASDF node |
/// |---|---|
/// | struct with named fields | mapping, one key per field, in declaration order |
/// | tuple struct `S(A, B)` | sequence `[a, b]` |
/// | newtype struct `S(A)` | the inner value itself (transparent), re-tagged if `tag` is given |
/// | unit struct `S;` | empty mapping (useful with a `tag`) |
/// | unit variant `E::A` | the string `A` |
/// | newtype variant `E::A(X)` | the inner value (its own tag), re-tagged if `tag` is given |
/// | struct / tuple variant | tagged mapping / sequence; the variant needs a `tag` |
///
/// # Testing
///
/// `asdf_core::testing` (asdf-core's `testing` feature, for `[dev-dependencies]`) tests
/// derived types: `assert_round_trip(&value)` writes a value in memory with every array
/// storage and reads it back, panicking with the tree paths that differ;
/// `assert_valid(&value)` and `assert_schema_rejects(&value, "fragment")` check it against
/// its `schema` and the schemas of its tags; `check_schemas(dir)` checks the schema files
/// themselves and their examples. See the module's documentation for a test file.
///
/// # Tags
///
/// `#[asdf(tag = "URI")]` on a struct writes its node with that tag (`ToAsdf::tag()`
/// returns it) and reads only nodes whose tag `tag_pattern` accepts (or, without a
/// pattern, exactly `tag`). A pattern ending in `*` accepts every tag starting with what
/// precedes it and going on without a `/` (python asdf's `uri_match`), so `tag_pattern = "asdf://example.org/tags/obs-1.*"` reads files written
/// by `obs-1.0.0` and by `obs-1.1.0`. The pattern must accept the type's own tag
/// (checked at compile time) and `*` may only be its last character.
///
/// A tagged struct rejects a node with another tag **and an untagged node**
/// (`ConvertErrorKind::Tag`), as python asdf would not turn either into the type. A
/// struct without a tag accepts any node, tagged or not (only the mapping matters).
///
/// # Container attributes (on the struct or enum)
///
/// - `tag = "URI"`: the tag written and, without `tag_pattern`, the only tag read. Not
///   allowed on enums (put it on the variants).
/// - `tag_pattern = "URI-prefix*"`: the tags read; needs `tag`.
/// - `schema = "URI"`: the node is validated with `asdf_core::convert::validate_against`
///   against the schema registered under `URI`: on read before the node is converted, on
///   write after it is built. Errors name the tree path.
///
/// # Field attributes
///
/// - `rename = "key"`: the mapping key (default: the field's name, without `r#`).
/// - `skip`: neither written nor read; on read the field is `Default::default()` (or
///   `default = "path"`'s value).
/// - `default`: when the key is missing, use `Default::default()`.
/// - `default = "path::to::function"`: when the key is missing, call `function()`.
///   Without either, a missing key falls back to `FromAsdf::absent()` (`None` for an
///   `Option`) and is otherwise an error `missing key `name``.
/// - `keep_null`: write the key even when the value is absent (an `Option` field that is
///   `None` is written as `null`). By default, fields whose `ToAsdf::is_absent()` is true
///   (`None`) are left out.
/// - `flatten`: the field's own mapping entries are merged into the parent's mapping at
///   the field's position (a value that converts to `null`, such as `None`, adds
///   nothing; anything other than a mapping is an error). On read the field is converted
///   from an untagged mapping holding the parent's entries whose keys are not the keys of
///   the parent's other fields, so its type should be an untagged struct or a map.
///   Several `flatten` fields each see those same entries (the keys another flattened
///   field reads are not known). When no entry is left, the field takes its absent value
///   if it has one: a flattened `Option` is then `None`.
/// - `extra`: a catch-all of type `asdf_core::convert::Extra`. On read it receives every
///   entry whose key no field reads, in file order; on write those entries come back after
///   the struct's own keys (entries whose key the struct wrote already are dropped). With
///   it, reading and writing a file keeps what the struct does not model (arrays under
///   unknown keys still point into the file they were read from: write with
///   `Writer::from_file(&that_file, ..)` so their data is copied). At most one per struct,
///   not together with `flatten`. Without a catch-all, unknown keys are ignored on read.
/// - `compression = "zlib" | "bzp2" | "lz4" | "zstd" | "lz4f" | "blsc" | "none" | "input"`:
///   compression of the array blocks inside the field (`input`: the codec the array had
///   in the file it was read from, for types that keep their block, such as
///   `asdf_core::convert::LazyArray` written with `Writer::from_file` or
///   `asdf_core::update_at`; on an owned ndarray, which does not remember its codec, it is
///   a compile error).
/// - `storage = "internal" | "inline" | "external"`: where the arrays inside the field go
///   (a binary block, nested lists in the tree, or a separate file).
///
///   Both set `asdf_core::array::ArrayOptions` for everything converted inside the field
///   (`ToContext::with_options`); other arrays keep the writer's options.
///
/// - `with = "path::to::module"`: the field is converted by the module's functions
///   `to_asdf(&'a T, &mut ToContext<'_, 'a>) -> Result<Node, ConvertError>` and
///   `from_asdf(&Node, &mut FromContext<'_>) -> Result<T, ConvertError>` instead of its
///   type's traits (the type need not implement them). The key is always written; when it
///   is missing on read, `default` applies, else it is an error.
///
///   ```
///   use asdf_core::convert::{from_node, to_node, ConvertError};
///   use asdf_core::AsdfType;
///
///   mod hex {
///       use asdf_core::convert::{ConvertError, FromContext, ToContext};
///       use asdf_core::{FromAsdf, Node};
///
///       pub fn to_asdf<'a>(v: &'a u32, _: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
///           Ok(Node::str(format!("{v:#x}")))
///       }
///       pub fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<u32, ConvertError> {
///           let text = String::from_asdf(node, ctx)?;
///           u32::from_str_radix(text.trim_start_matches("0x"), 16)
///               .map_err(|e| ConvertError::custom(ctx.tree_path(), e))
///       }
///   }
///
///   #[derive(AsdfType, Debug, PartialEq)]
///   struct Register {
///       #[asdf(with = "hex")]
///       address: u32,
///   }
///
///   let node = to_node(&Register { address: 255 })?;
///   assert_eq!(node.get("address").and_then(|n| n.as_str()), Some("0xff"));
///   assert_eq!(from_node::<Register>(&node)?, Register { address: 255 });
///   # Ok::<(), ConvertError>(())
///   ```
///
/// Tuple fields (`struct S(A, B)`) only take `compression`, `storage` and `with`.
///
/// ```
/// use asdf_core::convert::{from_node, to_node, Extra};
/// use asdf_core::{AsdfType, Node};
///
/// fn one() -> u32 { 1 }
///
/// #[derive(AsdfType, Debug, PartialEq)]
/// struct Meta {
///     #[asdf(default = "one")]
///     version: u32,
///     #[asdf(skip)]
///     cache: Vec<u8>,
///     #[asdf(extra)]
///     rest: Extra,
/// }
///
/// let node = Node::map([("unknown", Node::str("kept"))]);
/// let meta: Meta = from_node(&node)?;
/// assert_eq!(meta.version, 1);
/// assert_eq!(meta.rest.get("unknown").and_then(|n| n.as_str()), Some("kept"));
/// let back = to_node(&meta)?;
/// assert_eq!(back.get("unknown").and_then(|n| n.as_str()), Some("kept"));
/// # Ok::<(), asdf_core::convert::ConvertError>(())
/// ```
///
/// # Enums
///
/// On read, unit variants are tried first: an untagged string equal to a variant's name
/// (or its `rename`) selects it. Then the other variants, in declaration order; the first
/// that accepts the node's tag wins and the node is converted as that variant (an error
/// there is not retried with later variants):
///
/// - a newtype variant `A(X)` without attributes accepts what `X::accepts_tag` accepts (a
///   type without a tag, such as `f64`, accepts everything: put it last);
/// - a variant with `tag` (and optionally `tag_pattern`, `schema`) accepts the tags of its
///   pattern. Struct-like `A { .. }` and tuple `A(X, Y)` variants must have a `tag`.
///
/// A node no variant takes is an error `no variant of E matches ...`. Variant attributes:
/// `rename` (unit variants only), `tag`, `tag_pattern`, `schema` (other variants).
///
/// ```
/// use asdf_core::convert::{from_node, to_node};
/// use asdf_core::AsdfType;
///
/// #[derive(AsdfType, Debug, PartialEq)]
/// enum Shape {
///     #[asdf(rename = "none")]
///     Empty,
///     #[asdf(tag = "asdf://example.org/tags/circle-1.0.0")]
///     Circle { radius: f64 },
///     #[asdf(tag = "asdf://example.org/tags/point-1.0.0")]
///     Point(f64, f64),
/// }
///
/// for s in [Shape::Empty, Shape::Circle { radius: 2.0 }, Shape::Point(1.0, 2.0)] {
///     assert_eq!(from_node::<Shape>(&to_node(&s)?)?, s);
/// }
/// # Ok::<(), asdf_core::convert::ConvertError>(())
/// ```
///
/// # Generics
///
/// Type parameters used in converted fields get the bound `T: ToAsdf` on the `ToAsdf`
/// impl and `T: FromAsdf` on the `FromAsdf` impl; skipped and `default` fields whose type
/// mentions a parameter get `FieldType: Default`; `with` fields add no bound. Lifetime
/// and const parameters are carried over unchanged. A `PhantomData<T>` field has no
/// conversion: mark it `skip`.
///
/// # Errors at compile time
///
/// Unknown attributes, values of the wrong kind, unknown compression or storage names,
/// a `tag_pattern` that does not accept the `tag`, two `extra` fields, `extra` with
/// `flatten`, `rename`/`default`/`keep_null` with `flatten`, other attributes on `skip`
/// and `extra` fields,
/// two fields written under the same key, struct variants without a `tag`, and unions are
/// compile errors pointing at the offending token; all of them are reported at once.
#[proc_macro_derive(AsdfType, attributes(asdf))]
pub fn derive_asdf_type(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
