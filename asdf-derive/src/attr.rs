//! Parsing and checking of `#[asdf(...)]` attributes.
//!
//! Every attribute name lives in [`names`]; every problem found is recorded in [`Errors`]
//! (not only the first), each with the span of the offending token.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr};

/// The attribute names the derive understands.
pub mod names {
    /// The attribute itself: `#[asdf(...)]`.
    pub const ASDF: &str = "asdf";
    /// Container / variant: the tag written.
    pub const TAG: &str = "tag";
    /// Container / variant: the tags read.
    pub const TAG_PATTERN: &str = "tag_pattern";
    /// Container / variant: schema URI to validate against.
    pub const SCHEMA: &str = "schema";
    /// Field / unit variant: the key or string written.
    pub const RENAME: &str = "rename";
    /// Field: neither written nor read.
    pub const SKIP: &str = "skip";
    /// Field: the value when the key is missing.
    pub const DEFAULT: &str = "default";
    /// Field: entries merged into the parent mapping.
    pub const FLATTEN: &str = "flatten";
    /// Field: compression of the arrays inside.
    pub const COMPRESSION: &str = "compression";
    /// Field: storage of the arrays inside.
    pub const STORAGE: &str = "storage";
    /// Field: catch-all for unknown keys.
    pub const EXTRA: &str = "extra";
    /// Field: written even when absent (`None` as `null`).
    pub const KEEP_NULL: &str = "keep_null";
    /// Field: converted by the functions of a module instead of the field type's traits.
    pub const WITH: &str = "with";

    /// Attributes allowed on structs and enums.
    pub const CONTAINER: &[&str] = &[TAG, TAG_PATTERN, SCHEMA];
    /// Attributes allowed on enum variants.
    pub const VARIANT: &[&str] = &[RENAME, TAG, TAG_PATTERN, SCHEMA];
    /// Attributes allowed on fields.
    pub const FIELD: &[&str] = &[
        RENAME,
        SKIP,
        DEFAULT,
        FLATTEN,
        COMPRESSION,
        STORAGE,
        EXTRA,
        KEEP_NULL,
        WITH,
    ];
    /// Attributes that take a string value.
    pub const WITH_VALUE: &[&str] = &[TAG, TAG_PATTERN, SCHEMA, RENAME, COMPRESSION, STORAGE, WITH];
    /// Attributes that are flags (no value).
    pub const FLAGS: &[&str] = &[SKIP, FLATTEN, EXTRA, KEEP_NULL];

    /// `compression = "..."` values.
    pub const COMPRESSIONS: &[&str] = &[
        "zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc", "none", "input",
    ];
    /// `storage = "..."` values.
    pub const STORAGES: &[&str] = &["internal", "inline", "external"];
}

/// Every error found while expanding, combined into one at the end.
#[derive(Default)]
pub struct Errors(Vec<syn::Error>);

impl Errors {
    /// Records an error at `span`.
    pub fn push(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.0.push(syn::Error::new(span, msg));
    }

    /// Records an error built elsewhere.
    pub fn push_err(&mut self, e: syn::Error) {
        self.0.push(e);
    }

    /// All errors combined, or `Ok` when there were none.
    pub fn finish(self) -> syn::Result<()> {
        let mut it = self.0.into_iter();
        match it.next() {
            None => Ok(()),
            Some(mut first) => {
                for e in it {
                    first.combine(e);
                }
                Err(first)
            }
        }
    }
}

/// A string value with the span of its literal.
#[derive(Clone)]
pub struct Str {
    pub value: String,
    pub span: Span,
}

/// One `name` or `name = value` item of an `#[asdf(...)]` list.
struct Item {
    name: String,
    span: Span,
    value: Option<Expr>,
}

/// Where an attribute list sits, for messages and allowed names.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Struct,
    Enum,
    Variant,
    Field,
}

impl Place {
    fn allowed(self) -> &'static [&'static str] {
        match self {
            Place::Struct | Place::Enum => names::CONTAINER,
            Place::Variant => names::VARIANT,
            Place::Field => names::FIELD,
        }
    }

    fn what(self) -> &'static str {
        match self {
            Place::Struct => "a struct",
            Place::Enum => "an enum",
            Place::Variant => "an enum variant",
            Place::Field => "a field",
        }
    }
}

/// Reads the items of every `#[asdf(...)]` attribute in `attrs`, checking names and value
/// kinds.
fn items(attrs: &[Attribute], place: Place, errors: &mut Errors) -> Vec<(Item, Option<Str>)> {
    let mut out = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident(names::ASDF) {
            continue;
        }
        if let syn::Meta::Path(p) = &attr.meta {
            errors.push(p.span(), "expected a list of attributes: #[asdf(...)]");
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            let span = meta.path.span();
            let name = match meta.path.get_ident() {
                Some(i) => i.to_string(),
                None => {
                    errors.push(span, "expected an attribute name");
                    String::new()
                }
            };
            let value = if meta.input.peek(syn::Token![=]) {
                Some(meta.value()?.parse::<Expr>()?)
            } else if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                let _: proc_macro2::TokenStream = content.parse()?;
                errors.push(span, format!("`{name}` does not take a list"));
                return Ok(());
            } else {
                None
            };
            if !name.is_empty() {
                out.push(Item { name, span, value });
            }
            Ok(())
        });
        if let Err(e) = result {
            errors.push_err(e);
        }
    }
    let allowed = place.allowed();
    let mut checked = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for item in out {
        let Some(&known) = allowed.iter().find(|n| **n == item.name) else {
            errors.push(
                item.span,
                format!(
                    "unknown asdf attribute `{}` on {}; expected one of: {}",
                    item.name,
                    place.what(),
                    allowed.join(", ")
                ),
            );
            continue;
        };
        if seen.contains(&known) {
            errors.push(item.span, format!("duplicate asdf attribute `{known}`"));
            continue;
        }
        seen.push(known);
        let string = match &item.value {
            None => None,
            Some(Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            })) => Some(Str {
                value: s.value(),
                span: s.span(),
            }),
            Some(other) => {
                if names::FLAGS.contains(&known) {
                    errors.push(other.span(), format!("`{known}` takes no value"));
                } else {
                    errors.push(
                        other.span(),
                        format!("expected a string literal: {known} = \"...\""),
                    );
                }
                continue;
            }
        };
        if names::FLAGS.contains(&known) && string.is_some() {
            errors.push(item.value.span(), format!("`{known}` takes no value"));
            continue;
        }
        if names::WITH_VALUE.contains(&known) && string.is_none() {
            errors.push(
                item.span,
                format!("`{known}` needs a value: {known} = \"...\""),
            );
            continue;
        }
        checked.push((item, string));
    }
    checked
}

/// Attributes of a struct, an enum or an enum variant.
#[derive(Default)]
pub struct Container {
    pub tag: Option<Str>,
    pub tag_pattern: Option<Str>,
    pub schema: Option<Str>,
    pub rename: Option<Str>,
}

impl Container {
    /// The pattern of tags read: `tag_pattern`, else `tag`.
    pub fn pattern(&self) -> Option<&str> {
        self.tag_pattern
            .as_ref()
            .or(self.tag.as_ref())
            .map(|s| s.value.as_str())
    }
}

/// Parses the attributes of a struct, enum or variant.
pub fn container(attrs: &[Attribute], place: Place, errors: &mut Errors) -> Container {
    let mut c = Container::default();
    for (item, value) in items(attrs, place, errors) {
        let Some(value) = value else { continue };
        match item.name.as_str() {
            names::TAG => {
                if value.value.is_empty() {
                    errors.push(value.span, "the tag must not be empty");
                } else if value.value.contains('*') {
                    errors.push(
                        value.span,
                        "a tag cannot contain `*`; use `tag_pattern` for the tags read",
                    );
                }
                c.tag = Some(value);
            }
            names::TAG_PATTERN => {
                let v = &value.value;
                if v.is_empty() {
                    errors.push(value.span, "the tag pattern must not be empty");
                } else if v.find('*').is_some_and(|i| i + 1 != v.len()) {
                    errors.push(
                        value.span,
                        "`*` is only allowed as the last character of a tag pattern",
                    );
                    continue;
                }
                c.tag_pattern = Some(value);
            }
            names::SCHEMA => {
                if value.value.is_empty() {
                    errors.push(value.span, "the schema URI must not be empty");
                }
                c.schema = Some(value);
            }
            names::RENAME => c.rename = Some(value),
            _ => {}
        }
    }
    if let Some(p) = &c.tag_pattern {
        match &c.tag {
            None => errors.push(
                p.span,
                "`tag_pattern` needs a `tag` (the tag written), e.g. tag = \"...-1.0.0\"",
            ),
            Some(t) => {
                if !tag_matches(&p.value, &t.value) {
                    errors.push(
                        p.span,
                        format!(
                            "tag pattern `{}` does not accept the type's own tag `{}`",
                            p.value, t.value
                        ),
                    );
                }
            }
        }
    }
    c
}

/// `asdf_core::convert::tag_matches` (python asdf's `uri_match`) for the patterns the
/// derive allows (`*` only at the end): a trailing `*` matches any run without `/`.
fn tag_matches(pattern: &str, tag: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => tag
            .strip_prefix(prefix)
            .is_some_and(|rest| !rest.contains('/')),
        None => pattern == tag,
    }
}

/// `default` or `default = "path"`.
pub enum DefaultAttr {
    /// `Default::default()`.
    Trait,
    /// A function returning the value.
    Path(syn::ExprPath),
}

/// Attributes of a field.
#[derive(Default)]
pub struct Field {
    pub rename: Option<Str>,
    pub skip: Option<Span>,
    pub default: Option<(DefaultAttr, Span)>,
    pub flatten: Option<Span>,
    pub compression: Option<Str>,
    pub storage: Option<Str>,
    pub extra: Option<Span>,
    pub keep_null: Option<Span>,
    pub with: Option<(syn::Path, Span)>,
}

/// Parses the attributes of a field and checks they go together.
pub fn field(attrs: &[Attribute], errors: &mut Errors) -> Field {
    let mut f = Field::default();
    for (item, value) in items(attrs, Place::Field, errors) {
        match item.name.as_str() {
            names::RENAME => f.rename = value,
            names::SKIP => f.skip = Some(item.span),
            names::FLATTEN => f.flatten = Some(item.span),
            names::EXTRA => f.extra = Some(item.span),
            names::KEEP_NULL => f.keep_null = Some(item.span),
            names::WITH => {
                if let Some(v) = value {
                    let lit = LitStr::new(&v.value, v.span);
                    match lit.parse::<syn::Path>() {
                        Ok(p) => f.with = Some((p, item.span)),
                        Err(_) => errors.push(
                            v.span,
                            format!(
                                "expected a path to a module, e.g. with = \"my_mod::as_text\", found `{}`",
                                v.value
                            ),
                        ),
                    }
                }
            }
            names::DEFAULT => match value {
                None => f.default = Some((DefaultAttr::Trait, item.span)),
                Some(v) => {
                    let lit = LitStr::new(&v.value, v.span);
                    match lit.parse::<syn::ExprPath>() {
                        Ok(p) => f.default = Some((DefaultAttr::Path(p), item.span)),
                        Err(_) => errors.push(
                            v.span,
                            format!(
                                "expected a path to a function, e.g. default = \"my_mod::default_value\", found `{}`",
                                v.value
                            ),
                        ),
                    }
                }
            },
            names::COMPRESSION => {
                if let Some(v) = &value {
                    if !names::COMPRESSIONS.contains(&v.value.as_str()) {
                        errors.push(
                            v.span,
                            format!(
                                "unknown compression `{}`; expected one of: {}",
                                v.value,
                                names::COMPRESSIONS.join(", ")
                            ),
                        );
                    }
                }
                f.compression = value;
            }
            names::STORAGE => {
                if let Some(v) = &value {
                    if !names::STORAGES.contains(&v.value.as_str()) {
                        errors.push(
                            v.span,
                            format!(
                                "unknown storage `{}`; expected one of: {}",
                                v.value,
                                names::STORAGES.join(", ")
                            ),
                        );
                    }
                }
                f.storage = value;
            }
            _ => {}
        }
    }
    // combinations
    let conflict = |errors: &mut Errors, span: Option<Span>, a: &str, b: &str| {
        if let Some(s) = span {
            errors.push(s, format!("`{a}` cannot be used with `{b}`"));
        }
    };
    if f.skip.is_some() {
        conflict(
            errors,
            f.rename.as_ref().map(|s| s.span),
            names::RENAME,
            names::SKIP,
        );
        conflict(errors, f.flatten, names::FLATTEN, names::SKIP);
        conflict(errors, f.extra, names::EXTRA, names::SKIP);
        conflict(errors, f.keep_null, names::KEEP_NULL, names::SKIP);
        conflict(
            errors,
            f.with.as_ref().map(|w| w.1),
            names::WITH,
            names::SKIP,
        );
        conflict(
            errors,
            f.compression.as_ref().map(|s| s.span),
            names::COMPRESSION,
            names::SKIP,
        );
        conflict(
            errors,
            f.storage.as_ref().map(|s| s.span),
            names::STORAGE,
            names::SKIP,
        );
    }
    if f.flatten.is_some() {
        conflict(
            errors,
            f.rename.as_ref().map(|s| s.span),
            names::RENAME,
            names::FLATTEN,
        );
        conflict(errors, f.extra, names::EXTRA, names::FLATTEN);
        conflict(errors, f.keep_null, names::KEEP_NULL, names::FLATTEN);
        conflict(
            errors,
            f.default.as_ref().map(|d| d.1),
            names::DEFAULT,
            names::FLATTEN,
        );
    }
    if f.extra.is_some() {
        conflict(
            errors,
            f.rename.as_ref().map(|s| s.span),
            names::RENAME,
            names::EXTRA,
        );
        conflict(errors, f.keep_null, names::KEEP_NULL, names::EXTRA);
        conflict(
            errors,
            f.with.as_ref().map(|w| w.1),
            names::WITH,
            names::EXTRA,
        );
        conflict(
            errors,
            f.default.as_ref().map(|d| d.1),
            names::DEFAULT,
            names::EXTRA,
        );
        conflict(
            errors,
            f.compression.as_ref().map(|s| s.span),
            names::COMPRESSION,
            names::EXTRA,
        );
        conflict(
            errors,
            f.storage.as_ref().map(|s| s.span),
            names::STORAGE,
            names::EXTRA,
        );
    }
    f
}
