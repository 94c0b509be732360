//! Block headers: parsing, encoding, walking, checking the block index, reading stored bytes.

use super::index::{find_index, parse_index};
use super::legacy::{parse_legacy_at, LegacyBlock};
use super::{
    BlockHeader, LayoutError, LayoutLimits, ReadAt, Window, BLOCK_MAGIC, MIN_BLOCK_HEADER_SIZE,
    WINDOW_BIG, WINDOW_SMALL,
};

/// Bytes before the header fields: magic and `header_size`.
const PREFIX: u64 = 6;

fn be_u64(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(s) = bytes.get(at..at + 8) {
        b.copy_from_slice(s);
    }
    u64::from_be_bytes(b)
}

/// Parse a block header from `bytes`, which start at the block magic found at file offset
/// `offset`. Sizes are returned as stored (a streamed block's are usually 0); `index` is 0.
pub fn parse_block_header(bytes: &[u8], offset: u64) -> Result<BlockHeader, LayoutError> {
    parse_at(bytes, offset, 0)
}

fn parse_at(bytes: &[u8], offset: u64, index: usize) -> Result<BlockHeader, LayoutError> {
    let short = |needed: u64| LayoutError::BlockHeaderTooShort {
        index,
        offset,
        needed,
        available: bytes.len() as u64,
    };
    if bytes.len() < 4 {
        return Err(if BLOCK_MAGIC.starts_with(bytes) {
            short(PREFIX)
        } else {
            LayoutError::BadBlockMagic { offset }
        });
    }
    if !bytes.starts_with(&BLOCK_MAGIC) {
        return Err(LayoutError::BadBlockMagic { offset });
    }
    let (Some(&h0), Some(&h1)) = (bytes.get(4), bytes.get(5)) else {
        return Err(short(PREFIX));
    };
    let header_size = u16::from_be_bytes([h0, h1]);
    if header_size < MIN_BLOCK_HEADER_SIZE {
        return Err(LayoutError::HeaderSizeTooSmall {
            index,
            offset,
            header_size,
        });
    }
    let f = bytes
        .get(6..6 + usize::from(MIN_BLOCK_HEADER_SIZE))
        .ok_or_else(|| short(PREFIX + u64::from(header_size)))?;
    if bytes.len() < 6 + usize::from(header_size) {
        return Err(short(PREFIX + u64::from(header_size)));
    }
    let mut flags = [0u8; 4];
    flags.copy_from_slice(f.get(0..4).unwrap_or(&[0; 4]));
    let mut compression = [0u8; 4];
    compression.copy_from_slice(f.get(4..8).unwrap_or(&[0; 4]));
    let mut checksum = [0u8; 16];
    checksum.copy_from_slice(f.get(32..48).unwrap_or(&[0; 16]));
    Ok(BlockHeader {
        index,
        offset,
        header_size,
        flags: u32::from_be_bytes(flags),
        compression,
        allocated_size: be_u64(f, 8),
        used_size: be_u64(f, 16),
        data_size: be_u64(f, 24),
        checksum,
    })
}

/// Encode a block header (magic included) honouring `header_size`: fields beyond the
/// standard 48 bytes are zero-filled; a `header_size` below 48 is raised to 48.
pub fn encode_block_header(b: &BlockHeader) -> Vec<u8> {
    let hs = b.header_size.max(MIN_BLOCK_HEADER_SIZE);
    let mut out = Vec::with_capacity(6 + usize::from(hs));
    out.extend_from_slice(&BLOCK_MAGIC);
    out.extend_from_slice(&hs.to_be_bytes());
    out.extend_from_slice(&b.flags.to_be_bytes());
    out.extend_from_slice(&b.compression);
    out.extend_from_slice(&b.allocated_size.to_be_bytes());
    out.extend_from_slice(&b.used_size.to_be_bytes());
    out.extend_from_slice(&b.data_size.to_be_bytes());
    out.extend_from_slice(&b.checksum);
    out.resize(6 + usize::from(hs), 0);
    out
}

/// Check a header's sizes against the file and fill in a streamed block's sizes. `coded`:
/// the stored bytes are encoded (compressed), so their size may differ from the data size.
fn check_sizes(h: &mut BlockHeader, file_len: u64, coded: bool) -> Result<(), LayoutError> {
    let data_offset = h
        .offset
        .checked_add(PREFIX + u64::from(h.header_size))
        .filter(|&d| d <= file_len)
        .ok_or(LayoutError::BlockHeaderTooShort {
            index: h.index,
            offset: h.offset,
            needed: PREFIX + u64::from(h.header_size),
            available: file_len.saturating_sub(h.offset),
        })?;
    if h.is_streamed() {
        let len = file_len - data_offset;
        h.allocated_size = len;
        h.used_size = len;
        h.data_size = len;
        return Ok(());
    }
    if h.used_size > h.allocated_size {
        return Err(LayoutError::BadSizes {
            index: h.index,
            offset: h.offset,
            allocated: h.allocated_size,
            used: h.used_size,
            data: h.data_size,
        });
    }
    let end = data_offset.checked_add(h.allocated_size);
    if !matches!(end, Some(e) if e <= file_len) {
        // A writer that seeks over the padding of the last block may leave the file short
        // of the allocated end: accept it when the used bytes are all there and the claim is
        // one the file could hold at all (an allocation larger than the whole file is a
        // corrupt header, not cut-off padding).
        let used_end = data_offset.checked_add(h.used_size);
        if matches!(used_end, Some(e) if e <= file_len) && h.allocated_size <= file_len {
            h.allocated_size = file_len - data_offset;
        } else {
            return Err(LayoutError::BlockOutOfBounds {
                index: h.index,
                offset: h.offset,
                end: end.unwrap_or(u64::MAX),
                file_len,
            });
        }
    }
    if h.used_size > h.allocated_size || (!coded && h.used_size != h.data_size) {
        return Err(LayoutError::BadSizes {
            index: h.index,
            offset: h.offset,
            allocated: h.allocated_size,
            used: h.used_size,
            data: h.data_size,
        });
    }
    Ok(())
}

/// Read and check the header of block `index` at `offset` through `window`.
fn read_header(
    window: &mut Window<'_>,
    offset: u64,
    index: usize,
    file_len: u64,
    chunk: usize,
) -> Result<BlockHeader, LayoutError> {
    let prefix = window.get(offset, PREFIX as usize, chunk)?;
    let hs = match prefix.get(4..6) {
        Some(&[a, b]) if prefix.starts_with(&BLOCK_MAGIC) => u16::from_be_bytes([a, b]),
        _ => {
            return Err(parse_at(prefix, offset, index)
                .err()
                .unwrap_or(LayoutError::BadBlockMagic { offset }))
        }
    };
    let bytes = window.get(offset, PREFIX as usize + usize::from(hs), chunk)?;
    let mut h = parse_at(bytes, offset, index)?;
    let coded = h.compression != [0; 4];
    check_sizes(&mut h, file_len, coded)?;
    Ok(h)
}

/// Read and check the header of block `index` of a file headed `#ASDF 0.1.0`: a legacy
/// layout when `header_size` is below 48, the 1.x one otherwise.
fn read_header_legacy(
    window: &mut Window<'_>,
    offset: u64,
    index: usize,
    file_len: u64,
    chunk: usize,
) -> Result<(BlockHeader, Option<LegacyBlock>), LayoutError> {
    let prefix = window.get(offset, PREFIX as usize, chunk)?;
    let hs = match prefix.get(4..6) {
        Some(&[a, b]) if prefix.starts_with(&BLOCK_MAGIC) => u16::from_be_bytes([a, b]),
        _ => return read_header(window, offset, index, file_len, chunk).map(|h| (h, None)),
    };
    if hs >= MIN_BLOCK_HEADER_SIZE {
        return read_header(window, offset, index, file_len, chunk).map(|h| (h, None));
    }
    let bytes = window.get(offset, PREFIX as usize + usize::from(hs), chunk)?;
    let (mut h, legacy) = parse_legacy_at(bytes, offset, index)?;
    let coded = h.compression != [0; 4] || legacy.has_chain(&h);
    check_sizes(&mut h, file_len, coded)?;
    Ok((h, Some(legacy)))
}

/// Walk the block headers of a file headed `#ASDF 0.1.0` (no block index existed then):
/// the blocks and, per block, its legacy header fields.
pub(crate) fn walk_legacy(
    src: &dyn ReadAt,
    file_len: u64,
    first: u64,
    limits: &LayoutLimits,
) -> Result<LegacyWalk, LayoutError> {
    let mut window = Window::new(src, file_len);
    let mut blocks = Vec::new();
    let mut legacy = Vec::new();
    let mut pos = first;
    let mut stride = 0u64;
    loop {
        if blocks.len() >= limits.max_blocks {
            return Err(LayoutError::TooManyBlocks {
                offset: pos,
                limit: limits.max_blocks,
            });
        }
        let (h, l) =
            read_header_legacy(&mut window, pos, blocks.len(), file_len, chunk_for(stride))?;
        let streamed = h.is_streamed();
        let end = h.end_offset();
        stride = end - pos;
        blocks.push(h);
        legacy.push(l);
        if streamed || end >= file_len {
            break;
        }
        if window.get(end, 4, chunk_for(stride))? != BLOCK_MAGIC {
            break;
        }
        pos = end;
    }
    Ok((blocks, legacy))
}

/// The blocks of a legacy walk and their legacy header fields.
pub(crate) type LegacyWalk = (Vec<BlockHeader>, Vec<Option<LegacyBlock>>);

/// Read size for the next header: big windows while blocks are small. The first header
/// (`stride` 0, nothing known yet) gets a small window, so opening a file of one large block
/// from a remote source costs kilobytes, not a megabyte.
fn chunk_for(stride: u64) -> usize {
    if stride != 0 && stride <= 64 << 10 {
        WINDOW_BIG
    } else {
        WINDOW_SMALL
    }
}

/// Locate every block from the first one at `first`: through the block index when it is
/// valid, otherwise by walking the headers. Returns the blocks and the index offset used.
pub(crate) fn locate_blocks(
    src: &dyn ReadAt,
    file_len: u64,
    first: u64,
    limits: &LayoutLimits,
) -> Result<(Vec<BlockHeader>, Option<u64>), LayoutError> {
    let found = find_block_index(src, file_len, first, limits)?;
    locate_with_index(src, file_len, first, limits, found)
}

/// The block index at the end of the file, if there is one: its offset and the bytes after
/// its marker.
pub(crate) fn find_block_index(
    src: &dyn ReadAt,
    file_len: u64,
    first: u64,
    limits: &LayoutLimits,
) -> Result<Option<(u64, Vec<u8>)>, LayoutError> {
    let max_index_bytes = (limits.max_blocks as u64)
        .saturating_mul(24)
        .saturating_add(4096);
    let min = first.saturating_add(PREFIX + u64::from(MIN_BLOCK_HEADER_SIZE));
    find_index(src, file_len, min, max_index_bytes)
}

/// As [`locate_blocks`], with the block index already looked for.
pub(crate) fn locate_with_index(
    src: &dyn ReadAt,
    file_len: u64,
    first: u64,
    limits: &LayoutLimits,
    found: Option<(u64, Vec<u8>)>,
) -> Result<(Vec<BlockHeader>, Option<u64>), LayoutError> {
    if let Some((index_offset, text)) = found {
        if let Some(offsets) = parse_index(&text, limits.max_blocks) {
            if let Some(blocks) = blocks_from_index(src, file_len, first, index_offset, &offsets) {
                return Ok((blocks, Some(index_offset)));
            }
        }
    }
    walk(src, file_len, first, limits).map(|b| (b, None))
}

/// Block headers taken from a block index one at a time, when a block is first used,
/// instead of all at open ([`super::read_layout_lazy`]).
///
/// At open the index must be plausible (its first offset is the first block's, the offsets
/// increase by at least a minimal block and end before the index) and the first and last
/// blocks it names must agree with it. Each other block is checked when it is first used: its
/// magic and header, sizes that end at or before the next offset, and no block magic in a gap
/// before the next one (a block the index misses). Blocks never used are never read, so an
/// index that is wrong only about them goes unnoticed, as in python asdf, which checks the
/// first and last blocks only.
#[derive(Debug)]
pub(crate) struct LazyBlocks {
    offsets: Vec<u64>,
    index_offset: u64,
    file_len: u64,
    headers: Vec<std::sync::OnceLock<BlockHeader>>,
}

impl LazyBlocks {
    /// The lazy headers of a plausible index whose first and last blocks agree with it, else
    /// `None`.
    fn new(
        src: &dyn ReadAt,
        file_len: u64,
        first: u64,
        index_offset: u64,
        offsets: Vec<u64>,
    ) -> Option<Self> {
        let min_block = PREFIX + u64::from(MIN_BLOCK_HEADER_SIZE);
        if offsets.first() != Some(&first) || index_offset > file_len {
            return None;
        }
        let spaced = offsets
            .windows(2)
            .all(|w| matches!(w, [a, b] if b.checked_sub(*a).is_some_and(|d| d >= min_block)));
        let last = *offsets.last()?;
        if !spaced || last.checked_add(min_block).is_none_or(|e| e > index_offset) {
            return None;
        }
        let headers = (0..offsets.len())
            .map(|_| std::sync::OnceLock::new())
            .collect();
        let lazy = LazyBlocks {
            offsets,
            index_offset,
            file_len,
            headers,
        };
        let n = lazy.len();
        lazy.header(src, 0).ok()?;
        lazy.header(src, n - 1).ok()?;
        Some(lazy)
    }

    /// Number of blocks the index names.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Offset of the `#ASDF BLOCK INDEX` line.
    pub(crate) fn index_offset(&self) -> u64 {
        self.index_offset
    }

    /// The header of block `index`, read and checked against the index on first use.
    pub(crate) fn header(
        &self,
        src: &dyn ReadAt,
        index: usize,
    ) -> Result<&BlockHeader, LayoutError> {
        let (Some(slot), Some(&offset)) = (self.headers.get(index), self.offsets.get(index)) else {
            return Err(LayoutError::IndexMismatch {
                index,
                offset: self.index_offset,
                reason: "the block index names fewer blocks",
            });
        };
        if let Some(h) = slot.get() {
            return Ok(h);
        }
        let next = self
            .offsets
            .get(index + 1)
            .copied()
            .unwrap_or(self.index_offset);
        let mismatch = |reason| LayoutError::IndexMismatch {
            index,
            offset,
            reason,
        };
        let mut window = Window::new(src, self.file_len);
        let h = read_header(&mut window, offset, index, self.file_len, WINDOW_SMALL)?;
        if h.is_streamed() {
            return Err(mismatch("a streamed block named by the block index"));
        }
        let end = h.end_offset();
        if end > next {
            return Err(mismatch("the block runs past the next offset of the index"));
        }
        if end < next && window.get(end, 4, WINDOW_SMALL)? == BLOCK_MAGIC {
            return Err(mismatch("a block follows that the index does not name"));
        }
        // Another thread may have read it too: the same bytes, the same header.
        Ok(slot.get_or_init(|| h))
    }

    /// Every header in file order, read through large windows (few reads) when the whole
    /// index agrees with the blocks; otherwise header by header, up to the first that
    /// disagrees, with its error.
    pub(crate) fn all(&self, src: &dyn ReadAt) -> (Vec<BlockHeader>, Option<LayoutError>) {
        let first = self.offsets.first().copied().unwrap_or(0);
        if let Some(all) =
            blocks_from_index(src, self.file_len, first, self.index_offset, &self.offsets)
        {
            return (all, None);
        }
        let mut all = Vec::with_capacity(self.len());
        for i in 0..self.len() {
            match self.header(src, i) {
                Ok(h) => all.push(h.clone()),
                Err(e) => return (all, Some(e)),
            }
        }
        (all, None)
    }
}

/// Lazy block headers from the block index when it is plausible and its first and last
/// blocks agree with it; `None` (the caller then locates blocks as usual) otherwise.
pub(crate) fn lazy_from_index(
    src: &dyn ReadAt,
    file_len: u64,
    first: u64,
    limits: &LayoutLimits,
    found: Option<&(u64, Vec<u8>)>,
) -> Option<LazyBlocks> {
    let (index_offset, text) = found?;
    let offsets = parse_index(text, limits.max_blocks)?;
    LazyBlocks::new(src, file_len, first, *index_offset, offsets)
}

/// The blocks named by a block index, or `None` when the index does not agree with the file.
fn blocks_from_index(
    src: &dyn ReadAt,
    file_len: u64,
    first: u64,
    index_offset: u64,
    offsets: &[u64],
) -> Option<Vec<BlockHeader>> {
    if offsets.first() != Some(&first) {
        return None;
    }
    let mut window = Window::new(src, file_len);
    let mut blocks = Vec::with_capacity(offsets.len());
    let mut prev_end = first;
    let mut stride = 0u64;
    for (i, &off) in offsets.iter().enumerate() {
        if off < prev_end || off >= index_offset {
            return None;
        }
        // A block between the previous one and this offset means the index misses it.
        if i > 0
            && off > prev_end
            && window.get(prev_end, 4, chunk_for(stride)).ok()? == BLOCK_MAGIC
        {
            return None;
        }
        let h = read_header(&mut window, off, i, file_len, chunk_for(stride)).ok()?;
        if h.is_streamed() {
            return None;
        }
        stride = h.end_offset() - off;
        prev_end = h.end_offset();
        if prev_end > index_offset {
            return None;
        }
        blocks.push(h);
    }
    if prev_end < index_offset && window.get(prev_end, 4, WINDOW_SMALL).ok()? == BLOCK_MAGIC {
        return None;
    }
    Some(blocks)
}

/// Walk the block headers from `first`, each block followed directly by the next.
fn walk(
    src: &dyn ReadAt,
    file_len: u64,
    first: u64,
    limits: &LayoutLimits,
) -> Result<Vec<BlockHeader>, LayoutError> {
    let mut window = Window::new(src, file_len);
    let mut blocks = Vec::new();
    let mut pos = first;
    let mut stride = 0u64;
    loop {
        if blocks.len() >= limits.max_blocks {
            return Err(LayoutError::TooManyBlocks {
                offset: pos,
                limit: limits.max_blocks,
            });
        }
        let h = read_header(&mut window, pos, blocks.len(), file_len, chunk_for(stride))?;
        let streamed = h.is_streamed();
        let end = h.end_offset();
        stride = end - pos;
        blocks.push(h);
        if streamed || end >= file_len {
            break;
        }
        // Another block follows only if its magic is there; otherwise the rest is the block
        // index, zero padding or trailing bytes.
        if window.get(end, 4, chunk_for(stride))? != BLOCK_MAGIC {
            break;
        }
        pos = end;
    }
    Ok(blocks)
}

fn stored_range(src: &dyn ReadAt, b: &BlockHeader) -> Result<(u64, usize), LayoutError> {
    let start = b.data_offset();
    let end = start.checked_add(b.used_size);
    let file_len = src.len();
    if !matches!(end, Some(e) if e <= file_len) {
        return Err(LayoutError::BlockOutOfBounds {
            index: b.index,
            offset: b.offset,
            end: end.unwrap_or(u64::MAX),
            file_len,
        });
    }
    let n = usize::try_from(b.used_size).map_err(|_| LayoutError::TooLargeForPlatform {
        offset: start,
        size: b.used_size,
    })?;
    Ok((start, n))
}

/// Read the `used_size` stored (possibly compressed) bytes of a block.
pub fn read_stored(src: &dyn ReadAt, b: &BlockHeader) -> Result<Vec<u8>, LayoutError> {
    let (start, n) = stored_range(src, b)?;
    let mut out = vec![0u8; n];
    src.read_exact_at(&mut out, start)
        .map_err(|e| LayoutError::io(start, &e))?;
    Ok(out)
}

/// Read the `used_size` stored bytes of a block into `out`, whose length must be `used_size`.
pub fn read_stored_into(
    src: &dyn ReadAt,
    b: &BlockHeader,
    out: &mut [u8],
) -> Result<(), LayoutError> {
    let (start, n) = stored_range(src, b)?;
    if out.len() != n {
        return Err(LayoutError::BufferSize {
            offset: b.offset,
            expected: b.used_size,
            actual: out.len() as u64,
        });
    }
    src.read_exact_at(out, start)
        .map_err(|e| LayoutError::io(start, &e))
}
