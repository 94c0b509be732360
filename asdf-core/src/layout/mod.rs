//! Byte layout: the `#ASDF` header and comment lines, locating the YAML tree, block headers,
//! the block index and the streamed block. Bytes only, no YAML.
//!
//! [`read_layout`] locates every part of a file through a [`ReadAt`] source without reading
//! any block data: the tree is read in growing chunks until its `...` end marker, the block
//! headers are read through a windowed buffer (one positional read covers many small blocks),
//! and a block index at the end of the file is used when it agrees with the blocks it names.
//!
//! ```
//! use asdf_core::unstable::layout::{read_layout, LayoutLimits};
//! let file = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- {a: 1}\n...\n".to_vec();
//! let (layout, tree) = read_layout(&file, &LayoutLimits::default())?;
//! assert_eq!(layout.header.asdf_version.as_deref(), Some("1.0.0"));
//! assert_eq!(tree, b"%YAML 1.1\n--- {a: 1}\n...\n");
//! assert!(layout.blocks.is_empty());
//! # Ok::<(), asdf_core::unstable::layout::LayoutError>(())
//! ```

use std::io;

pub(crate) mod blocks;
pub mod fits;
pub(crate) mod index;
pub(crate) mod legacy;
mod read_at;
mod tree;

pub(crate) use blocks::{encode_block_header, read_stored_into};
#[cfg(test)] // the unit tests' names for them
pub(crate) use blocks::{parse_block_header, read_stored};
pub(crate) use index::encode_block_index;
pub use legacy::{LegacyBlock, LegacyLayout, FLAG_ENCODED};

/// The 4-byte magic that starts every block header: `\xd3BLK`.
pub const BLOCK_MAGIC: [u8; 4] = [0xd3, b'B', b'L', b'K'];

/// Size of the block header fields defined by the standard (after magic and `header_size`).
pub const MIN_BLOCK_HEADER_SIZE: u16 = 48;

/// The line that starts the block index.
pub const BLOCK_INDEX_HEADER: &[u8] = b"#ASDF BLOCK INDEX";

/// Flag bit of a streamed block.
pub const FLAG_STREAMED: u32 = 0x1;

/// Positional reads from a file, a byte buffer or a memory map; shareable across threads.
pub trait ReadAt: Send + Sync {
    /// Total length in bytes.
    fn len(&self) -> u64;
    /// Whether the source is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Fill `buf` from `offset`; an error if fewer bytes are available.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;

    /// Fill each request's buffer from its offset: `(offset, buf)` as in
    /// [`read_exact_at`](Self::read_exact_at); an error if any range is not wholly available.
    ///
    /// Callers (the region reader of [`AsdfFile`](crate::AsdfFile)) have already merged
    /// neighbouring ranges, so an implementation fetches each request as given, in any order
    /// and possibly in parallel (a remote source sends them as concurrent range requests).
    /// The default reads them one after the other with `read_exact_at`, which suits local
    /// files, byte buffers and memory maps.
    fn read_ranges_at(&self, reqs: &mut [(u64, &mut [u8])]) -> io::Result<()> {
        for (offset, buf) in reqs.iter_mut() {
            self.read_exact_at(buf, *offset)?;
        }
        Ok(())
    }

    /// Two ranges less than this many bytes apart are cheaper read as one request than as
    /// two: what a request costs, in bytes. The region reader merges neighbours closer than
    /// this. The default, 4 KiB, suits local files (a positional read costs about as much as
    /// copying a few KiB); a remote source, where a request costs a round trip, says more.
    fn merge_gap(&self) -> u64 {
        4 << 10
    }
}

/// Limits that protect the reading of a file's layout against hostile or corrupt files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutLimits {
    /// Largest YAML tree accepted, in bytes.
    pub max_tree_bytes: u64,
    /// Largest number of blocks accepted.
    pub max_blocks: usize,
}

impl Default for LayoutLimits {
    /// 2 GiB of tree and 10 million blocks.
    fn default() -> Self {
        LayoutLimits {
            max_tree_bytes: 2 << 30,
            max_blocks: 10_000_000,
        }
    }
}

/// Errors of the layout layer; every variant names the byte offset it concerns.
#[derive(Debug, thiserror::Error, PartialEq, Eq, Clone)]
#[non_exhaustive]
pub enum LayoutError {
    /// The file neither starts with `#ASDF` nor looks like a YAML text.
    #[error("not an asdf file: no `#ASDF` header and no yaml text at offset {offset}")]
    NotAsdf {
        /// Offset of the offending bytes.
        offset: u64,
    },
    /// The first line starts with `#ASDF` but is not `#ASDF major.minor.micro`.
    #[error("bad header line at offset {offset}: {line:?}")]
    BadHeaderLine {
        /// Offset of the line.
        offset: u64,
        /// The line (lossy UTF-8, at most 80 characters).
        line: String,
    },
    /// Something other than a comment line, the YAML tree or a block follows the header.
    #[error("unexpected content after the header at offset {offset}")]
    UnexpectedContent {
        /// Offset of the line.
        offset: u64,
    },
    /// The tree is larger than [`LayoutLimits::max_tree_bytes`].
    #[error("yaml tree starting at offset {offset} exceeds the limit of {limit} bytes")]
    TreeTooLarge {
        /// Offset where the tree starts.
        offset: u64,
        /// The limit in force.
        limit: u64,
    },
    /// The tree has no `...` end marker but blocks follow it.
    #[error("yaml tree starting at offset {offset} has no `...` end marker before the blocks")]
    UnterminatedTree {
        /// Offset where the tree starts.
        offset: u64,
    },
    /// A file with an `#ASDF` header whose tree has no `...` end marker: it was cut short
    /// (python asdf refuses such files too). A pure-YAML file without the header needs none.
    #[error(
        "yaml tree starting at offset {offset} has no `...` end marker; the file ends at offset {file_len} (truncated?)"
    )]
    TruncatedTree {
        /// Offset where the tree starts.
        offset: u64,
        /// The file's length.
        file_len: u64,
    },
    /// Expected the block magic `\xd3BLK`.
    #[error("no block magic at offset {offset}")]
    BadBlockMagic {
        /// Offset where the magic was expected.
        offset: u64,
    },
    /// The file ends inside a block header.
    #[error("block {index} at offset {offset}: header truncated, needs {needed} bytes, {available} available")]
    BlockHeaderTooShort {
        /// Block position in file order.
        index: usize,
        /// Offset of the block magic.
        offset: u64,
        /// Bytes the header needs (magic and size included).
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// `header_size` is below 48.
    #[error("block {index} at offset {offset}: header_size {header_size} is below 48")]
    HeaderSizeTooSmall {
        /// Block position in file order.
        index: usize,
        /// Offset of the block magic.
        offset: u64,
        /// The stored `header_size`.
        header_size: u16,
    },
    /// In a file headed `#ASDF 0.1.0`, a `header_size` below 48 that is none of the legacy
    /// layouts (36, 40, 44); from `parse_legacy_block_header`, any size that is not one.
    #[error("block {index} at offset {offset}: header_size {header_size} is no asdf 0.1.0 block layout (36, 40 or 44 bytes) nor the 1.x one (48 or more)")]
    NotLegacyHeaderSize {
        /// Block position in file order.
        index: usize,
        /// Offset of the block magic.
        offset: u64,
        /// The stored `header_size`.
        header_size: u16,
    },
    /// A 36-byte (draft 0.1.0) block header with both STREAMED and ENCODED set, which the
    /// draft forbids.
    #[error("block {index} at offset {offset}: the streamed and encoded flags are both set")]
    LegacyStreamedEncoded {
        /// Block position in file order.
        index: usize,
        /// Offset of the block magic.
        offset: u64,
    },
    /// The block's allocated space runs past the end of the file.
    #[error("block {index} at offset {offset}: allocated space ends at {end}, past the end of the file ({file_len} bytes)")]
    BlockOutOfBounds {
        /// Block position in file order.
        index: usize,
        /// Offset of the block magic.
        offset: u64,
        /// Claimed end of the allocated space (saturated at `u64::MAX`).
        end: u64,
        /// File length.
        file_len: u64,
    },
    /// Inconsistent sizes: used > allocated, or used != data without compression.
    #[error("block {index} at offset {offset}: inconsistent sizes (allocated {allocated}, used {used}, data {data})")]
    BadSizes {
        /// Block position in file order.
        index: usize,
        /// Offset of the block magic.
        offset: u64,
        /// `allocated_size`.
        allocated: u64,
        /// `used_size`.
        used: u64,
        /// `data_size`.
        data: u64,
    },
    /// More blocks than [`LayoutLimits::max_blocks`].
    #[error("more than {limit} blocks (block at offset {offset})")]
    TooManyBlocks {
        /// Offset of the first block over the limit.
        offset: u64,
        /// The limit in force.
        limit: usize,
    },
    /// A block does not agree with the block index that names it (found when the block is
    /// first used, for a file whose block headers are read lazily).
    #[error("block {index} at offset {offset} does not agree with the block index: {reason}")]
    IndexMismatch {
        /// Block position in the index.
        index: usize,
        /// Offset of the block as the index gives it.
        offset: u64,
        /// What disagrees.
        reason: &'static str,
    },
    /// A buffer does not match the size it must have.
    #[error("buffer of {actual} bytes where {expected} are needed (block at offset {offset})")]
    BufferSize {
        /// Offset of the block magic.
        offset: u64,
        /// Needed length.
        expected: u64,
        /// Given length.
        actual: u64,
    },
    /// The size does not fit in this platform's address space.
    #[error("{size} bytes at offset {offset} do not fit in memory on this platform")]
    TooLargeForPlatform {
        /// Offset of the data.
        offset: u64,
        /// The size.
        size: u64,
    },
    /// An I/O error from the source.
    #[error("i/o error at offset {offset}: {message}")]
    Io {
        /// Offset of the failed read.
        offset: u64,
        /// The error kind.
        kind: io::ErrorKind,
        /// The error message.
        message: String,
    },
}

impl LayoutError {
    pub(crate) fn io(offset: u64, e: &io::Error) -> Self {
        LayoutError::Io {
            offset,
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

/// The `#ASDF` header lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// Version on `#ASDF x.y.z`; `None` for a pure YAML file.
    pub asdf_version: Option<String>,
    /// Version on `#ASDF_STANDARD x.y.z`, if present.
    pub standard_version: Option<String>,
    /// Every `#` comment line after the first, without the newline.
    pub comments: Vec<String>,
}

/// One block header as stored (sizes of a streamed block filled in with its real length).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockHeader {
    /// Position in file order (0-based).
    pub index: usize,
    /// File offset of the block magic.
    pub offset: u64,
    /// `header_size` field (bytes after the 6-byte magic+size prefix).
    pub header_size: u16,
    /// Flags (0x1 = streamed).
    pub flags: u32,
    /// 4-byte compression label, zeros for none.
    pub compression: [u8; 4],
    /// Allocated size.
    pub allocated_size: u64,
    /// Used (stored) size.
    pub used_size: u64,
    /// Decoded size.
    pub data_size: u64,
    /// MD5, all zeros for none.
    pub checksum: [u8; 16],
}

impl BlockHeader {
    /// File offset of the first data byte (`offset + 6 + header_size`).
    pub fn data_offset(&self) -> u64 {
        self.offset
            .saturating_add(6)
            .saturating_add(u64::from(self.header_size))
    }

    /// File offset just past the allocated space (`data_offset + allocated_size`).
    pub fn end_offset(&self) -> u64 {
        self.data_offset().saturating_add(self.allocated_size)
    }

    /// Whether the streamed flag (0x1) is set.
    pub fn is_streamed(&self) -> bool {
        self.flags & FLAG_STREAMED != 0
    }

    /// Whether the checksum is not all zeros.
    pub fn has_checksum(&self) -> bool {
        self.checksum != [0; 16]
    }

    /// The compression label, `None` when it is all zeros.
    pub fn compression_label(&self) -> Option<[u8; 4]> {
        (self.compression != [0; 4]).then_some(self.compression)
    }
}

/// The located parts of a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Header lines.
    pub header: Header,
    /// Byte range of the YAML tree (start inclusive, end exclusive), if there is one.
    pub tree: Option<(u64, u64)>,
    /// Blocks in file order.
    pub blocks: Vec<BlockHeader>,
    /// Offset of the `#ASDF BLOCK INDEX` line when a valid index was found and used.
    pub block_index: Option<u64>,
    /// For a file headed `#ASDF 0.1.0`, one entry per block: its legacy header fields when
    /// the block uses a legacy layout ([`LegacyLayout`]). Empty for every other file.
    pub legacy: Vec<Option<LegacyBlock>>,
}

impl Layout {
    /// Whether the file is headed `#ASDF 0.1.0` (legacy tags, `dtype`, block layouts).
    pub fn is_legacy(&self) -> bool {
        self.header.asdf_version.as_deref() == Some("0.1.0")
    }

    /// The legacy header fields of block `index`, when it uses a legacy layout.
    pub fn legacy_block(&self, index: usize) -> Option<&LegacyBlock> {
        self.legacy.get(index).and_then(Option::as_ref)
    }
}

/// Locate the header, the tree and every block of `src`, and return the tree's bytes.
///
/// The tree bytes are exactly the YAML document text, from `%YAML` (or `---`) up to and
/// including the `...` line (empty when there is no tree). No block data is read.
#[doc(hidden)] // plumbing: asdf_core::unstable
pub fn read_layout(
    src: &dyn ReadAt,
    limits: &LayoutLimits,
) -> Result<(Layout, Vec<u8>), LayoutError> {
    let file_len = src.len();
    let located = tree::locate(src, file_len, limits)?;
    let mut layout = Layout {
        header: located.header,
        tree: located.tree,
        blocks: Vec::new(),
        block_index: None,
        legacy: Vec::new(),
    };
    if let Some(first) = located.first_block {
        if layout.is_legacy() {
            let (blocks, legacy) = blocks::walk_legacy(src, file_len, first, limits)?;
            layout.blocks = blocks;
            layout.legacy = legacy;
        } else {
            let (blocks, index) = blocks::locate_blocks(src, file_len, first, limits)?;
            layout.blocks = blocks;
            layout.block_index = index;
        }
    }
    Ok((layout, located.tree_bytes))
}

/// As [`read_layout`], except that when the file has a plausible block index whose first and
/// last blocks agree with it, the block headers are not read: `Layout::blocks` is empty,
/// `Layout::block_index` is set, and the returned [`blocks::LazyBlocks`] reads each header
/// (and checks it against the index) when it is first asked for. Otherwise as
/// [`read_layout`], with `None`.
pub(crate) fn read_layout_lazy(
    src: &dyn ReadAt,
    limits: &LayoutLimits,
) -> Result<(Layout, Vec<u8>, Option<blocks::LazyBlocks>), LayoutError> {
    let file_len = src.len();
    let located = tree::locate(src, file_len, limits)?;
    let mut layout = Layout {
        header: located.header,
        tree: located.tree,
        blocks: Vec::new(),
        block_index: None,
        legacy: Vec::new(),
    };
    let mut lazy = None;
    if let Some(first) = located.first_block {
        if layout.is_legacy() {
            let (blocks, legacy) = blocks::walk_legacy(src, file_len, first, limits)?;
            layout.blocks = blocks;
            layout.legacy = legacy;
        } else {
            let found = blocks::find_block_index(src, file_len, first, limits)?;
            lazy = blocks::lazy_from_index(src, file_len, first, limits, found.as_ref());
            match &lazy {
                Some(l) => layout.block_index = Some(l.index_offset()),
                None => {
                    let (blocks, index) =
                        blocks::locate_with_index(src, file_len, first, limits, found)?;
                    layout.blocks = blocks;
                    layout.block_index = index;
                }
            }
        }
    }
    Ok((layout, located.tree_bytes, lazy))
}

/// A positional-read window over a source: one read serves many small requests.
pub(crate) struct Window<'a> {
    src: &'a dyn ReadAt,
    file_len: u64,
    start: u64,
    buf: Vec<u8>,
}

/// Large window read size, for many small blocks.
pub(crate) const WINDOW_BIG: usize = 1 << 20;
/// Small window read size, for sparse headers of large blocks.
pub(crate) const WINDOW_SMALL: usize = 4 << 10;

impl<'a> Window<'a> {
    pub(crate) fn new(src: &'a dyn ReadAt, file_len: u64) -> Self {
        Window {
            src,
            file_len,
            start: 0,
            buf: Vec::new(),
        }
    }

    /// Up to `len` bytes at `offset` (fewer at the end of the file); a refill reads at least
    /// `chunk` bytes.
    pub(crate) fn get(
        &mut self,
        offset: u64,
        len: usize,
        chunk: usize,
    ) -> Result<&[u8], LayoutError> {
        let avail = self.file_len.saturating_sub(offset);
        let len = usize::try_from(avail).map_or(len, |a| a.min(len));
        let in_window = offset >= self.start
            && offset
                .checked_sub(self.start)
                .and_then(|d| usize::try_from(d).ok())
                .and_then(|d| d.checked_add(len))
                .is_some_and(|e| e <= self.buf.len());
        if !in_window {
            let want = len.max(chunk);
            let want = usize::try_from(avail).map_or(want, |a| a.min(want));
            // Keeps the old bytes (overwritten by the read) so a refill of the same size
            // zeroes nothing; only growth is zeroed.
            self.buf.resize(want, 0);
            self.src
                .read_exact_at(&mut self.buf, offset)
                .map_err(|e| LayoutError::io(offset, &e))?;
            self.start = offset;
        }
        let rel = usize::try_from(offset - self.start).unwrap_or(usize::MAX);
        self.buf
            .get(rel..rel.saturating_add(len))
            .ok_or(LayoutError::TooLargeForPlatform {
                offset,
                size: len as u64,
            })
    }
}

#[cfg(test)]
mod tests;
