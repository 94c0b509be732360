//! The pieces of a block, and parts of its decoded bytes read without the whole block.
//!
//! A block's *pieces* are the parts of its stored bytes that decode on their own: the
//! whole block for an uncompressed block and for the stream codecs (`zlib`, `bzp2`, `zstd`,
//! `lz4f`, `blsc`), each sub-block of python asdf's `lz4` framing (found by walking the
//! length prefixes, once per block: the index is cached), each chunk of a `bsc2` frame (from
//! the frame's offsets index), and the one Blosc2 chunk of a `bls2` block.
//!
//! [`AsdfFile::read_spans`] gives byte ranges of a block's *decoded* bytes:
//! - from the cache, or the memory map of an uncompressed block, when there is one;
//! - uncompressed: the ranges themselves, neighbours closer than the source's
//!   [`ReadAt::merge_gap`] merged into one request (ranges alone read straight into the
//!   result), all requests handed to the source at once ([`ReadAt::read_ranges_at`], which a
//!   remote source fetches in parallel);
//! - `lz4` and `bsc2`: only the pieces that hold the ranges, decoded in parallel;
//! - the others: decoded as a stream up to the last byte asked for (`bls2` skipping the
//!   internal blocks before the first), never the whole block in memory when the ranges
//!   are a small part of it.
//!
//! A checksum covers a whole block, so with [`OpenOptions::verify_checksums`] a region
//! read loads the whole block once (verifying it as a whole read does, then caching it) and
//! takes the ranges from memory.
//!
//! [`OpenOptions::verify_checksums`]: super::OpenOptions::verify_checksums

use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;

use super::AsdfFile;
use crate::codec::{self, Compression};
use crate::error::{Error, Result};
use crate::layout::{self, BlockHeader, ReadAt};

/// Largest number of pieces indexed for one block (an `lz4` block of 1 TiB in python's 4 MiB
/// sub-blocks has 262,144).
const MAX_PIECES: usize = 1 << 20;

/// How a piece's stored bytes decode.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(dead_code)] // read by the manifest
pub(crate) enum PieceKind {
    /// Uncompressed: the stored bytes are the decoded bytes.
    Raw,
    /// The whole block, in one codec (a stream, or python-blosc's one chunk).
    Whole(Compression),
    /// One sub-block of python asdf's `lz4` framing: `stored` is its payload after the
    /// 4-byte big-endian length (a 4-byte little-endian decoded size, then one raw lz4
    /// block: what numcodecs' `LZ4` reads).
    Lz4Block,
    /// One Blosc2 chunk (of a `bsc2` frame, or a `bls2` block).
    Blosc2Chunk,
    /// A special chunk of a `bsc2` frame: no stored bytes, `pattern` repeated.
    Repeat(Vec<u8>),
}

/// One independently decodable piece of a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BlockPiece {
    /// How it decodes.
    pub kind: PieceKind,
    /// Its stored bytes: absolute offsets in the file's source (empty for `Repeat`).
    pub stored: Range<u64>,
    /// The bytes of the decoded block it yields.
    pub decoded: Range<u64>,
}

/// A block's stored bytes read by position from the file's source, for the stream decoders.
struct SourceRange<'a> {
    src: &'a dyn ReadAt,
    start: u64,
    len: u64,
}

impl codec::stream::StoredAt for SourceRange<'_> {
    fn stored_len(&self) -> u64 {
        self.len
    }
    fn read_stored_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let end = offset.checked_add(buf.len() as u64);
        if end.is_none_or(|e| e > self.len) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{} bytes at {offset} past the stored bytes", buf.len()),
            ));
        }
        self.src.read_exact_at(buf, self.start + offset)
    }
}

impl AsdfFile {
    /// The pieces of block `index` (indexed once, then cached).
    pub(crate) fn block_pieces(&self, index: usize) -> Result<Arc<[BlockPiece]>> {
        let h = self.block_header(index)?;
        if let Some(p) = self.pieces[index].get() {
            return Ok(p.clone());
        }
        let pieces: Arc<[BlockPiece]> = self.index_pieces(h)?.into();
        let _ = self.pieces[index].set(pieces.clone());
        Ok(pieces)
    }

    fn codec_error(&self, h: &BlockHeader, c: Compression, message: String) -> Error {
        Error::Codec {
            block: h.index,
            offset: h.offset,
            source: codec::CodecError::Corrupt {
                codec: c.name(),
                message,
            },
        }
    }

    fn index_pieces(&self, h: &BlockHeader) -> Result<Vec<BlockPiece>> {
        let range = self.stored_range(h)?;
        let (start, end) = (range.start as u64, range.end as u64);
        if let Some(lb) = self.layout.legacy_block(h.index) {
            if lb.has_chain(h) || lb.encoding_name().is_some() {
                return Err(Error::Unsupported {
                    what: format!(
                        "pieces of block {} (ASDF 0.1.0 encoding chains decode whole)",
                        h.index
                    ),
                });
            }
        }
        let whole = |kind| {
            Ok(vec![BlockPiece {
                kind,
                stored: start..end,
                decoded: 0..h.data_size,
            }])
        };
        match self.compression(h)? {
            None => Ok(vec![BlockPiece {
                kind: PieceKind::Raw,
                stored: start..end,
                decoded: 0..h.used_size,
            }]),
            Some(Compression::Lz4) => self.lz4_pieces(h, start, end),
            Some(Compression::Bsc2) => {
                let src = SourceRange {
                    src: &*self.source,
                    start,
                    len: end - start,
                };
                let frame = codec::stream::frame_pieces(src, h.data_size)
                    .map_err(|e| self.codec_error(h, Compression::Bsc2, e.to_string()))?;
                Ok(frame
                    .into_iter()
                    .map(|p| match (p.stored, p.pattern) {
                        (Some(s), _) => BlockPiece {
                            kind: PieceKind::Blosc2Chunk,
                            stored: start + s.start..start + s.end,
                            decoded: p.decoded,
                        },
                        (None, pattern) => BlockPiece {
                            kind: PieceKind::Repeat(pattern.unwrap_or_else(|| vec![0])),
                            stored: start..start,
                            decoded: p.decoded,
                        },
                    })
                    .collect())
            }
            Some(Compression::Bls2) => whole(PieceKind::Blosc2Chunk),
            Some(c) => whole(PieceKind::Whole(c)),
        }
    }

    /// Walks the length prefixes of python asdf's `lz4` framing: one 8-byte read per
    /// sub-block.
    fn lz4_pieces(&self, h: &BlockHeader, start: u64, end: u64) -> Result<Vec<BlockPiece>> {
        let bad = |at: u64, m: String| {
            self.codec_error(h, Compression::Lz4, format!("sub-block at byte {at}: {m}"))
        };
        let mut out = Vec::new();
        let (mut pos, mut decoded) = (start, 0u64);
        while pos < end {
            if end - pos < 8 {
                return Err(bad(pos - start, "truncated length prefix".into()));
            }
            let mut head = [0u8; 8];
            self.source
                .read_exact_at(&mut head, pos)
                .map_err(|e| layout::LayoutError::io(pos, &e))?;
            let n = u64::from(u32::from_be_bytes([head[0], head[1], head[2], head[3]]));
            let len = u64::from(u32::from_le_bytes([head[4], head[5], head[6], head[7]]));
            if n < 4 || n > end - pos - 4 {
                return Err(bad(
                    pos - start,
                    format!(
                        "length {n} outside the block's {} stored bytes",
                        end - start
                    ),
                ));
            }
            // an lz4 block expands at most 255 times
            if len > (n - 4).saturating_mul(255).saturating_add(64) {
                return Err(bad(
                    pos - start,
                    format!("claims {len} bytes from {} compressed bytes", n - 4),
                ));
            }
            let next = decoded + len;
            if next > h.data_size {
                return Err(bad(
                    pos - start,
                    format!("decodes past the block's {} bytes", h.data_size),
                ));
            }
            if out.len() == MAX_PIECES {
                return Err(Error::Limit {
                    what: "lz4 sub-blocks in one block",
                    limit: MAX_PIECES as u64,
                    found: MAX_PIECES as u64 + 1,
                });
            }
            out.push(BlockPiece {
                kind: PieceKind::Lz4Block,
                stored: pos + 4..pos + 4 + n,
                decoded: decoded..next,
            });
            decoded = next;
            pos += 4 + n;
        }
        if decoded != h.data_size {
            return Err(self.codec_error(
                h,
                Compression::Lz4,
                format!(
                    "sub-blocks decode to {decoded} bytes, the block to {}",
                    h.data_size
                ),
            ));
        }
        Ok(out)
    }

    /// The decoded bytes of block `index` at each of `spans` (ranges of its decoded bytes,
    /// each checked to lie inside it by the caller), one after the other in `out`, whose
    /// length is the sum of the spans' lengths.
    pub(crate) fn read_spans(
        &self,
        index: usize,
        spans: &[Range<u64>],
        out: &mut [u8],
    ) -> Result<()> {
        let h = self.block_header(index)?;
        let total: u64 = spans.iter().map(|s| s.end - s.start).sum();
        if total != out.len() as u64 || spans.iter().any(|s| s.start > s.end || s.end > h.data_size)
        {
            return Err(Error::Internal(format!(
                "spans of {total} bytes within block {index} of {} bytes for a buffer of {}",
                h.data_size,
                out.len()
            )));
        }
        let legacy = self
            .layout
            .legacy_block(h.index)
            .is_some_and(|lb| lb.has_chain(h) || lb.encoding_name().is_some());
        let verify = self.options.verify_checksums && h.has_checksum();
        let compression = self.compression(h)?;
        let mapped = self.mmap.is_some() && compression.is_none();
        if legacy || verify || mapped || self.blocks[index].get().is_some() {
            let data = self.block_data(index)?;
            return copy_spans(data, 0, spans, out);
        }
        match compression {
            None => self.read_raw_spans(h, spans, out),
            Some(Compression::Lz4) | Some(Compression::Bsc2) => {
                self.read_piece_spans(h, spans, out)
            }
            Some(c) => {
                let lo = spans.iter().map(|s| s.start).min().unwrap_or(0);
                let hi = spans.iter().map(|s| s.end).max().unwrap_or(0);
                self.check_size("decoded window", hi - lo)?;
                let range = self.stored_range(h)?;
                let src = SourceRange {
                    src: &*self.source,
                    start: range.start as u64,
                    len: (range.end - range.start) as u64,
                };
                let window = codec::stream::decoded_window(c, src, h.data_size, lo..hi)
                    .map_err(|e| self.codec_error(h, c, e.to_string()))?;
                copy_spans(&window, lo, spans, out)
            }
        }
    }

    pub(crate) fn check_size(&self, what: &'static str, n: u64) -> Result<()> {
        if n > self.options.max_block_bytes {
            return Err(Error::Limit {
                what,
                limit: self.options.max_block_bytes,
                found: n,
            });
        }
        Ok(())
    }

    /// Uncompressed: merged requests, all at once; a request of one span is read straight
    /// into its place in `out`.
    fn read_raw_spans(&self, h: &BlockHeader, spans: &[Range<u64>], out: &mut [u8]) -> Result<()> {
        let base = self.stored_range(h)?.start as u64;
        let gap = self.source.merge_gap();
        // each span's place in `out`
        let mut slots: Vec<Option<&mut [u8]>> = Vec::with_capacity(spans.len());
        let mut rest = out;
        for s in spans {
            let (slot, tail) = std::mem::take(&mut rest).split_at_mut((s.end - s.start) as usize);
            slots.push(Some(slot));
            rest = tail;
        }
        let mut order: Vec<usize> = (0..spans.len())
            .filter(|&i| spans[i].end > spans[i].start)
            .collect();
        order.sort_unstable_by_key(|&i| spans[i].start);
        // merged requests: (decoded range, spans in it)
        let mut groups: Vec<(Range<u64>, Vec<usize>)> = Vec::new();
        for i in order {
            let s = &spans[i];
            match groups.last_mut() {
                Some((g, members)) if s.start <= g.end.saturating_add(gap) => {
                    g.end = g.end.max(s.end);
                    members.push(i);
                }
                _ => groups.push((s.clone(), vec![i])),
            }
        }
        let mut merged: Vec<Vec<u8>> = groups
            .iter()
            .map(|(g, m)| {
                if m.len() == 1 {
                    Vec::new()
                } else {
                    vec![0u8; (g.end - g.start) as usize]
                }
            })
            .collect();
        {
            let mut reqs: Vec<(u64, &mut [u8])> = Vec::with_capacity(groups.len());
            for ((g, m), buf) in groups.iter().zip(merged.iter_mut()) {
                if m.len() == 1 {
                    if let Some(slot) = slots[m[0]].take() {
                        reqs.push((base + g.start, slot));
                    }
                } else {
                    reqs.push((base + g.start, buf.as_mut_slice()));
                }
            }
            self.source
                .read_ranges_at(&mut reqs)
                .map_err(|e| layout::LayoutError::io(base, &e))?;
        }
        for ((g, members), buf) in groups.iter().zip(&merged) {
            if members.len() == 1 {
                continue;
            }
            for &i in members {
                let s = &spans[i];
                let from = (s.start - g.start) as usize;
                let n = (s.end - s.start) as usize;
                if let Some(slot) = slots[i].as_deref_mut() {
                    slot.copy_from_slice(&buf[from..from + n]);
                }
            }
        }
        Ok(())
    }

    /// `lz4` and `bsc2`: the pieces that hold the spans, read together and decoded in
    /// parallel.
    fn read_piece_spans(
        &self,
        h: &BlockHeader,
        spans: &[Range<u64>],
        out: &mut [u8],
    ) -> Result<()> {
        let pieces = self.block_pieces(h.index)?;
        let mut needed: Vec<usize> = Vec::new();
        for s in spans.iter().filter(|s| s.end > s.start) {
            let first = pieces.partition_point(|p| p.decoded.end <= s.start);
            let mut k = first;
            while k < pieces.len() && pieces[k].decoded.start < s.end {
                needed.push(k);
                k += 1;
            }
        }
        needed.sort_unstable();
        needed.dedup();
        let c = self.compression(h)?.unwrap_or(Compression::Lz4);
        // stored bytes of the needed pieces, in one batch of requests
        let mut stored: Vec<Vec<u8>> = Vec::with_capacity(needed.len());
        for &k in &needed {
            let p = &pieces[k];
            // lz4: the 4-byte length prefix too, so the block decoder reads one sub-block
            let from = if p.kind == PieceKind::Lz4Block {
                p.stored.start - 4
            } else {
                p.stored.start
            };
            stored.push(vec![0u8; (p.stored.end - from) as usize]);
        }
        {
            let mut reqs: Vec<(u64, &mut [u8])> = needed
                .iter()
                .zip(stored.iter_mut())
                .filter(|(_, b)| !b.is_empty())
                .map(|(&k, b)| {
                    let p = &pieces[k];
                    let from = if p.kind == PieceKind::Lz4Block {
                        p.stored.start - 4
                    } else {
                        p.stored.start
                    };
                    (from, b.as_mut_slice())
                })
                .collect();
            self.source
                .read_ranges_at(&mut reqs)
                .map_err(|e| layout::LayoutError::io(h.data_offset(), &e))?;
        }
        let decoded: Vec<Vec<u8>> = needed
            .par_iter()
            .zip(stored.par_iter())
            .map(|(&k, bytes)| {
                let p = &pieces[k];
                let len = p.decoded.end - p.decoded.start;
                match &p.kind {
                    PieceKind::Repeat(pattern) => {
                        Ok(pattern.iter().copied().cycle().take(len as usize).collect())
                    }
                    PieceKind::Lz4Block => {
                        let mut buf = vec![0u8; len as usize];
                        codec::decode_into(Compression::Lz4, bytes, &mut buf).map_err(
                            |source| Error::Codec {
                                block: h.index,
                                offset: h.offset,
                                source,
                            },
                        )?;
                        Ok(buf)
                    }
                    _ => codec::decode(Compression::Bls2, bytes, len).map_err(|source| {
                        let message = format!("chunk of decoded bytes {:?}: {source}", p.decoded);
                        self.codec_error(h, c, message)
                    }),
                }
            })
            .collect::<Result<_>>()?;
        let mut pos = 0usize;
        for s in spans {
            let n = (s.end - s.start) as usize;
            let dst = &mut out[pos..pos + n];
            pos += n;
            if n == 0 {
                continue;
            }
            let first = needed.partition_point(|&k| pieces[k].decoded.end <= s.start);
            for (j, &k) in needed.iter().enumerate().skip(first) {
                let d = &pieces[k].decoded;
                if d.start >= s.end {
                    break;
                }
                let lo = s.start.max(d.start);
                let hi = s.end.min(d.end);
                dst[(lo - s.start) as usize..(hi - s.start) as usize]
                    .copy_from_slice(&decoded[j][(lo - d.start) as usize..(hi - d.start) as usize]);
            }
        }
        Ok(())
    }
}

/// Copies `spans` (ranges of decoded bytes) out of `data`, which holds the decoded bytes
/// from `data_start` on.
fn copy_spans(data: &[u8], data_start: u64, spans: &[Range<u64>], out: &mut [u8]) -> Result<()> {
    let mut pos = 0usize;
    for s in spans {
        let n = (s.end - s.start) as usize;
        let from = usize::try_from(s.start - data_start).unwrap_or(usize::MAX);
        let src = from
            .checked_add(n)
            .and_then(|e| data.get(from..e))
            .ok_or_else(|| Error::Internal(format!("span {s:?} outside the decoded bytes")))?;
        out[pos..pos + n].copy_from_slice(src);
        pos += n;
    }
    Ok(())
}
