//! `bls2` and `bsc2`: Blosc2 in an ASDF block, through our pure-Rust `asdf-blosc2` (feature
//! `blosc2`).
//!
//! - `bls2` (asdf-compression): the stored bytes are one Blosc2 chunk (so a block holds at
//!   most 2 GiB).
//! - `bsc2` (abacusutils): the stored bytes are one contiguous frame of a 1-D super-chunk;
//!   the decoded block is its chunks one after the other.
//!
//! Written with the item size as the type size (so shuffle groups the bytes of each
//! number), zstd with byte shuffle, chunks of about 4 MiB in whole items.

use super::CodecError;

#[cfg_attr(not(feature = "blosc2"), allow(dead_code))]
fn corrupt(codec: &'static str, e: impl std::fmt::Display) -> CodecError {
    CodecError::Corrupt {
        codec,
        message: e.to_string(),
    }
}

/// Bytes per chunk of a written `bsc2` frame (rounded down to whole items).
#[cfg_attr(not(feature = "blosc2"), allow(dead_code))]
const CHUNK: usize = 4 << 20;

#[cfg(feature = "blosc2")]
fn params(level: Option<i32>, typesize: usize) -> asdf_blosc2::CParams {
    asdf_blosc2::CParams {
        codec: asdf_blosc2::Codec::Zstd,
        level: level.unwrap_or(5).clamp(1, 22),
        filters: if typesize > 1 {
            asdf_blosc2::Filter::Shuffle.only()
        } else {
            asdf_blosc2::Filter::None.only()
        },
        typesize: typesize.clamp(1, 255),
        blocksize: 0,
    }
}

#[cfg(feature = "blosc2")]
fn fits(out: &[u8], expected: u64, codec: &'static str) -> Result<(), CodecError> {
    if out.len() as u64 != expected {
        let _ = codec;
        return Err(CodecError::SizeMismatch {
            expected,
            actual: out.len() as u64,
        });
    }
    Ok(())
}

/// Decodes a `bls2` block (one chunk) of `data_size` bytes.
#[cfg(feature = "blosc2")]
pub(super) fn decode_bls2(stored: &[u8], data_size: u64) -> Result<Vec<u8>, CodecError> {
    let limit = usize::try_from(data_size)
        .map_err(|_| CodecError::TooLargeForPlatform { size: data_size })?;
    let out = asdf_blosc2::chunk::decode(stored, limit).map_err(|e| corrupt("bls2", e))?;
    fits(&out, data_size, "bls2")?;
    Ok(out)
}

/// Decodes a `bsc2` block (one frame) of `data_size` bytes.
#[cfg(feature = "blosc2")]
pub(super) fn decode_bsc2(stored: &[u8], data_size: u64) -> Result<Vec<u8>, CodecError> {
    let frame =
        asdf_blosc2::Frame::parse_limited(stored, data_size).map_err(|e| corrupt("bsc2", e))?;
    if frame.nbytes != data_size {
        return Err(CodecError::SizeMismatch {
            expected: data_size,
            actual: frame.nbytes,
        });
    }
    let out = frame.decode_all().map_err(|e| corrupt("bsc2", e))?;
    fits(&out, data_size, "bsc2")?;
    Ok(out)
}

/// Encodes `data` as a `bls2` block.
#[cfg(feature = "blosc2")]
pub(super) fn encode_bls2(
    data: &[u8],
    level: Option<i32>,
    typesize: usize,
) -> Result<Vec<u8>, CodecError> {
    asdf_blosc2::encode_chunk(data, &params(level, typesize)).map_err(|e| CodecError::Encode {
        codec: "bls2",
        message: e.to_string(),
    })
}

/// Encodes `data` as a `bsc2` block.
#[cfg(feature = "blosc2")]
pub(super) fn encode_bsc2(
    data: &[u8],
    level: Option<i32>,
    typesize: usize,
) -> Result<Vec<u8>, CodecError> {
    let ts = typesize.clamp(1, 255);
    let chunk = (CHUNK / ts).max(1) * ts;
    let mut w = asdf_blosc2::FrameWriter::new(chunk, params(level, typesize));
    let enc = |e: asdf_blosc2::Error| CodecError::Encode {
        codec: "bsc2",
        message: e.to_string(),
    };
    for piece in data.chunks(chunk) {
        w.append(piece).map_err(enc)?;
    }
    w.finish().map_err(enc)
}

#[cfg(not(feature = "blosc2"))]
fn off(codec: &'static str) -> CodecError {
    CodecError::Unsupported {
        codec,
        reason: "built without the `blosc2` feature".into(),
    }
}

#[cfg(not(feature = "blosc2"))]
pub(super) fn decode_bls2(_: &[u8], _: u64) -> Result<Vec<u8>, CodecError> {
    Err(off("bls2"))
}
#[cfg(not(feature = "blosc2"))]
pub(super) fn decode_bsc2(_: &[u8], _: u64) -> Result<Vec<u8>, CodecError> {
    Err(off("bsc2"))
}
#[cfg(not(feature = "blosc2"))]
pub(super) fn encode_bls2(_: &[u8], _: Option<i32>, _: usize) -> Result<Vec<u8>, CodecError> {
    Err(off("bls2"))
}
#[cfg(not(feature = "blosc2"))]
pub(super) fn encode_bsc2(_: &[u8], _: Option<i32>, _: usize) -> Result<Vec<u8>, CodecError> {
    Err(off("bsc2"))
}

/// The streaming decoders: Blosc2 chunks and frames whose stored bytes are read by
/// position, decoded a block at a time through asdf-blosc2.
#[cfg(feature = "blosc2")]
pub(super) mod stream {
    use super::FramePiece;
    use crate::codec::blosc_layout::{block_extent, le32, one_block_chunk, Starts, MEMCPYED};
    use crate::codec::pieced::{invalid, Pieces, StoredAt};
    use crate::codec::Compression;
    use asdf_blosc2::chunk::{ChunkHeader, Special};
    use std::io;

    /// Largest chunk decoded whole (one that uses a dictionary, lazy or variable-length
    /// blocks or the delta filter, whose blocks are not independent).
    const MAX_WHOLE: u64 = 1 << 31;
    /// Bytes of the offsets index of a `bsc2` frame read (8 per chunk: a million chunks).
    const MAX_OFFSETS: u64 = 8 << 20;

    fn err(codec: Compression, e: impl std::fmt::Display) -> io::Error {
        invalid(codec, e.to_string())
    }

    /// What a chunk's bytes are made of.
    enum Kind {
        /// Its decoded bytes are `pattern` repeated (special chunks).
        Repeat(Vec<u8>),
        /// Stored as they are after the header.
        Raw,
        /// Independent blocks.
        Blocks { starts: Starts, nblocks: u64 },
        /// Decoded whole.
        Whole,
    }

    /// One Blosc2 chunk stored at `base..base + len` of the stored bytes, decoded to
    /// exactly `limit` bytes, a block at a time.
    pub(crate) struct Chunk<S> {
        stored: S,
        base: u64,
        len: u64,
        limit: u64,
        codec: Compression,
        state: Option<(ChunkHeader, Vec<u8>, Kind)>,
        /// Decoded bytes produced so far.
        done: u64,
        next: u64,
    }

    impl<S: StoredAt> Chunk<S> {
        pub(crate) fn new(stored: S, base: u64, len: u64, limit: u64) -> Self {
            Chunk {
                stored,
                base,
                len,
                limit,
                codec: Compression::Bls2,
                state: None,
                done: 0,
                next: 0,
            }
        }

        fn open(&mut self) -> io::Result<(ChunkHeader, Vec<u8>, Kind)> {
            let c = self.codec;
            let mut raw = vec![0u8; 32.min(self.len) as usize];
            self.stored.read_stored_at(self.base, &mut raw)?;
            let h = ChunkHeader::parse(&raw).map_err(|e| err(c, e))?;
            raw.truncate(h.header_len);
            if h.nbytes as u64 != self.limit {
                return Err(err(
                    c,
                    format!("chunk of {} bytes where {} are due", h.nbytes, self.limit),
                ));
            }
            if h.cbytes as u64 > self.len {
                return Err(err(
                    c,
                    format!("chunk of {} bytes in {} stored", h.cbytes, self.len),
                ));
            }
            let kind = match h.special {
                Special::Zeros | Special::Uninit => Kind::Repeat(vec![0]),
                Special::Nan => match h.typesize {
                    4 => Kind::Repeat(vec![0, 0, 0xc0, 0x7f]),
                    8 => Kind::Repeat(vec![0, 0, 0, 0, 0, 0, 0xf8, 0x7f]),
                    t => return Err(err(c, format!("a NaN chunk of type size {t}"))),
                },
                Special::Value => {
                    let vs = h.cbytes - h.header_len;
                    if vs == 0 || h.nbytes % vs != 0 || vs > 1 << 16 {
                        return Err(err(c, format!("special value of {vs} bytes")));
                    }
                    let mut v = vec![0u8; vs];
                    self.stored
                        .read_stored_at(self.base + h.header_len as u64, &mut v)?;
                    Kind::Repeat(v)
                }
                _ if h.flags & MEMCPYED != 0 => {
                    if h.cbytes != h.nbytes + h.header_len {
                        return Err(err(c, "a stored chunk of the wrong length"));
                    }
                    Kind::Raw
                }
                _ if h.nbytes == 0 => Kind::Repeat(Vec::new()),
                _ => {
                    // blocks are independent unless a dictionary (bit 0), lazy chunk (3),
                    // variable-length blocks or the delta filter (3) says otherwise
                    let independent = h.blosc2_flags & 0x09 == 0
                        && h.blosc2_flags2 & 1 == 0
                        && !h.filters.contains(&3);
                    let nblocks = (h.nbytes as u64).div_ceil(h.blocksize as u64);
                    if independent {
                        if h.header_len as u64 + 4 * nblocks > h.cbytes as u64 {
                            return Err(err(c, format!("{nblocks} block starts past the chunk")));
                        }
                        Kind::Blocks {
                            starts: Starts::new(self.base + h.header_len as u64, nblocks as usize),
                            nblocks,
                        }
                    } else {
                        if h.cbytes as u64 > MAX_WHOLE {
                            return Err(err(c, "a chunk of dependent blocks over 2 GiB"));
                        }
                        Kind::Whole
                    }
                }
            };
            Ok((h, raw, kind))
        }

        /// Moves past the first `n` decoded bytes before anything is read: whole blocks
        /// before them are neither read nor decoded. Returns how many bytes were skipped
        /// (at most `n`; the caller reads and drops the rest).
        pub(crate) fn skip(&mut self, n: u64) -> io::Result<u64> {
            if self.state.is_none() {
                self.state = Some(self.open()?);
            }
            let Some((h, _, kind)) = &self.state else {
                return Ok(0);
            };
            // nothing decoded yet (every piece decodes at least one byte)
            if self.done != 0 {
                return Ok(0);
            }
            let n = n.min(h.nbytes as u64);
            let skipped = match kind {
                Kind::Blocks { nblocks, .. } => {
                    let bs = (h.blocksize as u64).max(1);
                    let k = (n / bs).min(*nblocks);
                    self.next = k;
                    k * bs
                }
                Kind::Raw => n,
                Kind::Repeat(p) if !p.is_empty() => n / p.len() as u64 * p.len() as u64,
                Kind::Repeat(_) | Kind::Whole => 0,
            };
            self.done = skipped;
            Ok(skipped)
        }
    }

    impl<S: StoredAt> Pieces for Chunk<S> {
        /// Decodes the next block (or MiB of a chunk stored as it is or of a repeated
        /// pattern, or the whole chunk when its blocks are not independent) into `out`.
        fn next_piece(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
            if self.state.is_none() {
                self.state = Some(self.open()?);
            }
            let c = self.codec;
            let Some((h, header, kind)) = &mut self.state else {
                return Ok(false);
            };
            let left = h.nbytes as u64 - self.done;
            if left == 0 {
                return Ok(false);
            }
            match kind {
                Kind::Repeat(p) => {
                    let n = left.min(1 << 20) as usize;
                    if p.iter().all(|&b| b == 0) {
                        out.clear();
                        out.resize(n, 0);
                    } else {
                        // whole items only (the chunk is a whole number of them)
                        let n = (n / p.len()).max(1) * p.len();
                        out.clear();
                        out.extend(p.iter().copied().cycle().take(n));
                    }
                }
                Kind::Raw => {
                    let n = left.min(1 << 20) as usize;
                    out.resize(n, 0);
                    let at = self.base + h.header_len as u64 + self.done;
                    self.stored.read_stored_at(at, out)?;
                }
                Kind::Whole => {
                    let mut src = vec![0u8; h.cbytes];
                    self.stored.read_stored_at(self.base, &mut src)?;
                    *out = asdf_blosc2::chunk::decode(&src, h.nbytes).map_err(|e| err(c, e))?;
                }
                Kind::Blocks { starts, nblocks } => {
                    let j = self.next;
                    let bs = h.blocksize as u64;
                    let start = u64::from(starts.get(&mut self.stored, j as usize)?);
                    let first_data = h.header_len as u64 + 4 * *nblocks;
                    if start < first_data || start >= h.cbytes as u64 {
                        return Err(err(
                            c,
                            format!("block {j} starts at {start}, outside the chunk"),
                        ));
                    }
                    let last_partial = j == *nblocks - 1 && h.nbytes as u64 % bs != 0;
                    let bsize = if last_partial {
                        h.nbytes as u64 % bs
                    } else {
                        bs
                    };
                    let ext = block_extent(start, h.cbytes as u64, bsize, h.typesize as u64);
                    let mut data = vec![0u8; ext as usize];
                    self.stored.read_stored_at(self.base + start, &mut data)?;
                    let one = one_block_chunk(header, bsize as u32, &data, last_partial);
                    let oh = ChunkHeader::parse(&one).map_err(|e| err(c, e))?;
                    out.resize(bsize as usize, 0);
                    asdf_blosc2::chunk::decode_to_slice(&oh, &one, out)
                        .map_err(|e| err(c, format!("block {j}: {e}")))?;
                    self.next += 1;
                }
            }
            self.done += out.len() as u64;
            if self.done > h.nbytes as u64 {
                return Err(err(c, "a chunk decodes to more than it declares"));
            }
            Ok(true)
        }
    }

    fn be_i32(b: &[u8], at: usize) -> i64 {
        let mut a = [0u8; 4];
        a.copy_from_slice(&b[at..at + 4]);
        i64::from(i32::from_be_bytes(a))
    }

    fn be_i64(b: &[u8], at: usize) -> i64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[at..at + 8]);
        i64::from_be_bytes(a)
    }

    /// A `bsc2` frame: its header and offsets read first (by position), then each chunk
    /// where the offsets say, in order.
    pub(crate) struct FrameReader<S> {
        /// `None` once the stored bytes are lent to the current chunk.
        stored: Option<S>,
        data_size: u64,
        meta: Option<FrameMeta>,
        chunk: Option<Chunk<S>>,
        next: usize,
        special: Option<Chunk<()>>,
    }

    struct FrameMeta {
        header_len: u64,
        cbytes: u64,
        nbytes: u64,
        chunksize: u64,
        nchunks: usize,
        offsets: Vec<i64>,
        typesize: usize,
    }

    impl StoredAt for () {
        fn stored_len(&self) -> u64 {
            0
        }
        fn read_stored_at(&mut self, _: u64, buf: &mut [u8]) -> io::Result<()> {
            if buf.is_empty() {
                Ok(())
            } else {
                Err(io::ErrorKind::UnexpectedEof.into())
            }
        }
    }

    const C: Compression = Compression::Bsc2;

    impl<S: StoredAt> FrameReader<S> {
        pub(crate) fn new(stored: S, data_size: u64) -> Self {
            FrameReader {
                stored: Some(stored),
                data_size,
                meta: None,
                chunk: None,
                next: 0,
                special: None,
            }
        }

        fn parse(s: &mut S, data_size: u64) -> io::Result<FrameMeta> {
            let len = s.stored_len();
            if len < 62 {
                return Err(err(C, format!("frame of {len} bytes")));
            }
            let mut h = [0u8; 62];
            s.read_stored_at(0, &mut h)?;
            if h[0] & 0xf0 != 0x90 || h[1] != 0xa8 || &h[2..10] != b"b2frame\0" {
                return Err(err(C, "not a Blosc2 frame (no b2frame)"));
            }
            let markers = [
                (10, 0xd2),
                (15, 0xcf),
                (24, 0xa4),
                (29, 0xd3),
                (38, 0xd3),
                (47, 0xd2),
                (57, 0xd2),
            ];
            if let Some((at, _)) = markers.iter().find(|&&(at, m)| h[at] != m) {
                return Err(err(C, format!("frame header: unexpected byte at {at}")));
            }
            let header_len = u64::try_from(be_i32(&h, 11)).unwrap_or(u64::MAX);
            let frame_len = u64::from_be_bytes(h[16..24].try_into().unwrap_or([0; 8]));
            let nbytes = u64::try_from(be_i64(&h, 30)).unwrap_or(u64::MAX);
            let cbytes = u64::try_from(be_i64(&h, 39)).unwrap_or(u64::MAX);
            let typesize = usize::try_from(be_i32(&h, 48)).unwrap_or(0);
            let chunksize = u64::try_from(be_i32(&h, 58)).unwrap_or(u64::MAX);
            if (h[25] >> 4) & 3 != 1 || h[26] & 0x0f != 0 {
                return Err(err(C, "not a contiguous frame with 64-bit offsets"));
            }
            if frame_len != len || header_len < 62 || header_len > len {
                return Err(err(
                    C,
                    format!("frame of {frame_len} bytes, header {header_len}, {len} stored"),
                ));
            }
            if nbytes != data_size {
                return Err(err(
                    C,
                    format!("frame of {nbytes} bytes where {data_size} are due"),
                ));
            }
            if typesize == 0 || chunksize >= 1 << 31 || cbytes > len - header_len {
                return Err(err(C, "frame header out of range"));
            }
            let off_at = header_len + cbytes;
            if nbytes == 0 {
                return Ok(FrameMeta {
                    header_len,
                    cbytes,
                    nbytes,
                    chunksize,
                    nchunks: 0,
                    offsets: Vec::new(),
                    typesize,
                });
            }
            let mut oh = vec![0u8; 32.min(len - off_at) as usize];
            s.read_stored_at(off_at, &mut oh)?;
            let ohdr = ChunkHeader::parse(&oh).map_err(|e| err(C, format!("offsets: {e}")))?;
            if ohdr.nbytes as u64 > MAX_OFFSETS
                || ohdr.nbytes % 8 != 0
                || ohdr.cbytes as u64 > len - off_at
            {
                return Err(err(C, format!("offsets index of {} bytes", ohdr.nbytes)));
            }
            let mut src = vec![0u8; ohdr.cbytes];
            s.read_stored_at(off_at, &mut src)?;
            let raw = asdf_blosc2::chunk::decode(&src, ohdr.nbytes)
                .map_err(|e| err(C, format!("offsets: {e}")))?;
            let offsets: Vec<i64> = raw
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
                .collect();
            let nchunks = if chunksize > 0 {
                usize::try_from(nbytes.div_ceil(chunksize)).unwrap_or(usize::MAX)
            } else {
                offsets.len()
            };
            if nchunks > offsets.len() {
                return Err(err(
                    C,
                    format!("{} offsets for {nchunks} chunks", offsets.len()),
                ));
            }
            Ok(FrameMeta {
                header_len,
                cbytes,
                nbytes,
                chunksize,
                nchunks,
                offsets,
                typesize,
            })
        }

        /// As [`Chunk::skip`]: whole chunks before byte `n` are neither read nor decoded,
        /// nor the blocks of the chunk that holds it before it.
        pub(crate) fn skip(&mut self, n: u64) -> io::Result<u64> {
            if self.next != 0 || self.chunk.is_some() || self.special.is_some() {
                return Ok(0);
            }
            let Some(mut s) = self.stored.take() else {
                return Ok(0);
            };
            if self.meta.is_none() {
                match Self::parse(&mut s, self.data_size) {
                    Ok(m) => self.meta = Some(m),
                    Err(e) => {
                        self.stored = Some(s);
                        return Err(e);
                    }
                }
            }
            self.stored = Some(s);
            let Some(m) = &self.meta else {
                return Ok(0);
            };
            if m.chunksize == 0 {
                return Ok(0);
            }
            let k = (n / m.chunksize).min(m.nchunks as u64);
            self.next = k as usize;
            let mut skipped = k * m.chunksize;
            if skipped < n && self.next_chunk()? {
                let rest = n - skipped;
                if let Some(sp) = &mut self.special {
                    skipped += sp.skip(rest)?;
                } else if let Some(ch) = &mut self.chunk {
                    skipped += ch.skip(rest)?;
                }
            }
            Ok(skipped)
        }

        /// Starts chunk `next`; false after the last.
        fn next_chunk(&mut self) -> io::Result<bool> {
            // the stored bytes come back from the chunk that had them
            if let Some(ch) = self.chunk.take() {
                self.stored = Some(ch.stored);
            }
            let Some(mut s) = self.stored.take() else {
                return Err(err(C, "frame reader lost its stored bytes"));
            };
            if self.meta.is_none() {
                match Self::parse(&mut s, self.data_size) {
                    Ok(m) => self.meta = Some(m),
                    Err(e) => {
                        self.stored = Some(s);
                        return Err(e);
                    }
                }
            }
            let Some(m) = &self.meta else {
                return Ok(false);
            };
            let i = self.next;
            if i >= m.nchunks {
                self.stored = Some(s);
                return Ok(false);
            }
            self.next += 1;
            let off = m.offsets[i];
            let want = if m.chunksize > 0 {
                (m.nbytes - i as u64 * m.chunksize).min(m.chunksize)
            } else {
                0
            };
            if off < 0 {
                self.stored = Some(s);
                let pattern = special_pattern(m, i, off)?;
                let mut sp = Chunk::new((), 0, 0, want);
                sp.codec = C;
                sp.state = Some((
                    ChunkHeader::parse(&synthetic_header(want, m.typesize))
                        .map_err(|e| err(C, e))?,
                    Vec::new(),
                    Kind::Repeat(pattern),
                ));
                self.special = Some(sp);
                return Ok(true);
            }
            let at = m.header_len + off as u64;
            let end = m.header_len + m.cbytes;
            if at >= end {
                self.stored = Some(s);
                return Err(err(C, format!("chunk {i} starts outside the chunks")));
            }
            let limit = if m.chunksize > 0 {
                want
            } else {
                // a frame of varying chunks: each chunk's own header says
                let mut raw = [0u8; 16];
                s.read_stored_at(at, &mut raw)?;
                u64::from(le32(&raw, 4))
            };
            let mut ch = Chunk::new(s, at, end - at, limit);
            ch.codec = C;
            self.chunk = Some(ch);
            Ok(true)
        }
    }

    /// The chunks of a `bsc2` frame (see [`FramePiece`]), from its header and
    /// offsets index read by position; chunk data is not read (but for the headers of the
    /// chunks of a frame whose chunks vary in size).
    pub(crate) fn frame_pieces<S: StoredAt>(
        mut s: S,
        data_size: u64,
    ) -> io::Result<Vec<FramePiece>> {
        let m = FrameReader::<S>::parse(&mut s, data_size)?;
        let end = m.header_len + m.cbytes;
        let mut starts: Vec<u64> = m.offsets[..m.nchunks]
            .iter()
            .filter(|&&o| o >= 0)
            .map(|&o| m.header_len + o as u64)
            .collect();
        starts.sort_unstable();
        starts.dedup();
        let mut out = Vec::with_capacity(m.nchunks);
        let mut at_decoded = 0u64;
        for (i, &off) in m.offsets[..m.nchunks].iter().enumerate() {
            let want = if m.chunksize > 0 {
                (m.nbytes - (i as u64 * m.chunksize).min(m.nbytes)).min(m.chunksize)
            } else {
                0
            };
            if off < 0 {
                let pattern = special_pattern(&m, i, off)?;
                out.push(FramePiece {
                    decoded: at_decoded..at_decoded + want,
                    stored: None,
                    pattern: Some(pattern),
                });
                at_decoded += want;
                continue;
            }
            let at = m.header_len + off as u64;
            if at >= end {
                return Err(err(C, format!("chunk {i} starts outside the chunks")));
            }
            let next = starts
                .get(starts.partition_point(|&x| x <= at))
                .copied()
                .unwrap_or(end)
                .min(end);
            let len = if m.chunksize > 0 {
                want
            } else {
                let mut raw = [0u8; 16];
                s.read_stored_at(at, &mut raw)?;
                u64::from(le32(&raw, 4))
            };
            let decoded_end = at_decoded
                .checked_add(len)
                .filter(|&e| e <= data_size)
                .ok_or_else(|| err(C, format!("chunk {i} ends past the frame's bytes")))?;
            out.push(FramePiece {
                decoded: at_decoded..decoded_end,
                stored: Some(at..next),
                pattern: None,
            });
            at_decoded = decoded_end;
        }
        if at_decoded != data_size {
            return Err(err(
                C,
                format!("chunks of {at_decoded} bytes where {data_size} are due"),
            ));
        }
        Ok(out)
    }

    /// The bytes a special chunk of a frame repeats (its offset `off` is negative: zeros or
    /// NaNs); special chunks only in frames of equal chunks.
    fn special_pattern(m: &FrameMeta, i: usize, off: i64) -> io::Result<Vec<u8>> {
        let pattern = match (off as u64 >> 56) & 7 {
            1 | 4 => vec![0],
            2 if m.typesize == 4 => vec![0, 0, 0xc0, 0x7f],
            2 if m.typesize == 8 => vec![0, 0, 0, 0, 0, 0, 0xf8, 0x7f],
            k => return Err(err(C, format!("chunk {i}: special value kind {k}"))),
        };
        if m.chunksize == 0 {
            return Err(err(
                C,
                format!("chunk {i}: special chunk in a frame of varying chunks"),
            ));
        }
        Ok(pattern)
    }

    /// A 32-byte header of a special chunk of `n` bytes (for the special runs of a frame).
    fn synthetic_header(n: u64, typesize: usize) -> [u8; 32] {
        let mut h = [0u8; 32];
        h[0] = 5;
        h[2] = 0x01 | 0x04;
        h[3] = typesize.clamp(1, 255) as u8;
        h[4..8].copy_from_slice(&(n as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(n.max(1) as u32).to_le_bytes());
        h[12..16].copy_from_slice(&32u32.to_le_bytes());
        h
    }

    impl<S: StoredAt> Pieces for FrameReader<S> {
        /// The current chunk's next piece, into `out`: the chunk decodes straight into it.
        fn next_piece(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
            loop {
                if let Some(sp) = &mut self.special {
                    if sp.next_piece(out)? {
                        return Ok(true);
                    }
                    self.special = None;
                } else if let Some(ch) = &mut self.chunk {
                    if ch.next_piece(out)? {
                        return Ok(true);
                    }
                }
                if !self.next_chunk()? {
                    return Ok(false);
                }
            }
        }
    }
}

/// One chunk of a `bsc2` frame: the decoded bytes it yields, and where it is stored
/// (offsets in the stored bytes; the end is the next chunk's start, or the end of the
/// chunks) or, for a special chunk, the bytes it repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FramePiece {
    pub decoded: std::ops::Range<u64>,
    pub stored: Option<std::ops::Range<u64>>,
    pub pattern: Option<Vec<u8>>,
}

#[cfg(feature = "blosc2")]
pub(crate) use stream::frame_pieces;

/// The chunks of a `bsc2` frame (built without the `blosc2` feature: an error).
#[cfg(not(feature = "blosc2"))]
pub(crate) fn frame_pieces<S: super::pieced::StoredAt>(
    _: S,
    _: u64,
) -> std::io::Result<Vec<FramePiece>> {
    Err(super::pieced::invalid(
        super::Compression::Bsc2,
        "built without the `blosc2` feature".into(),
    ))
}
