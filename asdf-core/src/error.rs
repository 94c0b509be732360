//! The crate's top-level error.

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every error of the crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Placeholder.
    #[error("not implemented")]
    Todo,
}
