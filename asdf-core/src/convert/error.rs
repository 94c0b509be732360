//! Errors of typed conversion.

/// What went wrong converting between a node and a Rust value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertErrorKind {
    /// The node has the wrong kind of value.
    #[error("expected {expected}, found {found}")]
    Expected {
        /// What the type needs (`an integer`, `a mapping`, …).
        expected: String,
        /// What the node holds.
        found: String,
    },
    /// A mapping lacks a key the type requires.
    #[error("missing key `{0}`")]
    MissingKey(String),
    /// The node's tag is not one the type reads.
    #[error("tag {} is not accepted (expected {expected})", found.as_deref().unwrap_or("(none)"))]
    Tag {
        /// The accepted tag or pattern.
        expected: String,
        /// The node's tag.
        found: Option<String>,
    },
    /// A number does not fit the Rust type.
    #[error("{value} does not fit in {ty}")]
    OutOfRange {
        /// The value as written.
        value: String,
        /// The Rust type.
        ty: &'static str,
    },
    /// No enum variant matches the node.
    #[error("no variant of {ty} matches {found}")]
    NoVariant {
        /// The enum type.
        ty: &'static str,
        /// The node's value or tag.
        found: String,
    },
    /// A sequence has the wrong length for a tuple or fixed-size type.
    #[error("expected {expected} items, found {found}")]
    Length {
        /// The length the type needs.
        expected: usize,
        /// The sequence's length.
        found: usize,
    },
    /// Loading, storing or typing an array failed.
    #[error("{}", crate::display_chain(&**.0))]
    Array(Box<crate::Error>),
    /// The node does not validate against the type's schema.
    #[error("does not validate against {schema}: {}", problems.join("; "))]
    Schema {
        /// The schema's URI.
        schema: String,
        /// The problems, each as `PATH: KEYWORD: MESSAGE` with the tree path from the root
        /// of the file on read, and from the root of the value being converted on write
        /// (where the value will go in the file is not known yet).
        problems: Vec<String>,
    },
    /// An error raised by user code (serde bridge, custom conversions).
    #[error("{0}")]
    Custom(String),
}

/// A conversion error at a tree path. `{:?}` is the message (see [`crate::Error`]). A
/// schema error at the root of the value is displayed without a path of its own (its
/// problems carry theirs).
#[derive(thiserror::Error)]
#[error("{}{kind}", if matches!(kind, ConvertErrorKind::Schema { .. }) && (path.is_empty() || path == "/") { String::new() } else { format!("{path}: ") })]
pub struct ConvertError {
    /// JSON pointer of the node.
    pub path: String,
    /// What went wrong.
    pub kind: ConvertErrorKind,
}

impl std::fmt::Debug for ConvertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::error::debug_text(self, f)
    }
}

impl ConvertError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, kind: ConvertErrorKind) -> Self {
        ConvertError {
            path: path.into(),
            kind,
        }
    }

    /// A custom error at `path`.
    pub fn custom(path: impl Into<String>, msg: impl std::fmt::Display) -> Self {
        ConvertError::new(path, ConvertErrorKind::Custom(msg.to_string()))
    }
}
