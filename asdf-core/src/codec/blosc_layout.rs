//! What the streaming decoders of the Blosc chunk formats share (`blsc`'s Blosc1 chunk and
//! `bls2`/`bsc2`'s Blosc2 chunks, whose headers differ but whose block starts and flags are
//! laid out alike): the block starts read a window at a time, and one block of a chunk made
//! into a one-block chunk that decodes alone.

use std::io;

use super::pieced::StoredAt;

/// The little-endian `u32` at `at` of `b` (0 when `b` ends first).
pub(super) fn le32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        a.copy_from_slice(s);
    }
    u32::from_le_bytes(a)
}

/// Block starts of a chunk, read by position a window at a time (a chunk of many small
/// blocks costs no more memory than one of few).
pub(super) struct Starts {
    /// Stored offset of the first start.
    at: u64,
    count: usize,
    first: usize,
    window: Vec<u32>,
}

impl Starts {
    const WINDOW: usize = 4096;

    /// The `count` block starts stored from offset `at`, none read yet.
    pub(super) fn new(at: u64, count: usize) -> Self {
        Starts {
            at,
            count,
            first: 0,
            window: Vec::new(),
        }
    }

    pub(super) fn get<S: StoredAt>(&mut self, s: &mut S, j: usize) -> io::Result<u32> {
        if j < self.first || j >= self.first + self.window.len() {
            let first = j / Self::WINDOW * Self::WINDOW;
            let n = Self::WINDOW.min(self.count - first);
            let mut raw = vec![0u8; n * 4];
            s.read_stored_at(self.at + first as u64 * 4, &mut raw)?;
            self.window = raw.chunks_exact(4).map(|b| le32(b, 0)).collect();
            self.first = first;
        }
        Ok(self.window.get(j - self.first).copied().unwrap_or(0))
    }
}

/// Flag of both chunk formats: every block is one stream (not one per byte of an item).
pub(super) const DONT_SPLIT: u8 = 0x10;
/// Flag of both chunk formats: the data is stored as it is after the header.
pub(super) const MEMCPYED: u8 = 0x02;

/// A one-block chunk: `header` (16 or 32 bytes) with its sizes set for a block of `bsize`
/// decoded bytes whose stored streams are `data`, the one block start after the header.
/// `last_partial` marks the short last block, which is never split into streams (the flag
/// says so, since a one-block chunk's only block is not short).
pub(super) fn one_block_chunk(
    header: &[u8],
    bsize: u32,
    data: &[u8],
    last_partial: bool,
) -> Vec<u8> {
    let hl = header.len();
    let mut chunk = Vec::with_capacity(hl + 4 + data.len());
    chunk.extend_from_slice(header);
    chunk[4..8].copy_from_slice(&bsize.to_le_bytes());
    chunk[8..12].copy_from_slice(&bsize.to_le_bytes());
    let cbytes = (hl + 4 + data.len()) as u32;
    chunk[12..16].copy_from_slice(&cbytes.to_le_bytes());
    if last_partial {
        chunk[2] |= DONT_SPLIT;
    }
    chunk.extend_from_slice(&((hl + 4) as u32).to_le_bytes());
    chunk.extend_from_slice(data);
    chunk
}

/// The stored extent a block may take from its start: at most its decoded size plus a
/// 4-byte size per stream (a stream that would grow is stored as it is), within the chunk.
pub(super) fn block_extent(start: u64, cbytes: u64, bsize: u64, typesize: u64) -> u64 {
    (bsize + 4 * typesize.max(1)).min(cbytes.saturating_sub(start))
}
