//! Compression codecs, selected by the block header's 4-byte label.
//!
//! CONTRACT (owned by the codec helper).

/// Errors of the codec layer.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodecError {
    /// Placeholder until implemented.
    #[error("not implemented")]
    Todo,
}
