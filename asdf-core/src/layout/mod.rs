//! Byte layout: the `#ASDF` header and comment lines, locating the YAML tree, block headers,
//! the block index and the streamed block. Bytes only, no YAML.
//!
//! CONTRACT (owned by the layout helper; replace the stubs, keep the signatures or tell the
//! lead what changed).

use std::io;

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
}

/// Errors of the layout layer.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum LayoutError {
    /// Placeholder until implemented.
    #[error("not implemented")]
    Todo,
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

/// The located parts of a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Header lines.
    pub header: Header,
    /// Byte range of the YAML tree (start inclusive, end exclusive), if there is one.
    pub tree: Option<(u64, u64)>,
    /// Blocks in file order.
    pub blocks: Vec<BlockHeader>,
}
