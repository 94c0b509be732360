//! Errors of typed conversion.

use super::TreePath;

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
    /// An array node or its data is malformed, or its data cannot be stored inline or
    /// typed as asked.
    #[error("{}", crate::display_chain(&**.0))]
    Array(#[source] Box<crate::array::ArrayError>),
    /// The file failed to load an array's data (an i/o, codec or checksum error, a block
    /// or external file that is not there, ...). The message is the file's error; the error
    /// itself is not kept here, so that this layer never holds the crate's top-level
    /// [`crate::Error`]: [`AsdfFile::read_as`](crate::AsdfFile::read_as) reports it as
    /// [`crate::Error::Load`], with this path.
    #[error("{0}")]
    Load(String),
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

/// A conversion error at a tree path. A schema error at the root of the value is displayed
/// without a path of its own (its problems carry theirs).
#[derive(Debug, thiserror::Error)]
#[error("{}{kind}", if matches!(kind, ConvertErrorKind::Schema { .. }) && path.is_root() { String::new() } else { format!("{path}: ") })]
pub struct ConvertError {
    /// Where the node is (displayed as its JSON pointer).
    pub path: TreePath,
    /// What went wrong.
    pub kind: ConvertErrorKind,
}

impl ConvertError {
    /// An error at `path` (a [`TreePath`], or a JSON pointer as text).
    pub fn new(path: impl Into<TreePath>, kind: ConvertErrorKind) -> Self {
        ConvertError {
            path: path.into(),
            kind,
        }
    }

    /// A custom error at `path`.
    pub fn custom(path: impl Into<TreePath>, msg: impl std::fmt::Display) -> Self {
        ConvertError::new(path, ConvertErrorKind::Custom(msg.to_string()))
    }
}
