//! Where and how array data is stored when written: compression, storage mode, per-array
//! overrides.

use crate::codec::Compression;

/// Compression of written blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompressionChoice {
    /// Stored uncompressed.
    #[default]
    None,
    /// Compressed with this codec.
    Codec(Compression),
    /// The codec the array's block had in the source file (uncompressed for new arrays).
    /// The data is re-encoded with that codec.
    Input,
}

/// Where array data goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Storage {
    /// Where the array already is (the default): an array of a tree read from a file keeps
    /// its place when the tree is written again (inline data stays inline, a block stays a
    /// block, an array in an external file stays in an external file, written beside the
    /// new file); a new array, or one whose place cannot be kept (an external array written
    /// to memory, inline data python asdf cannot read inline), goes to a block. This is how
    /// [`update`](crate::write::update) and [`update_at`](crate::update_at) keep the rest
    /// of a file as it is, as python asdf's `AsdfFile.update` does.
    #[default]
    Input,
    /// A binary block of the file.
    Internal,
    /// Nested lists in the YAML tree.
    Inline,
    /// Inline for arrays of at most this many elements, internal otherwise.
    InlineUpTo(usize),
    /// A separate ASDF file `NAME0000.asdf` beside the main file (only with
    /// `Writer::write_to_path`).
    External,
}

/// Per-array overrides of the writer's options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArrayOptions {
    /// Compression of this array's block (`None`: the writer's default).
    pub compression: Option<CompressionChoice>,
    /// Storage of this array (`None`: the writer's default).
    pub storage: Option<Storage>,
}
