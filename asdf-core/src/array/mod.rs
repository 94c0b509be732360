//! ndarray descriptors and binding of block bytes or inline data to `ndarray` arrays.
//!
//! CONTRACT (owned by the array helper).

/// Errors of the array layer.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArrayError {
    /// Placeholder until implemented.
    #[error("not implemented")]
    Todo,
}
