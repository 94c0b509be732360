//! ndarray descriptors and binding of block bytes or inline data to `ndarray` arrays.
//!
//! The layer sits above [`crate::yaml`] and below [`crate::file`]. It never reads files or
//! blocks itself: the file layer parses an ndarray node into an [`NdArrayMeta`], finds the
//! bytes of the block it names, and binds them (`from_block`; `from_inline` for data in the
//! tree; both in `asdf_core::unstable`, for the crates of asdf-rs). The result is a [`DynArray`]: the
//! elements, C-contiguous, in the datatype's own byte order, from which typed [`ndarray`]
//! arrays, strings, record fields and the canonical hash (docs/canonical.md, `sha256`) are taken.
//!
//! ```
//! use asdf_core::array::NdArrayMeta;
//! use asdf_core::unstable::from_block;
//! use asdf_core::yaml::{Integer, Node, Value};
//!
//! let int = |v| Node::new(Value::Int(Integer::Small(v)));
//! let node = Node::new(Value::Map(vec![
//!     (Node::str("source"), int(0)),
//!     (Node::str("datatype"), Node::str("int16")),
//!     (Node::str("byteorder"), Node::str("big")),
//!     (Node::str("shape"), Node::new(Value::Seq(vec![int(2)]))),
//! ]));
//! let meta = NdArrayMeta::from_node(&node, "/data")?;
//! let arr = from_block(&meta, &[0, 1, 1, 0], "/data")?;
//! assert_eq!(arr.to_array::<i16>()?.into_raw_vec_and_offset().0, vec![1, 256]);
//! # Ok::<(), asdf_core::array::ArrayError>(())
//! ```

mod access;
pub(crate) mod bind;
mod dtype;
mod element;
pub(crate) mod inline;
mod meta;
mod owned;
mod placement;
pub mod selection;
pub(crate) mod to_node;
mod value_hash;

#[cfg(test)]
mod oracle_tests;

pub use crate::codec::Compression;
pub use bind::MAX_EXPANDED_BYTES;
pub(crate) use bind::{from_block, view};
pub use dtype::{ByteOrder, DType, Field, ScalarType};
pub use element::Element;
pub use inline::MAX_INLINE_BYTES;
pub(crate) use inline::{from_inline, inline_null_mask};
pub use meta::{ArraySource, Dim, NdArrayMeta};
pub use owned::WriteArray;
pub use placement::{ArrayOptions, CompressionChoice, Storage};
pub use selection::{AxisRange, SelItem, Selection, SelectionError};
pub(crate) use to_node::inline_node;

/// Errors of the array layer. Each error of a descriptor or its data names the tree path of
/// the ndarray node (`path`) and, where one is at fault, the key.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArrayError {
    /// A required key is absent.
    #[error("{path}: missing key `{key}`")]
    MissingKey {
        /// Tree path of the node that lacks the key.
        path: crate::yaml::TreePath,
        /// The key.
        key: String,
    },
    /// A key has a value of the wrong type or out of range.
    #[error("{path}: bad `{key}`: {message}")]
    BadValue {
        /// Tree path of the node holding the key.
        path: crate::yaml::TreePath,
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A `datatype` that is not one of the ASDF datatypes.
    #[error("{path}: unknown datatype {datatype}")]
    UnknownDatatype {
        /// Tree path of the datatype.
        path: crate::yaml::TreePath,
        /// The datatype as written.
        datatype: String,
    },
    /// The array addresses bytes past the end of its block.
    #[error("{path}: array needs {needed_end} bytes of its block but the block has {block_len}")]
    OutOfBounds {
        /// Tree path of the ndarray.
        path: crate::yaml::TreePath,
        /// One past the last byte the array addresses.
        needed_end: u64,
        /// Length of the block.
        block_len: u64,
    },
    /// Negative strides make the array address bytes before the start of its block.
    #[error("{path}: array addresses byte {start} before the start of its block")]
    BeforeStart {
        /// Tree path of the ndarray.
        path: crate::yaml::TreePath,
        /// The (negative) byte position addressed.
        start: i64,
    },
    /// Shape, strides or sizes overflow 64-bit arithmetic.
    #[error("{path}: array size overflows")]
    ShapeOverflow {
        /// Tree path of the ndarray.
        path: crate::yaml::TreePath,
    },
    /// The array would need more memory than this layer allows.
    #[error("{path}: array of {bytes} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Tree path of the ndarray.
        path: crate::yaml::TreePath,
        /// Bytes the array would need.
        bytes: u128,
        /// The limit.
        limit: u64,
    },
    /// The requested element type does not match the array's datatype.
    #[error("datatype mismatch: expected {expected}, found {found}")]
    DTypeMismatch {
        /// What the caller asked for.
        expected: String,
        /// The array's datatype.
        found: String,
    },
    /// Inline data whose nested lists do not form a rectangular array.
    #[error("{path}: ragged inline data: {message}")]
    Ragged {
        /// Tree path of the offending list.
        path: crate::yaml::TreePath,
        /// What is wrong.
        message: String,
    },
    /// Inline data with a value that cannot be converted to the datatype.
    #[error("{path}: inline value {message}")]
    InlineValue {
        /// Tree path of the value.
        path: crate::yaml::TreePath,
        /// What is wrong.
        message: String,
    },
    /// The declared `shape` does not match the inline data.
    #[error("{path}: shape {declared:?} does not match inline data of shape {actual:?}")]
    ShapeMismatch {
        /// Tree path of the ndarray.
        path: crate::yaml::TreePath,
        /// The `shape` key (`None` for `*`).
        declared: Vec<Option<u64>>,
        /// The shape of the data.
        actual: Vec<u64>,
    },
    /// The operation needs another kind of array source.
    #[error("{path}: {message}")]
    WrongSource {
        /// Tree path of the ndarray.
        path: crate::yaml::TreePath,
        /// What is wrong.
        message: String,
    },
    /// A ucs4 element holds a value that is not a Unicode scalar value.
    #[error("invalid ucs4 code point {code:#x}")]
    InvalidCodePoint {
        /// The offending code unit.
        code: u32,
    },
    /// A record has no field of this name.
    #[error("no field `{name}` in datatype {dtype}")]
    NoSuchField {
        /// The requested name.
        name: String,
        /// The array's datatype.
        dtype: String,
    },
}

/// An array materialized in memory: its datatype, its shape, and its elements in C order,
/// each in the datatype's own byte order, records packed without padding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynArray {
    /// Element datatype (byte order included).
    pub dtype: DType,
    /// Shape; empty for a 0-d array.
    pub shape: Vec<usize>,
    /// `element_count() * dtype.itemsize()` bytes.
    pub data: Vec<u8>,
}

impl DynArray {
    /// Number of elements (product of the shape; 1 for 0-d).
    pub fn element_count(&self) -> usize {
        self.shape
            .iter()
            .fold(1usize, |acc, &d| acc.saturating_mul(d))
    }

    /// Length of the first axis (0 for a 0-d array, as it has no axis).
    pub fn len(&self) -> usize {
        self.shape.first().copied().unwrap_or(0)
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.element_count() == 0
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
}
