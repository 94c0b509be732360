//! Typed conversion: Rust values to and from tree [`Node`]s.
//!
//! [`ToAsdf`] turns a value into a node; array values hand their data to an [`ArraySink`]
//! (the writer), which stores them as blocks, inline or external files as the
//! [`ArrayOptions`] in effect say. [`FromAsdf`] builds a value from a node; array values
//! load their data through an [`ArrayLoader`] (an open file) only when converted.
//!
//! Tags are part of a type: [`ToAsdf::tag`] is the tag written, [`FromAsdf::accepts_tag`]
//! the tags read (usually a pattern such as `asdf://example.org/tags/obs-1.*`, see
//! [`tag_matches`]).
//!
//! `#[derive(AsdfType)]` (crate `asdf-derive`, re-exported as [`crate::AsdfType`]) implements
//! both traits for structs and enums.

mod error;
mod impls;
mod lazy;
mod masked;
/// Helpers shared with the serde bridge.
pub(crate) mod impls_support {
    pub(crate) use super::impls::big_integer_node;
}

use crate::array::{ArrayOptions, DynArray, WriteArray};
use crate::yaml::Node;

pub use crate::yaml::describe;
pub use crate::yaml::{PathSegment, TreePath};
pub use error::{ConvertError, ConvertErrorKind};
pub use lazy::LazyArray;
pub(crate) use masked::nonzero_kind;
pub use masked::{ArrayItem, MaskValue, Masked};

/// Renders a path as a JSON pointer (`/a/0/b`, `~` and `/` escaped; the root is `/`): the
/// [`TreePath`] display.
pub fn pointer(segments: &[PathSegment]) -> String {
    TreePath::from(segments.to_vec()).to_string()
}

/// Where array values go on write: implemented by [`crate::write::Writer`].
pub trait ArraySink<'a> {
    /// Registers array data with per-array options and returns the node to put in the tree.
    fn add_array(&mut self, array: WriteArray<'a>, opts: ArrayOptions) -> Node;

    /// Registers array data with a `bool` mask of the same shape (true where the data is
    /// missing), written as the ndarray's `mask` in the same storage as the data.
    fn add_masked_array(
        &mut self,
        array: WriteArray<'a>,
        mask: WriteArray<'a>,
        opts: ArrayOptions,
    ) -> Node;

    /// The ASDF Standard version being written, which selects tag versions.
    fn standard(&self) -> crate::StandardVersion;
}

/// Where array values come from on read: implemented by [`crate::AsdfFile`].
pub trait ArrayLoader {
    /// Loads the array described by the ndarray `node` at tree path `path`.
    fn load_array(&self, node: &Node, path: &str) -> crate::Result<DynArray>;
}

/// The context of a conversion, either way: what the side needs (`S`: [`ToSide`] for
/// [`ToContext`], [`FromSide`] for [`FromContext`]) and the current tree path, tracked by
/// the one [`TreePath`] both sides share (for errors).
pub struct Context<S> {
    side: S,
    path: TreePath,
}

/// The context of a conversion to nodes: the array sink, the array options in effect, and
/// the current tree path (for errors).
pub type ToContext<'s, 'a> = Context<ToSide<'s, 'a>>;

/// The context of a conversion from nodes: the array loader and the current tree path.
pub type FromContext<'s> = Context<FromSide<'s>>;

/// What a conversion to nodes needs besides the path: the array sink and the array options
/// in effect (see [`ToContext`]).
pub struct ToSide<'s, 'a> {
    sink: Option<&'s mut dyn ArraySink<'a>>,
    options: ArrayOptions,
}

/// What a conversion from nodes needs besides the path: the array loader, and the last
/// error it gave (see [`FromContext`]).
pub struct FromSide<'s> {
    loader: Option<&'s dyn ArrayLoader>,
    /// The last failed load, where it was: kept here rather than in the
    /// [`ConvertError`] so that conversion errors never hold the crate's top-level error.
    failed_load: std::cell::Cell<Option<(TreePath, crate::Error)>>,
}

impl<S> Context<S> {
    /// Runs `f` one mapping key deeper in the tree path.
    pub fn key<R>(&mut self, key: &str, f: impl FnOnce(&mut Self) -> R) -> R {
        TreePath::within(self, |c| &mut c.path, PathSegment::Key(key.to_string()), f)
    }

    /// Runs `f` one sequence index deeper in the tree path.
    pub fn index<R>(&mut self, index: usize, f: impl FnOnce(&mut Self) -> R) -> R {
        TreePath::within(self, |c| &mut c.path, PathSegment::Index(index), f)
    }

    /// The current tree path as a JSON pointer.
    pub fn path(&self) -> String {
        self.path.to_string()
    }

    /// The current tree path.
    pub fn tree_path(&self) -> &TreePath {
        &self.path
    }

    /// An error at the current path.
    pub fn error(&self, kind: ConvertErrorKind) -> ConvertError {
        ConvertError::new(self.path.clone(), kind)
    }
}

impl<'s, 'a> ToContext<'s, 'a> {
    /// A context whose arrays go to `sink`.
    pub fn new(sink: &'s mut dyn ArraySink<'a>) -> Self {
        Context {
            side: ToSide {
                sink: Some(sink),
                options: ArrayOptions::default(),
            },
            path: TreePath::root(),
        }
    }

    /// A context without a sink: arrays are written inline in the tree.
    pub fn detached() -> Self {
        Context {
            side: ToSide {
                sink: None,
                options: ArrayOptions::default(),
            },
            path: TreePath::root(),
        }
    }

    /// The ASDF Standard version being written (the sink's; the default,
    /// [`StandardVersion::V1_6_0`](crate::StandardVersion::V1_6_0), when detached).
    pub fn standard(&self) -> crate::StandardVersion {
        self.side
            .sink
            .as_deref()
            .map_or_else(crate::StandardVersion::default, |s| s.standard())
    }

    /// The array options in effect (set by [`ToContext::with_options`]).
    pub fn options(&self) -> ArrayOptions {
        self.side.options
    }

    /// Runs `f` with `opts` overriding the options in effect (fields left `None` in `opts`
    /// keep the outer value).
    pub fn with_options<R>(&mut self, opts: ArrayOptions, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = self.side.options;
        if opts.compression.is_some() {
            self.side.options.compression = opts.compression;
        }
        if opts.storage.is_some() {
            self.side.options.storage = opts.storage;
        }
        let r = f(self);
        self.side.options = saved;
        r
    }

    /// Registers array data with its `bool` mask (see [`ArraySink::add_masked_array`]) and
    /// returns the node to put in the tree; without a sink both are inline.
    pub fn add_masked_array(
        &mut self,
        array: WriteArray<'a>,
        mask: WriteArray<'a>,
    ) -> Result<Node, ConvertError> {
        let opts = self.side.options;
        match self.side.sink.as_deref_mut() {
            Some(sink) => Ok(sink.add_masked_array(array, mask, opts)),
            None => {
                let tag = "tag:stsci.edu:asdf/core/ndarray-1.1.0";
                let inline = |a: &WriteArray<'_>| impls::inline_array_node(&a.to_dyn(), tag);
                let both = inline(&array).and_then(|n| Ok((n, inline(&mask)?)));
                let (mut node, mask) = both.map_err(|k| self.error(k))?;
                if let crate::yaml::Value::Map(entries) = node.value_mut() {
                    entries.push((Node::str("mask"), mask));
                }
                Ok(node)
            }
        }
    }

    /// Registers array data with the options in effect and returns the node to put in the
    /// tree: a block (or external file) through the sink, or inline data without one.
    pub fn add_array(&mut self, array: WriteArray<'a>) -> Result<Node, ConvertError> {
        let opts = self.side.options;
        match self.side.sink.as_deref_mut() {
            Some(sink) => Ok(sink.add_array(array, opts)),
            None => {
                let tag = "tag:stsci.edu:asdf/core/ndarray-1.1.0";
                impls::inline_array_node(&array.to_dyn(), tag).map_err(|k| self.error(k))
            }
        }
    }
}

impl<'s> FromContext<'s> {
    /// A context whose arrays are loaded by `loader`, starting at tree path `base` (a JSON
    /// pointer, `/` or empty for the root).
    pub fn new(loader: &'s dyn ArrayLoader, base: &str) -> Self {
        Context {
            side: FromSide {
                loader: Some(loader),
                failed_load: std::cell::Cell::new(None),
            },
            path: TreePath::parse(base),
        }
    }

    /// A context without a file: only inline arrays can be read.
    pub fn detached() -> Self {
        Context {
            side: FromSide {
                loader: None,
                failed_load: std::cell::Cell::new(None),
            },
            path: TreePath::root(),
        }
    }

    /// Loads the array described by the ndarray node `node` (at the current path). When
    /// the loader fails, the error is [`ConvertErrorKind::Load`] with the loader's message,
    /// and [`FromContext::take_load_error`] gives the loader's error itself.
    pub fn load_array(&self, node: &Node) -> Result<DynArray, ConvertError> {
        match self.side.loader {
            Some(loader) => loader.load_array(node, &self.path()).map_err(|e| {
                let err = self.error(ConvertErrorKind::Load(crate::display_chain(&e)));
                self.side.failed_load.set(Some((self.path.clone(), e)));
                err
            }),
            None => impls::inline_array(node, &self.path()).map_err(|k| self.error(k)),
        }
    }

    /// The loader's error behind a [`ConvertErrorKind::Load`] error at `path` (the last
    /// load that failed, if it was at `path`), taken out of the context.
    pub fn take_load_error(&self, path: &TreePath) -> Option<crate::Error> {
        match self.side.failed_load.take() {
            Some((at, e)) if at == *path => Some(e),
            _ => None,
        }
    }
}

/// Conversion of a Rust value into a tree node.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written to an ASDF tree",
    note = "derive it with `#[derive(AsdfType)]`, implement `ToAsdf`, or wrap a serde type in `asdf_core::serde_node::Serde`"
)]
pub trait ToAsdf {
    /// The tag written on this type's node (`None`: untagged, or the tag depends on the
    /// value).
    fn tag() -> Option<&'static str>
    where
        Self: Sized,
    {
        None
    }

    /// Converts `self` into a node; array data goes to `ctx` (borrowed for `'a` where
    /// possible).
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError>;

    /// Whether a struct field holding this value is left out of the mapping (true for
    /// `None`).
    fn is_absent(&self) -> bool {
        false
    }
}

/// Conversion of a tree node into a Rust value.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read from an ASDF tree",
    note = "derive it with `#[derive(AsdfType)]`, implement `FromAsdf`, or wrap a serde type in `asdf_core::serde_node::Serde`"
)]
pub trait FromAsdf: Sized {
    /// Whether a node with this tag (`None`: untagged) can be read as this type. Types
    /// without a tag accept every tag.
    fn accepts_tag(tag: Option<&str>) -> bool {
        let _ = tag;
        true
    }

    /// Builds a value from `node`.
    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError>;

    /// The value of a struct field whose key is missing (`Some(None)` for `Option`);
    /// `None` makes a missing key an error.
    fn absent() -> Option<Self> {
        None
    }
}

/// A type that converts both ways; what `#[derive(AsdfType)]` implements.
pub trait AsdfType: ToAsdf + FromAsdf {}

impl<T: ToAsdf + FromAsdf> AsdfType for T {}

/// Whether `tag` matches `pattern`, in the one pattern dialect of ASDF tags and of the
/// crate (python asdf's `uri_match`): `*` matches any run of characters but `/`, `**` any
/// run, otherwise equal. `asdf://example.org/tags/obs-1.*` accepts `…/obs-1.0.0` and
/// `…/obs-1.2.0`. The same matching serves [`FromAsdf::accepts_tag`] of derived types
/// (`tag_pattern`), the schemas' `tag` keyword and
/// [`schema::register_tag`](crate::schema::register_tag).
///
/// ```
/// use asdf_core::convert::tag_matches;
/// assert!(tag_matches("asdf://example.org/tags/obs-1.*", "asdf://example.org/tags/obs-1.2.0"));
/// assert!(!tag_matches("asdf://example.org/tags/obs-1.*", "asdf://example.org/tags/obs-1.2/x"));
/// assert!(tag_matches("asdf://example.org/**", "asdf://example.org/tags/obs-1.2.0"));
/// assert!(!tag_matches("asdf://example.org/tags/obs-1.0.0", "asdf://example.org/tags/obs-1.0"));
/// assert!(!tag_matches("tag:stsci.edu:asdf/*", "tag:stsci.edu:asdf/core/ndarray-1.1.0"));
/// ```
pub fn tag_matches(pattern: &str, tag: &str) -> bool {
    crate::schema::tag_matches(pattern, tag)
}

/// Converts a value into a node without a writer (arrays inline), through [`ToAsdf`] (tags,
/// schemas, arrays as `core/ndarray`). For a serde `Serialize` type (no tags) the same name in
/// [`serde_node`](crate::serde_node::to_node) does it through serde.
pub fn to_node<T: ToAsdf + ?Sized>(value: &T) -> Result<Node, ConvertError> {
    value.to_asdf(&mut ToContext::detached())
}

/// Converts a node into a value without a file (only inline arrays can be read), through
/// [`FromAsdf`]; [`serde_node::from_node`](crate::serde_node::from_node) is the serde one.
pub fn from_node<T: FromAsdf>(node: &Node) -> Result<T, ConvertError> {
    T::from_asdf(node, &mut FromContext::detached())
}

/// Validates `node`, found at tree path `path`, against the schema registered under `uri`
/// (`#[asdf(schema = "…")]`), as an error at `path` listing every problem with its tree
/// path below `path` (`/obs/exposure: minimum: ...`): [`schema::validate_against`] for
/// typed conversions. ([`schema::check_schema`] checks a schema itself.)
///
/// [`schema::validate_against`]: crate::schema::validate_against
/// [`schema::check_schema`]: crate::schema::check_schema
pub fn validate_against(
    uri: &str,
    node: &Node,
    path: impl Into<TreePath>,
) -> Result<(), ConvertError> {
    crate::schema::validate_against(uri, node).map_err(|e| {
        let base: TreePath = path.into();
        let errors: Vec<String> = e
            .into_iter()
            .map(|v| {
                let at = base.join(&TreePath::parse(&v.path));
                format!("{at}: {}: {}", v.keyword, v.message)
            })
            .collect();
        ConvertError::new(
            base,
            ConvertErrorKind::Schema {
                schema: uri.to_string(),
                problems: errors,
            },
        )
    })
}

/// A mapping with string keys kept in file (insertion) order: what `BTreeMap` (sorted) and
/// `HashMap` (written sorted) cannot keep. Reading rejects non-string keys other than
/// integers and booleans, which are read as their text.
///
/// ```
/// use asdf_core::convert::{from_node, to_node, OrderedMap};
/// let m = OrderedMap(vec![("z".to_string(), 1u8), ("a".to_string(), 2)]);
/// let node = to_node(&m)?;
/// assert_eq!(node.as_map().unwrap()[0].0.as_str(), Some("z"));
/// assert_eq!(from_node::<OrderedMap<u8>>(&node)?, m);
/// # Ok::<(), asdf_core::convert::ConvertError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OrderedMap<V>(pub Vec<(String, V)>);

impl<V> OrderedMap<V> {
    /// The value of `key` (the first, if the file repeats it).
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// The keys of a mapping that a struct does not model, in their order: the type of a
/// derived struct's catch-all field (`#[asdf(extra)]`). Reading keeps them, writing puts
/// them back after the struct's own keys, so unknown parts of a file survive a round trip.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extra(pub Vec<(Node, Node)>);

impl Extra {
    /// Whether there are no extra keys.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value of the extra key `key`.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.0
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_contexts_track_paths_alike() {
        let kind = || ConvertErrorKind::Custom("bad".into());
        let mut to = ToContext::detached();
        let e = to.key("a", |c| c.index(2, |c| c.error(kind())));
        assert_eq!(e.path, "/a/2");
        assert_eq!(e.to_string(), "/a/2: bad");
        assert!(to.tree_path().is_root());
        let mut from = FromContext::detached();
        let e = from.key("a", |c| c.key("b/c", |c| c.index(0, |c| c.error(kind()))));
        assert_eq!(e.to_string(), "/a/b~1c/0: bad");
        assert_eq!(from.path(), "/");
        // `{:?}` is the derived form
        assert!(format!("{e:?}").starts_with("ConvertError { path: TreePath(["));
    }

    struct Failing;

    impl ArrayLoader for Failing {
        fn load_array(&self, _: &Node, path: &str) -> crate::Result<DynArray> {
            Err(crate::Error::Internal(format!("no data for {path}")))
        }
    }

    #[test]
    fn a_failed_load_keeps_the_loaders_error_in_the_context() {
        let ctx = &mut FromContext::new(&Failing, "/base~1x");
        let node = Node::str("anything");
        let e = ctx
            .key("k", |c| c.index(1, |c| c.load_array(&node)))
            .unwrap_err();
        assert_eq!(e.path, "/base~1x/k/1");
        assert!(
            matches!(&e.kind, ConvertErrorKind::Load(m) if m == "internal error (please report): no data for /base~1x/k/1"),
            "{e:?}"
        );
        assert!(ctx.take_load_error(&TreePath::parse("/other")).is_none());
        // taking is once: a wrong path above took it
        let _ = ctx.key("k", |c| c.index(1, |c| c.load_array(&node)));
        let source = ctx.take_load_error(&e.path).unwrap();
        assert!(matches!(source, crate::Error::Internal(_)));
        assert!(ctx.take_load_error(&e.path).is_none());
    }
}
