//! The block layer of [`AsdfFile`]: every read of block data starts here. A block's
//! header is found ([`AsdfFile::block_header`], lazily for remote files), its stored bytes
//! read (from the source or the memory map), decoded, checksum-verified when asked and
//! cached whole ([`AsdfFile::block_data`]); checksums are verified without loading
//! ([`AsdfFile::verify_checksums`]); and parts of a block's decoded bytes are read without
//! the whole block ([`AsdfFile::read_spans`], for region reads), through its pieces. The
//! direct read (`direct_read.rs`) asks this layer for the header, codec and stored range,
//! then reads into the caller's array.
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

use memmap2::Mmap;

use super::{hex, legacy, verify, AsdfFile, LegacyEncodingError};
use crate::array::{self, ArraySource, NdArrayMeta};
use crate::checksum::Md5;
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

/// Where a walk of an `lz4` block's length prefixes stopped: the sub-blocks found so far,
/// the file offset of the next prefix and the decoded bytes before it.
#[derive(Debug)]
pub(crate) struct Lz4Walk {
    pieces: Vec<BlockPiece>,
    pos: u64,
    decoded: u64,
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
            Some(Compression::Lz4) => self.lz4_pieces(h, u64::MAX),
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
            Some(Compression::Blsc) => self.blsc_pieces(h, start, end),
            Some(c) => whole(PieceKind::Whole(c)),
        }
    }

    /// A `blsc` block in abacusutils' framing (`[u32 BE n][Blosc1 chunk of n bytes]` per
    /// 4 MiB piece, see `codec::blsc`) is one piece per chunk, each a whole Blosc1 chunk: a
    /// manifest, and the kerchunk references made from it, point at each chunk, which
    /// numcodecs' Blosc decodes (the whole block is no Blosc1 chunk). One plain chunk, or
    /// stored bytes of neither form (whose decoding says why), is one piece. The forms are
    /// told apart by the block's first 16 bytes; abacusutils' pieces are indexed from the
    /// stored block, read once (then cached with the pieces).
    fn blsc_pieces(&self, h: &BlockHeader, start: u64, end: u64) -> Result<Vec<BlockPiece>> {
        let whole = || {
            vec![BlockPiece {
                kind: PieceKind::Whole(Compression::Blsc),
                stored: start..end,
                decoded: 0..h.data_size,
            }]
        };
        let len = end - start;
        if len < 16 {
            return Ok(whole());
        }
        let mut head = [0u8; 16];
        self.source
            .read_ranges_at(&mut [(start, &mut head[..])])
            .map_err(|e| layout::LayoutError::io(start, &e))?;
        if codec::blsc_is_one_chunk(&head, len, h.data_size) {
            return Ok(whole());
        }
        let stored = self.stored_bytes(h)?;
        let Some(ranges) = codec::blsc_abacus_pieces(stored.as_slice(), h.data_size) else {
            return Ok(whole());
        };
        if ranges.len() > MAX_PIECES {
            return Err(Error::Limit {
                what: "blsc pieces in one block",
                limit: MAX_PIECES as u64,
                found: ranges.len() as u64,
            });
        }
        let mut decoded = 0u64;
        Ok(ranges
            .into_iter()
            .map(|(r, n)| {
                let piece = BlockPiece {
                    kind: PieceKind::Whole(Compression::Blsc),
                    stored: start + r.start as u64..start + r.end as u64,
                    decoded: decoded..decoded + n,
                };
                decoded += n;
                piece
            })
            .collect())
    }

    /// Walks the length prefixes of python asdf's `lz4` framing: one 8-byte read per
    /// sub-block (the sub-blocks' sizes are not known before, so the walk cannot skip).
    /// The walk stops once the sub-blocks reach decoded byte `until`, and the next call
    /// for the block resumes it (`walks`); the whole index, once walked, is cached.
    fn lz4_pieces(&self, h: &BlockHeader, until: u64) -> Result<Vec<BlockPiece>> {
        let range = self.stored_range(h)?;
        let (start, end) = (range.start as u64, range.end as u64);
        let mut walks = self.lz4_walks.lock().unwrap_or_else(|p| p.into_inner());
        let walk = walks.entry(h.index).or_insert_with(|| Lz4Walk {
            pieces: Vec::new(),
            pos: start,
            decoded: 0,
        });
        let bad = |at: u64, m: String| {
            self.codec_error(h, Compression::Lz4, format!("sub-block at byte {at}: {m}"))
        };
        while walk.pos < end && walk.decoded < until {
            let pos = walk.pos;
            if end - pos < 8 {
                return Err(bad(pos - start, "truncated length prefix".into()));
            }
            let mut head = [0u8; 8];
            // an exact request (a remote source fetches these 8 bytes, not a page)
            self.source
                .read_ranges_at(&mut [(pos, &mut head[..])])
                .map_err(|e| layout::LayoutError::io(pos, &e))?;
            if pos == start && head[..4] == codec::LZ4_FRAME_MAGIC {
                // one lz4 frame (ASDF.jl's `:frame` layout): one piece, decoded whole
                walks.remove(&h.index);
                return Ok(vec![BlockPiece {
                    kind: PieceKind::Whole(Compression::Lz4f),
                    stored: start..end,
                    decoded: 0..h.data_size,
                }]);
            }
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
            let next = walk.decoded + len;
            if next > h.data_size {
                return Err(bad(
                    pos - start,
                    format!("decodes past the block's {} bytes", h.data_size),
                ));
            }
            if walk.pieces.len() == MAX_PIECES {
                return Err(Error::Limit {
                    what: "lz4 sub-blocks in one block",
                    limit: MAX_PIECES as u64,
                    found: MAX_PIECES as u64 + 1,
                });
            }
            walk.pieces.push(BlockPiece {
                kind: PieceKind::Lz4Block,
                stored: pos + 4..pos + 4 + n,
                decoded: walk.decoded..next,
            });
            walk.decoded = next;
            walk.pos = pos + 4 + n;
        }
        if walk.pos >= end && walk.decoded != h.data_size {
            return Err(self.codec_error(
                h,
                Compression::Lz4,
                format!(
                    "sub-blocks decode to {} bytes, the block to {}",
                    walk.decoded, h.data_size
                ),
            ));
        }
        let pieces = walk.pieces.clone();
        if walk.pos >= end {
            walks.remove(&h.index);
        }
        Ok(pieces)
    }

    /// The pieces of block `index` that reach decoded byte `until` at least: all of them
    /// once indexed, else (`lz4`) as far as a walk of the prefixes had to go.
    fn pieces_until(&self, h: &BlockHeader, until: u64) -> Result<Arc<[BlockPiece]>> {
        if let Some(p) = self.pieces[h.index].get() {
            return Ok(p.clone());
        }
        if self.compression(h)? != Some(Compression::Lz4) || until >= h.data_size {
            return self.block_pieces(h.index);
        }
        let pieces = self.lz4_pieces(h, until)?;
        let complete =
            pieces.last().is_some_and(|p| p.decoded.end == h.data_size) || h.data_size == 0;
        let pieces: Arc<[BlockPiece]> = pieces.into();
        if complete {
            let _ = self.pieces[h.index].set(pieces.clone());
        }
        Ok(pieces)
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
        let until = spans.iter().map(|s| s.end).max().unwrap_or(0);
        let pieces = self.pieces_until(h, until)?;
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
                    // an `lz4` block that is one lz4 frame
                    PieceKind::Whole(whole) => {
                        codec::decode(*whole, bytes, len).map_err(|source| Error::Codec {
                            block: h.index,
                            offset: h.offset,
                            source,
                        })
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

#[derive(Debug)]
pub(crate) enum BlockBytes {
    Owned(Vec<u8>),
    Mapped(Arc<Mmap>, std::ops::Range<usize>),
}

impl BlockBytes {
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            BlockBytes::Owned(v) => v,
            BlockBytes::Mapped(m, r) => &m[r.clone()],
        }
    }
}

/// Loading, decoding, caching and verifying whole blocks.
impl AsdfFile {
    pub(crate) fn block_header(&self, index: usize) -> Result<&BlockHeader> {
        let count = self.block_count();
        let missing = || Error::NoSuchBlock {
            path: crate::yaml::TreePath::root(),
            source_index: index as i64,
            count,
        };
        match &self.lazy_headers {
            None => self.layout.blocks.get(index).ok_or_else(missing),
            Some(_) if index >= count => Err(missing()),
            Some(lazy) => Ok(lazy.header(&*self.source, index)?),
        }
    }

    /// The decoded bytes of block `index` (read, decoded and verified on first use, then
    /// cached).
    pub fn block_data(&self, index: usize) -> Result<&[u8]> {
        let header = self.block_header(index)?;
        if let Some(b) = self.blocks[index].get() {
            return Ok(b.as_slice());
        }
        let bytes = self.load_block(header)?;
        // Another thread may have won the race; either value is the same content.
        let _ = self.blocks[index].set(bytes);
        Ok(self.blocks[index]
            .get()
            .map(BlockBytes::as_slice)
            .unwrap_or_default())
    }

    pub(crate) fn stored_range(&self, h: &BlockHeader) -> Result<std::ops::Range<usize>> {
        let start = h.data_offset();
        let end = start
            .checked_add(h.used_size)
            .filter(|&e| e <= self.source.len())
            .ok_or(layout::LayoutError::BlockOutOfBounds {
                index: h.index,
                offset: h.offset,
                end: start.saturating_add(h.used_size),
                file_len: self.source.len(),
            })?;
        let s = usize::try_from(start).map_err(|_| self.limit("block offset", start))?;
        let e = usize::try_from(end).map_err(|_| self.limit("block end", end))?;
        Ok(s..e)
    }

    pub(crate) fn limit(&self, what: &'static str, found: u64) -> Error {
        Error::Limit {
            what,
            limit: usize::MAX as u64,
            found,
        }
    }

    /// Whether block `index` is an `lz4` block stored as one lz4 frame (ASDF.jl's `:frame`
    /// layout) rather than in python asdf's chunks: its first four stored bytes are the frame
    /// magic.
    pub(crate) fn lz4_block_is_frame(&self, index: usize) -> Result<bool> {
        let h = self.block_header(index)?;
        if self.compression(h)? != Some(Compression::Lz4) || h.used_size < 4 {
            return Ok(false);
        }
        let start = self.stored_range(h)?.start as u64;
        let mut head = [0u8; 4];
        self.source
            .read_ranges_at(&mut [(start, &mut head[..])])
            .map_err(|e| layout::LayoutError::io(start, &e))?;
        Ok(head == codec::LZ4_FRAME_MAGIC)
    }

    pub(crate) fn compression(&self, h: &BlockHeader) -> Result<Option<Compression>> {
        Compression::from_label(&h.compression).map_err(|source| Error::Codec {
            block: h.index,
            offset: h.offset,
            source,
        })
    }

    pub(crate) fn load_block(&self, h: &BlockHeader) -> Result<BlockBytes> {
        if let Some(lb) = self.layout.legacy_block(h.index) {
            if lb.has_chain(h) || lb.encoding_name().is_some() {
                return self.load_legacy_encoded(h, lb).map(BlockBytes::Owned);
            }
        }
        let compression = self.compression(h)?;
        if h.data_size > self.options.max_block_bytes {
            return Err(Error::Limit {
                what: "decoded block size",
                limit: self.options.max_block_bytes,
                found: h.data_size,
            });
        }
        let verify = self.options.verify_checksums && h.has_checksum();
        if compression.is_none() && verify && self.mmap.is_none() {
            // Read into the block's buffer and hash each piece as it arrives: one pass.
            let range = self.stored_range(h)?;
            let mut buf = crate::mem::zeroed_bytes(range.len())
                .ok_or_else(|| self.limit("block size", h.used_size))?;
            let mut hasher = Md5::new();
            let start = range.start as u64;
            verify::read_hashing(&*self.source, &mut buf, start, &mut hasher)
                .map_err(|e| layout::LayoutError::io(start, &e))?;
            self.expect_md5(h, hasher.finalize(), None)?;
            return Ok(BlockBytes::Owned(buf));
        }
        let stored = self.stored_bytes(h)?;
        let Some(c) = compression else {
            if verify {
                self.check_md5(h, stored.as_slice(), None)?;
            }
            return Ok(stored);
        };
        // The stored bytes are hashed on another thread while they are decoded.
        let (stored_md5, decoded) = rayon::join(
            || verify.then(|| Md5::digest(stored.as_slice())),
            || self.decode(h, c, stored.as_slice()),
        );
        let decoded = decoded?;
        if let Some(md5) = stored_md5 {
            self.expect_md5(h, md5, Some(&decoded))?;
        }
        Ok(BlockBytes::Owned(decoded))
    }

    /// A legacy block whose data is encoded: the draft's encoding chain, or the 2014
    /// layout's encoding field (which no file we know sets: an unknown encoding).
    pub(crate) fn load_legacy_encoded(
        &self,
        h: &BlockHeader,
        lb: &layout::LegacyBlock,
    ) -> Result<Vec<u8>> {
        let err = |source| Error::LegacyEncoding {
            block: h.index,
            offset: h.offset,
            source,
        };
        if !lb.has_chain(h) {
            let name = lb.encoding_name().unwrap_or_default();
            return Err(err(LegacyEncodingError::Unknown(name)));
        }
        let stored = self.stored_bytes(h)?;
        legacy::decode_chain(
            stored.as_slice(),
            h.data_size,
            self.options.max_block_bytes,
            self.legacy_byte_order(h.index),
        )
        .map_err(err)
    }

    /// The byte order of the first array read from block `index` (that of the floats a
    /// `quantize` encoding produces); little-endian when no array names the block.
    pub(crate) fn legacy_byte_order(&self, index: usize) -> array::ByteOrder {
        let count = self.block_count();
        let mut order = None;
        self.doc.root.walk_lazy(&mut |p, n| {
            if order.is_some() || !n.is_ndarray() {
                return;
            }
            if let Ok(meta) = NdArrayMeta::from_node(n, &p.pointer()) {
                if matches!(meta.source, ArraySource::Block(_))
                    && meta.block_index(count) == Some(index)
                {
                    order = Some(meta.byteorder);
                }
            }
        });
        order.unwrap_or(array::ByteOrder::Little)
    }

    /// The stored bytes of a block: a range of the map, or read into a fresh (huge-page
    /// backed when large) buffer.
    pub(crate) fn stored_bytes(&self, h: &BlockHeader) -> Result<BlockBytes> {
        if let Some(map) = &self.mmap {
            return Ok(BlockBytes::Mapped(map.clone(), self.stored_range(h)?));
        }
        let len =
            usize::try_from(h.used_size).map_err(|_| self.limit("block size", h.used_size))?;
        let mut buf =
            crate::mem::zeroed_bytes(len).ok_or_else(|| self.limit("block size", h.used_size))?;
        layout::read_stored_into(&*self.source, h, &mut buf)?;
        Ok(BlockBytes::Owned(buf))
    }

    pub(crate) fn decode(&self, h: &BlockHeader, c: Compression, stored: &[u8]) -> Result<Vec<u8>> {
        codec::decode(c, stored, h.data_size).map_err(|source| Error::Codec {
            block: h.index,
            offset: h.offset,
            source,
        })
    }

    /// Checks a block's MD5: over the stored bytes (asdf ≥ 5.3) or, for a compressed block,
    /// over its `decoded` bytes (legacy writers).
    pub(crate) fn check_md5(
        &self,
        h: &BlockHeader,
        stored: &[u8],
        decoded: Option<&[u8]>,
    ) -> Result<()> {
        self.expect_md5(h, Md5::digest(stored), decoded)
    }

    /// As [`Self::check_md5`], with the stored bytes' MD5 already computed.
    pub(crate) fn expect_md5(
        &self,
        h: &BlockHeader,
        actual: [u8; 16],
        decoded: Option<&[u8]>,
    ) -> Result<()> {
        if actual == h.checksum || decoded.is_some_and(|d| Md5::digest(d) == h.checksum) {
            return Ok(());
        }
        Err(self.checksum_error(h, actual))
    }

    pub(crate) fn checksum_error(&self, h: &BlockHeader, actual: [u8; 16]) -> Error {
        Error::Checksum {
            block: h.index,
            offset: h.offset,
            expected: hex(&h.checksum),
            actual: hex(&actual),
        }
    }

    /// Verifies the MD5 of every block that has one, in parallel. A compressed block passes
    /// when the checksum covers either its stored or (as legacy writers did) its decoded
    /// bytes. Reports the first mismatch in file order.
    ///
    /// No block is loaded: the stored bytes are hashed straight from the memory map, or
    /// read in pieces of a few MiB while the previous piece is hashed, so memory does not
    /// grow with the size of a block. A compressed block whose stored bytes do not match is
    /// decoded as a stream and its decoded bytes hashed piece by piece (the Blosc formats,
    /// which are not streams, are decoded whole).
    pub fn verify_checksums(&self) -> Result<()> {
        self.verify_with(None)
    }

    /// As [`AsdfFile::verify_checksums`], telling `progress` how far it has come: `(done,
    /// total)` in stored bytes of the blocks that have a checksum, every few MiB (from the
    /// threads doing the hashing, one report at a time).
    pub fn verify_checksums_with_progress(&self, progress: &crate::Progress) -> Result<()> {
        self.verify_with(Some(progress))
    }

    pub(crate) fn verify_with(&self, progress: Option<&crate::Progress>) -> Result<()> {
        let blocks = self.try_blocks()?;
        let total = blocks
            .iter()
            .filter(|h| h.has_checksum())
            .map(|h| h.used_size)
            .fold(0u64, u64::saturating_add);
        let ticker = std::sync::Mutex::new(crate::progress::Ticker::new(progress, total));
        let hashed = |n: u64| {
            if progress.is_some() {
                if let Ok(mut t) = ticker.lock() {
                    t.add(n);
                }
            }
        };
        let results: Vec<Result<()>> = blocks
            .par_iter()
            .filter(|h| h.has_checksum())
            .map(|h| self.verify_block(h, &hashed))
            .collect();
        results.into_iter().collect()
    }

    pub(crate) fn verify_block(
        &self,
        h: &BlockHeader,
        hashed: &(dyn Fn(u64) + Sync),
    ) -> Result<()> {
        /// Bytes of a mapped block hashed between two progress reports.
        const REPORT_EVERY: usize = 16 << 20;
        let range = self.stored_range(h)?;
        let start = range.start as u64;
        let actual = match &self.mmap {
            Some(map) => {
                let mut hasher = Md5::new();
                for piece in map[range].chunks(REPORT_EVERY) {
                    hasher.update(piece);
                    hashed(piece.len() as u64);
                }
                hasher.finalize()
            }
            None => {
                let mut hasher = Md5::new();
                verify::hash_range(&*self.source, start, h.used_size, &mut hasher, &mut |n| {
                    hashed(n)
                })
                .map_err(|e| layout::LayoutError::io(start, &e))?;
                hasher.finalize()
            }
        };
        if actual == h.checksum {
            return Ok(()); // the usual case: no need to decode
        }
        let Some(c) = self.compression(h)? else {
            return Err(self.checksum_error(h, actual));
        };
        let decoded = match self.blocks[h.index].get() {
            Some(b) => Md5::digest(b.as_slice()),
            None => self.decoded_md5(h, c, start)?,
        };
        if decoded == h.checksum {
            Ok(())
        } else {
            Err(self.checksum_error(h, actual))
        }
    }

    /// The MD5 of a block's decoded bytes, decoded as a stream where the codec is one.
    pub(crate) fn decoded_md5(
        &self,
        h: &BlockHeader,
        c: Compression,
        start: u64,
    ) -> Result<[u8; 16]> {
        use std::io::Read;
        if h.data_size > self.options.max_block_bytes {
            return Err(Error::Limit {
                what: "decoded block size",
                limit: self.options.max_block_bytes,
                found: h.data_size,
            });
        }
        let reader = verify::RangeReader {
            src: &*self.source,
            pos: start,
            end: start.saturating_add(h.used_size),
        };
        let Some(mut decoded) = codec::decoder(
            c,
            std::io::BufReader::with_capacity(1 << 20, reader),
            h.data_size,
        ) else {
            let stored = self.stored_bytes(h)?;
            return Ok(Md5::digest(self.decode(h, c, stored.as_slice())?));
        };
        let mut hasher = Md5::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            match decoded.read(&mut buf) {
                Ok(0) => return Ok(hasher.finalize()),
                Ok(n) => hasher.update(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::Codec {
                        block: h.index,
                        offset: h.offset,
                        source: codec::CodecError::Corrupt {
                            codec: c.name(),
                            message: e.to_string(),
                        },
                    })
                }
            }
        }
    }

    /// Resolves an ndarray `source: N` (negative counts from the end) to a block index.
    pub(crate) fn block_index(&self, source: i64, path: &str) -> Result<usize> {
        let count = self.block_count();
        let idx = if source < 0 {
            (count as i64).checked_add(source)
        } else {
            Some(source)
        };
        idx.filter(|&i| i >= 0 && (i as u64) < count as u64)
            .map(|i| i as usize)
            .ok_or(Error::NoSuchBlock {
                path: path.into(),
                source_index: source,
                count,
            })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;
    use crate::array::CompressionChoice;
    use crate::write::{WriteOptions, Writer};
    use crate::{OpenOptions, Selection};

    /// A file in memory that counts the bytes read from it.
    struct Counting {
        bytes: Vec<u8>,
        read: AtomicU64,
    }

    impl ReadAt for Counting {
        fn len(&self) -> u64 {
            self.bytes.len() as u64
        }
        fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
            self.read.fetch_add(buf.len() as u64, Ordering::Relaxed);
            self.bytes.as_slice().read_exact_at(buf, offset)
        }
    }

    #[test]
    fn an_lz4_walk_stops_at_the_sub_blocks_a_region_needs_and_resumes_later() {
        // 6 sub-blocks of 4 MiB of incompressible-ish data (rows of 4 KiB)
        let a = ndarray::Array2::from_shape_fn((6 * 1024, 1024), |(i, j)| {
            ((i * 7919 + j * 104_729) % 65_521) as f32
        });
        let mut w = Writer::new(
            WriteOptions::default().compression(CompressionChoice::Codec(Compression::Lz4)),
        );
        let node = w.add_array(&a);
        let bytes = w.write_to_vec(&crate::tree!({ "sci": node })).unwrap();
        let src = Arc::new(Counting {
            bytes,
            read: AtomicU64::new(0),
        });
        let f = OpenOptions::new().open_source(src.clone(), ".").unwrap();
        let head = src.read.load(Ordering::Relaxed);
        let first = f
            .region::<f32>("/sci", &"10:20, 5:9".parse::<Selection>().unwrap())
            .unwrap();
        assert_eq!(first, a.slice(ndarray::s![10..20, 5..9]).into_dyn());
        let stored = f.blocks()[0].used_size;
        let one = src.read.load(Ordering::Relaxed) - head;
        // one prefix and one sub-block (about a sixth of the block), not the whole walk
        assert!(
            one < stored / 4,
            "{one} bytes of {stored} read for the first sub-block"
        );
        assert!(f.pieces[0].get().is_none(), "the index is not complete yet");
        // a region at the end walks the rest, once
        let last = f
            .region::<f32>("/sci", &"-3:, ::100".parse::<Selection>().unwrap())
            .unwrap();
        assert_eq!(last, a.slice(ndarray::s![-3.., ..;100]).into_dyn());
        assert_eq!(f.pieces[0].get().map(|p| p.len()), Some(6));
    }
}
