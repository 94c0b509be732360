//! What the writer writes, block by block: the data of each block (borrowed, owned, or
//! produced by pieces), its codec, and the stored bytes to copy from a source file. Made by
//! `prepare` (and the asdf-zarr writer), checked by `portable`, written by `file_writer`.

use std::fs::File;
use std::sync::Arc;

use super::pieces::PieceSpec;
use crate::codec::Compression;

/// Bytes of one block: borrowed from the caller or the source file, or owned.
pub(crate) enum BlockData<'w> {
    Slice(&'w [u8]),
    Owned(Vec<u8>),
    /// Produced piece by piece while written ([`Writer::add_array_pieces`](super::Writer::add_array_pieces)).
    Pieces(&'w PieceSpec),
}

impl BlockData<'_> {
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            BlockData::Slice(s) => s,
            BlockData::Owned(v) => v,
            BlockData::Pieces(_) => &[],
        }
    }
}

/// One block to write.
pub(crate) struct BlockJob<'w> {
    /// The decoded data (empty when `stored` is given).
    pub data: BlockData<'w>,
    pub compression: Option<Compression>,
    /// Stored bytes copied from the source file as they are (when given, the header's sizes
    /// and checksum come from here, and `data` is only a fallback source for them).
    pub copy: Option<CopyRange>,
    /// The source file's block this job reproduces unchanged, if any.
    pub origin: Option<usize>,
    /// Bytes per item of the array (codecs that shuffle use it; 1 when unknown).
    pub typesize: usize,
}

impl<'w> BlockJob<'w> {
    pub(crate) fn new(data: BlockData<'w>, compression: Option<Compression>) -> Self {
        BlockJob {
            data,
            compression,
            copy: None,
            origin: None,
            typesize: 1,
        }
    }
}

/// A source block's stored bytes, to be copied unchanged (by the kernel where it can).
pub(crate) struct CopyRange {
    /// The source file, opened again for reading.
    pub file: Arc<File>,
    /// File offset of the first stored byte.
    pub offset: u64,
    /// Number of stored bytes (`used_size`).
    pub len: u64,
    /// The block's decoded size (`data_size`).
    pub data_size: u64,
    /// The block's checksum as stored (zeros: none).
    pub checksum: [u8; 16],
    /// The block's compression (to tell a legacy checksum of the decoded data from damage).
    pub compression: Option<Compression>,
}
