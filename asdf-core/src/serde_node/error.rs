//! The error of the serde bridge: what went wrong and where in the tree.

use std::fmt;

use crate::convert::{ConvertError, ConvertErrorKind, PathSegment, TreePath};

/// What went wrong converting between a serde type and [`Node`](crate::Node)s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SerdeErrorKind {
    /// The node holds the wrong kind of value for the type (serde's "invalid type").
    #[error("invalid type: {found}, expected {expected}")]
    InvalidType {
        /// What the node holds (`integer \`5\``, `a sequence`, …).
        found: String,
        /// What the type needs.
        expected: String,
    },
    /// A mapping lacks a field the type requires.
    #[error("missing field `{0}`")]
    MissingField(&'static str),
    /// An integer does not fit the Rust type it is read into.
    #[error("{value} does not fit in {ty}")]
    OutOfRange {
        /// The integer as written.
        value: String,
        /// The Rust type (`u8`, `i64`, …).
        ty: &'static str,
    },
    /// A [`Value::Recursive`](crate::Value::Recursive) alias: a cycle has no serde form.
    #[error("recursive alias *{0} cannot be read as serde data")]
    Recursive(String),
    /// Any other message, from serde (`unknown variant …`, `invalid length …`) or from user
    /// code (`Error::custom`).
    #[error("{0}")]
    Custom(String),
}

/// An error of [`to_node`](super::to_node) or [`from_node`](super::from_node): the kind and the
/// tree path (a JSON pointer relative to the node converted) where it happened.
///
/// Displays as `PATH: MESSAGE`, e.g. `/items/2/count: 300 does not fit in u8`.
#[derive(Clone, PartialEq, Eq)]
pub struct SerdeError(Box<Inner>);

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    kind: SerdeErrorKind,
    /// Path segments from the innermost outwards (pushed while the error travels up).
    rev_path: Vec<PathSegment>,
}

impl SerdeError {
    /// An error of `kind` at the node being converted (the path grows as the error travels
    /// up through the enclosing sequences and mappings).
    pub fn new(kind: SerdeErrorKind) -> Self {
        SerdeError(Box::new(Inner {
            kind,
            rev_path: Vec::new(),
        }))
    }

    /// What went wrong.
    pub fn kind(&self) -> &SerdeErrorKind {
        &self.0.kind
    }

    /// The tree path of the failing node as a JSON pointer (`/items/2/count`; `/` for the
    /// node converted itself).
    pub fn path(&self) -> String {
        self.tree_path().to_string()
    }

    /// The tree path of the failing node (relative to the node converted).
    pub fn tree_path(&self) -> TreePath {
        TreePath::from(self.0.rev_path.iter().rev().cloned().collect::<Vec<_>>())
    }

    /// Converts into a typed-layer error whose path is `base` (a JSON pointer, `/` or empty
    /// for the root) joined with this error's path.
    pub fn into_convert_error(self, base: &str) -> ConvertError {
        let path = TreePath::parse(base).join(&self.tree_path());
        let kind = match self.0.kind {
            SerdeErrorKind::InvalidType { found, expected } => {
                ConvertErrorKind::Expected { expected, found }
            }
            SerdeErrorKind::MissingField(f) => ConvertErrorKind::MissingKey(f.to_string()),
            SerdeErrorKind::OutOfRange { value, ty } => ConvertErrorKind::OutOfRange { value, ty },
            other @ (SerdeErrorKind::Recursive(_) | SerdeErrorKind::Custom(_)) => {
                ConvertErrorKind::Custom(other.to_string())
            }
        };
        ConvertError::new(path, kind)
    }

    /// Adds the step `seg` in front of the path (the error came from inside it).
    pub(super) fn within(mut self, seg: PathSegment) -> Self {
        self.0.rev_path.push(seg);
        self
    }

    pub(super) fn custom_msg(msg: impl fmt::Display) -> Self {
        SerdeError::new(SerdeErrorKind::Custom(msg.to_string()))
    }
}

impl fmt::Display for SerdeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path(), self.0.kind)
    }
}

impl fmt::Debug for SerdeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SerdeError")
            .field("path", &self.path())
            .field("kind", &self.0.kind)
            .finish()
    }
}

impl std::error::Error for SerdeError {}

impl serde::ser::Error for SerdeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SerdeError::custom_msg(msg)
    }
}

impl serde::de::Error for SerdeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SerdeError::custom_msg(msg)
    }

    fn invalid_type(unexp: serde::de::Unexpected<'_>, exp: &dyn serde::de::Expected) -> Self {
        SerdeError::new(SerdeErrorKind::InvalidType {
            found: unexp.to_string(),
            expected: exp.to_string(),
        })
    }

    fn missing_field(field: &'static str) -> Self {
        SerdeError::new(SerdeErrorKind::MissingField(field))
    }
}

/// The typed-layer error at this error's path (relative to the root).
impl From<SerdeError> for ConvertError {
    fn from(e: SerdeError) -> Self {
        e.into_convert_error("/")
    }
}

/// The library error [`crate::Error::Typed`] at this error's path.
impl From<SerdeError> for crate::Error {
    fn from(e: SerdeError) -> Self {
        crate::Error::Typed(e.into())
    }
}
