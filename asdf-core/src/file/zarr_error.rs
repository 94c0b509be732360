//! What is wrong with an asdf-zarr node ([`ZarrError`]), apart from the reader of such nodes
//! (`file/zarr.rs`): the crate's [`Error`](crate::Error) holds it, and the reader returns
//! that `Error`, so the two would otherwise import each other.

use crate::codec::CodecError;

/// What is wrong with an asdf-zarr node (the tree path is in [`Error::Zarr`](crate::Error::Zarr)).
#[derive(Debug, thiserror::Error, PartialEq, Eq, Clone)]
#[non_exhaustive]
pub enum ZarrError {
    /// A `.zarray` field is missing or not what zarr v2 allows.
    #[error("bad zarr metadata `{key}`: {message}")]
    BadMetadata {
        /// The key (`.zarray/shape`, `chunk_block_map`, ...).
        key: String,
        /// What is wrong.
        message: String,
    },
    /// The array's chunks live in a zarr store outside the ASDF file.
    #[error("the zarr chunks are in an external {store} store, which is not read")]
    ExternalStore {
        /// The store's `type_string` (`DirectoryStore`, `FSStore`, ...).
        store: String,
    },
    /// A chunk compressor (numcodecs id) this library has no codec for.
    #[error("zarr compressor `{id}` is not supported (zlib, gzip, bz2, zstd, lz4 and blosc are)")]
    UnsupportedCompressor {
        /// The numcodecs id.
        id: String,
    },
    /// A zarr filter: none is read.
    #[error("zarr filter `{id}` is not supported")]
    UnsupportedFilter {
        /// The numcodecs id.
        id: String,
    },
    /// The chunk map's block does not hold one int32 per chunk.
    #[error("chunk_block_map block {block} holds {found} bytes, {expected} expected (one int32 for each of the {chunks} chunks)")]
    ChunkMapSize {
        /// The block.
        block: usize,
        /// Its decoded size.
        found: u64,
        /// Four bytes per chunk.
        expected: u64,
        /// Chunks in the grid.
        chunks: u64,
    },
    /// An entry of the chunk map names no block of the file.
    #[error("chunk {chunk:?} maps to block {block}, but the file has {count} blocks")]
    NoSuchChunkBlock {
        /// The chunk's grid position.
        chunk: Vec<usize>,
        /// The entry.
        block: i64,
        /// Blocks in the file.
        count: usize,
    },
    /// A chunk's bytes are not the size of a chunk.
    #[error("chunk {chunk:?} (block {block}) holds {found} bytes, a chunk is {expected}")]
    ChunkSize {
        /// The chunk's grid position.
        chunk: Vec<usize>,
        /// Its block.
        block: usize,
        /// Its size.
        found: u64,
        /// A chunk's size.
        expected: u64,
    },
    /// A chunk does not decode.
    #[error("chunk {chunk:?} (block {block}): {compressor}: {source}")]
    Codec {
        /// The chunk's grid position.
        chunk: Vec<usize>,
        /// Its block.
        block: usize,
        /// The compressor's numcodecs id.
        compressor: String,
        /// What the codec said.
        source: CodecError,
    },
}
