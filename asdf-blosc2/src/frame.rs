//! Contiguous frames: a msgpack header (sizes, defaults, metalayers), the chunks, an offsets
//! chunk (where each chunk starts, or a run of special values) and a msgpack trailer
//! (variable-length metalayers).

use rayon::prelude::*;

use crate::chunk::{self, ChunkHeader};
use crate::error::{slice, Error};
use crate::progress::{Progress, Tally};

/// Smallest frame header (everything before the metalayers).
const HEADER_MIN: usize = 87;
/// The trailer's fixed end: `0xce` + trailer length (4) + `0xd8` + type + 16-byte fingerprint.
const TRAILER_TAIL: usize = 23;
/// Largest chunk size a frame may declare (C-Blosc2's limit: 2 GiB).
const MAX_CHUNK: u64 = i32::MAX as u64;

/// A stored (uncompressed) offsets index, as our writer makes it, is read in place. A
/// compressed one (as C-Blosc2 writes it) up to this many bytes is decoded when the frame is
/// parsed; a larger one (over 8,192 chunks) block by block as chunks are looked up, so that
/// reading one chunk costs about the same in a frame of 10 chunks or of 100,000.
const LAZY_OFFSETS: usize = 64 << 10;

/// Where each chunk starts.
#[derive(Debug)]
enum Offsets<'a> {
    Decoded(Vec<i64>),
    /// A stored (memcpyed) index, as our writer makes it: read in place, nothing decoded.
    Stored(&'a [u8]),
    Lazy {
        src: &'a [u8],
        at: u64,
        hdr: ChunkHeader,
        /// Decoded blocks of the index, by block number.
        blocks: std::sync::Mutex<std::collections::HashMap<usize, std::sync::Arc<Vec<u8>>>>,
    },
}

impl Offsets<'_> {
    fn get(&self, i: usize) -> Result<i64, Error> {
        match self {
            Offsets::Decoded(v) => v.get(i).copied().ok_or_else(|| {
                Error::malformed("chunk index", 0, format!("no offset for chunk {i}"))
            }),
            Offsets::Stored(raw) => i
                .checked_mul(8)
                .and_then(|k| raw.get(k..k.checked_add(8)?))
                .map(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
                .ok_or_else(|| {
                    Error::malformed("chunk index", 0, format!("no offset for chunk {i}"))
                }),
            Offsets::Lazy {
                src,
                at,
                hdr,
                blocks,
            } => {
                let bs = hdr.blocksize;
                let j = i * 8 / bs;
                let cached = blocks.lock().ok().and_then(|m| m.get(&j).cloned());
                let block = match cached {
                    Some(b) => b,
                    None => {
                        let end = ((j + 1) * bs).min(hdr.nbytes);
                        let b = std::sync::Arc::new(
                            chunk::decode_range(hdr, src, j * bs..end)
                                .map_err(|e| e.shifted(*at))?,
                        );
                        if let Ok(mut m) = blocks.lock() {
                            m.insert(j, b.clone());
                        }
                        b
                    }
                };
                let k = i * 8 - j * bs;
                let bytes = block.get(k..k + 8).ok_or_else(|| {
                    Error::malformed("offsets chunk", *at, format!("no offset for chunk {i}"))
                })?;
                Ok(i64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])))
            }
        }
    }
}

/// A chunk's stored bytes: its file in a sparse frame (path, bytes), or its bytes in the
/// frame (to the end of the chunks section) and the offset they start at.
enum Stored<'b> {
    File(std::path::PathBuf, Vec<u8>),
    InFrame(&'b [u8], u64),
}

/// A msgpack value of a metalayer or variable-length metalayer, decoded.
pub type Meta = rmpv::Value;

/// A contiguous frame, borrowed from its bytes (a memory map works).
#[derive(Debug)]
pub struct Frame<'a> {
    bytes: &'a [u8],
    /// For a sparse frame: the folder holding its chunk files.
    sparse_dir: Option<std::path::PathBuf>,
    header_len: usize,
    /// Decoded bytes in all chunks.
    pub nbytes: u64,
    /// Stored bytes of the chunks (without header, offsets and trailer).
    pub cbytes: u64,
    /// Item size.
    pub typesize: usize,
    /// Decoded size of each chunk (the last may be smaller); 0 when chunks vary.
    pub chunksize: usize,
    /// Number of chunks.
    pub nchunks: usize,
    offsets: Offsets<'a>,
    /// Fixed-size metalayers of the header: (name, raw msgpack content).
    pub metalayers: Vec<(String, Vec<u8>)>,
    /// Variable-length metalayers of the trailer: (name, decoded msgpack content).
    pub vlmetalayers: Vec<(String, Vec<u8>)>,
    /// Told how far [`Frame::decode_all`], [`Frame::b2nd_array`] and [`Frame::b2nd_rows`]
    /// have come.
    progress: Option<Progress>,
}

fn be_u16(b: &[u8]) -> usize {
    usize::from(u16::from_be_bytes([b[0], b[1]]))
}
fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}
fn be_i64(b: &[u8]) -> i64 {
    i64::from_be_bytes(b[..8].try_into().unwrap_or([0; 8]))
}

fn expect(bytes: &[u8], at: usize, marker: u8, what: &'static str) -> Result<(), Error> {
    let b = slice(bytes, at as u64, 1, what)?[0];
    if b != marker {
        return Err(Error::malformed(
            what,
            at as u64,
            format!("msgpack marker {b:#04x}, expected {marker:#04x}"),
        ));
    }
    Ok(())
}

/// Reads a metalayer index (`0x93 0xcd idx 0xde n {fixstr: 0xd2 offset}...`) starting at `at`
/// of `area` (offsets relative to `area`), then each `0xc6 len content` it points to.
fn read_metalayers(area: &[u8], at: usize, base: u64) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let shift = |e: Error| e.shifted(base);
    expect(area, at, 0x93, "metalayers").map_err(shift)?;
    expect(area, at + 1, 0xcd, "metalayers index size").map_err(shift)?;
    expect(area, at + 4, 0xde, "metalayers map").map_err(shift)?;
    let n = be_u16(slice(area, at as u64 + 5, 2, "metalayers count").map_err(shift)?);
    let mut pos = at + 7;
    let mut out = Vec::new();
    for _ in 0..n {
        let m = slice(area, pos as u64, 1, "metalayer name").map_err(shift)?[0];
        if m & 0xe0 != 0xa0 {
            return Err(Error::malformed(
                "metalayer name",
                base + pos as u64,
                format!("msgpack marker {m:#04x}, expected a fixstr"),
            ));
        }
        let len = usize::from(m & 0x1f);
        let name = slice(area, pos as u64 + 1, len as u64, "metalayer name").map_err(shift)?;
        let name = String::from_utf8_lossy(name).into_owned();
        pos += 1 + len;
        expect(area, pos, 0xd2, "metalayer offset").map_err(shift)?;
        let off = be_i32(slice(area, pos as u64 + 1, 4, "metalayer offset").map_err(shift)?);
        pos += 5;
        let off = usize::try_from(off)
            .map_err(|_| Error::malformed("metalayer offset", base + pos as u64 - 4, "negative"))?;
        expect(area, off, 0xc6, "metalayer content").map_err(shift)?;
        let clen = be_i32(slice(area, off as u64 + 1, 4, "metalayer content").map_err(shift)?);
        let clen = u64::try_from(clen).map_err(|_| {
            Error::malformed(
                "metalayer content length",
                base + off as u64 + 1,
                "negative",
            )
        })?;
        let content = slice(area, off as u64 + 5, clen, "metalayer content").map_err(shift)?;
        out.push((name, content.to_vec()));
    }
    Ok(out)
}

impl<'a> Frame<'a> {
    /// Parses the header, the offsets chunk and the trailer of the frame in `bytes`.
    ///
    /// A frame may declare far more decoded bytes than it stores (runs of zeros take no
    /// room); [`Frame::parse_limited`] refuses frames that declare more than a limit.
    pub fn parse(bytes: &'a [u8]) -> Result<Frame<'a>, Error> {
        Frame::parse_limited(bytes, u64::MAX)
    }

    /// As [`Frame::parse`], refusing a frame that declares more than `max_nbytes` decoded
    /// bytes in all.
    pub fn parse_limited(bytes: &'a [u8], max_nbytes: u64) -> Result<Frame<'a>, Error> {
        Frame::parse_any(bytes, max_nbytes, None)
    }

    /// Opens a sparse frame: `index` is the bytes of `DIR/chunks.b2frame` (a frame of header,
    /// offsets and trailer, no chunks), and chunk *n* is the file `DIR/%08X.chunk` named by
    /// its offset, read when the chunk is.
    pub fn parse_sparse(
        index: &'a [u8],
        dir: impl Into<std::path::PathBuf>,
        max_nbytes: u64,
    ) -> Result<Frame<'a>, Error> {
        Frame::parse_any(index, max_nbytes, Some(dir.into()))
    }

    fn parse_any(
        bytes: &'a [u8],
        max_nbytes: u64,
        sparse_dir: Option<std::path::PathBuf>,
    ) -> Result<Frame<'a>, Error> {
        let h = slice(bytes, 0, HEADER_MIN as u64, "frame header")?;
        if h[0] & 0xf0 != 0x90 || h[1] != 0xa8 || &h[2..10] != b"b2frame\0" {
            return Err(Error::malformed(
                "magic",
                0,
                "not a Blosc2 frame (no b2frame)",
            ));
        }
        expect(h, 10, 0xd2, "header length")?;
        let header_len = be_i32(&h[11..15]);
        expect(h, 15, 0xcf, "frame length")?;
        let frame_len = u64::from_be_bytes(h[16..24].try_into().unwrap_or([0; 8]));
        expect(h, 24, 0xa4, "flags")?;
        let general = h[25];
        let frame_type = h[26] & 0x0f;
        expect(h, 29, 0xd3, "uncompressed size")?;
        let nbytes = be_i64(&h[30..38]);
        expect(h, 38, 0xd3, "compressed size")?;
        let cbytes = be_i64(&h[39..47]);
        expect(h, 47, 0xd2, "type size")?;
        let typesize = be_i32(&h[48..52]);
        expect(h, 57, 0xd2, "chunk size")?;
        let chunksize = be_i32(&h[58..62]);
        let len = bytes.len() as u64;
        let header_len = usize::try_from(header_len)
            .ok()
            .filter(|&l| l >= HEADER_MIN && l as u64 <= len)
            .ok_or_else(|| {
                Error::malformed(
                    "header length",
                    11,
                    format!("{header_len} outside {HEADER_MIN}..={len}"),
                )
            })?;
        if frame_len != len {
            return Err(Error::malformed(
                "frame length",
                16,
                format!("header says {frame_len} bytes, the frame has {len}"),
            ));
        }
        match (frame_type, sparse_dir.is_some()) {
            (0, false) | (1, true) => {}
            (1, false) => {
                return Err(Error::Unsupported {
                    what: "the index of a sparse frame (open its folder)",
                    offset: 26,
                })
            }
            (0, true) => {
                return Err(Error::malformed(
                    "frame type",
                    26,
                    "a contiguous frame where a sparse frame's index was expected",
                ))
            }
            (t, _) => {
                return Err(Error::Unsupported {
                    what: if t < 16 {
                        "reserved frame type"
                    } else {
                        "user-defined frame type"
                    },
                    offset: 26,
                })
            }
        }
        let sparse = sparse_dir.is_some();
        if (general >> 4) & 3 != 1 {
            return Err(Error::Unsupported {
                what: "chunk offsets other than 64-bit",
                offset: 25,
            });
        }
        let nbytes = u64::try_from(nbytes)
            .map_err(|_| Error::malformed("uncompressed size", 30, "negative"))?;
        if nbytes > max_nbytes {
            return Err(Error::TooLarge {
                what: "frame",
                size: nbytes,
                limit: max_nbytes,
            });
        }
        let cbytes = u64::try_from(cbytes)
            .ok()
            .filter(|&c| sparse || c <= len - header_len as u64)
            .ok_or_else(|| Error::malformed("compressed size", 39, "outside the frame"))?;
        let typesize = usize::try_from(typesize)
            .ok()
            .filter(|&t| t > 0)
            .ok_or_else(|| Error::malformed("type size", 48, "not positive"))?;
        let chunksize = usize::try_from(chunksize)
            .ok()
            .filter(|&c| c as u64 <= MAX_CHUNK)
            .ok_or_else(|| Error::malformed("chunk size", 58, "negative"))?;
        let metalayers = read_metalayers(&bytes[..header_len], HEADER_MIN, 0)?;

        // the offsets chunk follows the data chunks
        // (a sparse frame's index holds no chunks: its offsets follow the header)
        let off_at = header_len as u64 + if sparse { 0 } else { cbytes };
        let (offsets, count) = if nbytes > 0 {
            let off_src = &bytes[off_at as usize..];
            let oh = ChunkHeader::parse(off_src).map_err(|e| e.shifted(off_at))?;
            if oh.nbytes % 8 != 0 {
                return Err(Error::malformed(
                    "offsets chunk",
                    off_at,
                    format!("{} bytes is not a whole number of offsets", oh.nbytes),
                ));
            }
            // at most one 8-byte offset per stored byte of the frame
            if oh.nbytes as u64 > len.saturating_mul(8) {
                return Err(Error::malformed(
                    "offsets chunk",
                    off_at,
                    format!("{} bytes of offsets in a frame of {len}", oh.nbytes),
                ));
            }
            let count = oh.nbytes / 8;
            if oh.memcpyed() && oh.special == chunk::Special::None {
                // stored as it is: each offset is read in place when looked up
                let raw = slice(
                    off_src,
                    oh.header_len as u64,
                    oh.nbytes as u64,
                    "offsets chunk",
                )
                .map_err(|e| e.shifted(off_at))?;
                if oh.cbytes != oh.nbytes + oh.header_len {
                    return Err(Error::malformed(
                        "offsets chunk",
                        off_at + 12,
                        format!(
                            "a stored chunk of {} bytes must take {} bytes",
                            oh.nbytes,
                            oh.nbytes + oh.header_len
                        ),
                    ));
                }
                (Offsets::Stored(raw), count)
            } else if oh.nbytes <= LAZY_OFFSETS || oh.vl_blocks() {
                // (an index of variable-length blocks, which C-Blosc2 does not write, has
                // no fixed block size to look offsets up by: decoded whole)
                let raw = chunk::decode(off_src, oh.nbytes).map_err(|e| e.shifted(off_at))?;
                let v = raw
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect();
                (Offsets::Decoded(v), count)
            } else {
                // many chunks: decode only the blocks of the index that are looked up
                let src = slice(off_src, 0, oh.cbytes as u64, "offsets chunk")
                    .map_err(|e| e.shifted(off_at))?;
                (
                    Offsets::Lazy {
                        src,
                        at: off_at,
                        hdr: oh,
                        blocks: Default::default(),
                    },
                    count,
                )
            }
        } else {
            (Offsets::Decoded(Vec::new()), 0)
        };
        let nchunks = if chunksize > 0 {
            usize::try_from(nbytes.div_ceil(chunksize as u64)).unwrap_or(usize::MAX)
        } else {
            count
        };
        if nchunks > count {
            return Err(Error::malformed(
                "offsets chunk",
                off_at,
                format!("{count} offsets for {nchunks} chunks"),
            ));
        }

        // trailer: its length sits 22 bytes before the end
        let tail_at = len
            .checked_sub(TRAILER_TAIL as u64)
            .ok_or_else(|| Error::malformed("trailer", 0, "frame too short for a trailer"))?;
        expect(bytes, tail_at as usize, 0xce, "trailer length")?;
        let tlen = u64::from(u32::from_be_bytes(
            slice(bytes, tail_at + 1, 4, "trailer length")?
                .try_into()
                .unwrap_or([0; 4]),
        ));
        let t_at = len
            .checked_sub(tlen)
            .filter(|&t| t >= header_len as u64 && tlen >= 25)
            .ok_or_else(|| {
                Error::malformed("trailer length", tail_at + 1, format!("{tlen} bytes"))
            })?;
        let trailer = &bytes[t_at as usize..];
        // each variable-length metalayer's content is itself a Blosc2 chunk
        let vlmetalayers = read_metalayers(trailer, 2, t_at)?
            .into_iter()
            .map(|(name, c)| {
                let limit = c.len().saturating_mul(1024).max(1 << 20);
                let raw = chunk::decode(&c, limit).map_err(|e| e.shifted(t_at))?;
                Ok((name, raw))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Frame {
            bytes,
            sparse_dir,
            header_len,
            nbytes,
            cbytes,
            typesize,
            chunksize,
            nchunks,
            offsets,
            metalayers,
            vlmetalayers,
            progress: None,
        })
    }

    /// Reports to `progress` how far [`Frame::decode_all`], [`Frame::b2nd_array`] and
    /// [`Frame::b2nd_rows`] have come: `(done, total)` in bytes of their output, once per
    /// chunk decoded (see [`Progress`]).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use asdf_blosc2::{CParams, Frame, FrameWriter, Progress};
    /// let mut w = FrameWriter::new(1000, CParams::default());
    /// for piece in vec![7u8; 2500].chunks(1000) {
    ///     w.append(piece)?;
    /// }
    /// let bytes = w.finish()?;
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let s = seen.clone();
    /// let progress = Progress::new(move |done, total| s.lock().unwrap().push((done, total)));
    /// let frame = Frame::parse(&bytes)?.with_progress(progress);
    /// assert_eq!(frame.decode_all()?, vec![7u8; 2500]);
    /// // one report per chunk, in the order the chunks were done (on several threads)
    /// let seen = seen.lock().unwrap();
    /// assert_eq!(seen.len(), 3);
    /// assert!(seen.windows(2).all(|w| w[0].0 < w[1].0));
    /// assert_eq!(seen.last(), Some(&(2500, 2500)));
    /// # Ok::<(), asdf_blosc2::Error>(())
    /// ```
    pub fn with_progress(mut self, progress: Progress) -> Self {
        self.progress = Some(progress);
        self
    }

    /// The decoded size of chunk `i`.
    pub fn chunk_len(&self, i: usize) -> usize {
        if self.chunksize == 0 {
            return 0;
        }
        let start = i as u64 * self.chunksize as u64;
        self.nbytes.saturating_sub(start).min(self.chunksize as u64) as usize
    }

    /// Decodes chunk `i` alone.
    pub fn chunk(&self, i: usize) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        self.chunk_into(i, &mut out)?;
        Ok(out)
    }

    /// Decodes chunk `i` straight into `dst` when it is a stored chunk of exactly that size
    /// (returns `false`, touching nothing, otherwise).
    fn chunk_direct(&self, i: usize, dst: &mut [u8]) -> Result<bool, Error> {
        if i >= self.nchunks || self.sparse_dir.is_some() {
            return Ok(false);
        }
        let off = self.offsets.get(i)?;
        let at = (self.header_len as u64).saturating_add(off as u64);
        if off < 0 || at >= self.header_len as u64 + self.cbytes {
            return Ok(false);
        }
        let src = &self.bytes[at as usize..(self.header_len as u64 + self.cbytes) as usize];
        let h = ChunkHeader::parse(src).map_err(|e| e.shifted(at))?;
        if h.nbytes != dst.len() {
            return Ok(false);
        }
        chunk::decode_to_slice(&h, src, dst).map_err(|e| e.shifted(at))?;
        Ok(true)
    }

    /// The blocks of chunk `i`, a chunk of variable-length blocks (C-Blosc2 3.x, as
    /// `blosc2_vlcompress` and python-blosc2's `BatchArray` write them), one buffer per
    /// block: what python-blosc2's `SChunk.get_vlblock(i, j)` gives for each `j`. The
    /// blocks one after the other are what [`Frame::chunk`] gives. A chunk of regular
    /// blocks, or a run of special values, is an error.
    pub fn vl_blocks(&self, i: usize) -> Result<Vec<Vec<u8>>, Error> {
        if i >= self.nchunks {
            return Err(Error::malformed(
                "chunk index",
                0,
                format!("chunk {i} of {}", self.nchunks),
            ));
        }
        let off = self.offsets.get(i)?;
        if off < 0 {
            return Err(Error::malformed(
                "chunk offset",
                0,
                format!("chunk {i} is a run of special values, not variable-length blocks"),
            ));
        }
        let limit = self.chunk_limit(i);
        match self.stored_chunk(i, off)? {
            Stored::File(_, src) => chunk::decode_vl_blocks(&src, limit),
            Stored::InFrame(src, at) => {
                chunk::decode_vl_blocks(src, limit).map_err(|e| e.shifted(at))
            }
        }
    }

    /// The most bytes chunk `i` may decode to: its length in a frame of fixed chunk size,
    /// else what the frame declares in all (at most C-Blosc2's 2 GiB).
    fn chunk_limit(&self, i: usize) -> usize {
        if self.chunksize > 0 {
            self.chunk_len(i)
        } else {
            usize::try_from(self.nbytes.min(MAX_CHUNK)).unwrap_or(usize::MAX)
        }
    }

    /// Where chunk `i`, stored at offset `off` (not a special-value run), is: its file in a
    /// sparse frame (read), else its bytes to the end of the chunks section with the offset
    /// they start at.
    fn stored_chunk(&self, i: usize, off: i64) -> Result<Stored<'_>, Error> {
        if let Some(dir) = &self.sparse_dir {
            let id = u32::try_from(off).map_err(|_| {
                Error::malformed("chunk offset", 0, format!("chunk {i}: file number {off}"))
            })?;
            let path = dir.join(format!("{id:08X}.chunk"));
            let src = std::fs::read(&path).map_err(|e| Error::Io {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
            return Ok(Stored::File(path, src));
        }
        let at = (self.header_len as u64).saturating_add(off as u64);
        if off < 0 || at >= self.header_len as u64 + self.cbytes {
            return Err(Error::malformed(
                "chunk offset",
                at,
                format!("chunk {i} starts outside the chunks section"),
            ));
        }
        let end = (self.header_len as u64 + self.cbytes) as usize;
        Ok(Stored::InFrame(&self.bytes[at as usize..end], at))
    }

    /// Decodes chunk `i` into `out` (cleared first).
    pub fn chunk_into(&self, i: usize, out: &mut Vec<u8>) -> Result<(), Error> {
        out.clear();
        if i >= self.nchunks {
            return Err(Error::malformed(
                "chunk index",
                0,
                format!("chunk {i} of {}", self.nchunks),
            ));
        }
        let off = self.offsets.get(i)?;
        // a chunk decodes to at most what the frame declares
        let limit = self.chunk_limit(i);
        if off < 0 {
            // a run of special values: bits 0-2 of the offset's top byte say which
            let n = self.chunk_len(i);
            match (off as u64 >> 56) & 7 {
                1 | 4 => out.resize(n, 0),
                2 => {
                    let one: &[u8] = match self.typesize {
                        4 => &[0, 0, 0xc0, 0x7f],
                        8 => &[0, 0, 0, 0, 0, 0, 0xf8, 0x7f],
                        t => {
                            return Err(Error::malformed(
                                "special chunk",
                                0,
                                format!("NaN run with type size {t}"),
                            ))
                        }
                    };
                    for _ in 0..n / one.len() {
                        out.extend_from_slice(one);
                    }
                }
                k => {
                    return Err(Error::malformed(
                        "chunk offset",
                        0,
                        format!("reserved special value kind {k} for chunk {i}"),
                    ))
                }
            }
            return Ok(());
        }
        let (src, at) = match self.stored_chunk(i, off)? {
            Stored::File(path, src) => {
                let h = ChunkHeader::parse(&src)?;
                chunk::decode_into(&h, &src, limit, out)?;
                let want = self.chunk_len(i);
                if self.chunksize > 0 && out.len() != want {
                    return Err(Error::malformed(
                        "chunk",
                        0,
                        format!("{}: {} bytes, {want} expected", path.display(), out.len()),
                    ));
                }
                return Ok(());
            }
            Stored::InFrame(src, at) => (src, at),
        };
        let h = ChunkHeader::parse(src).map_err(|e| e.shifted(at))?;
        chunk::decode_into(&h, src, limit, out).map_err(|e| e.shifted(at))?;
        let want = self.chunk_len(i);
        if self.chunksize > 0 && out.len() != want {
            return Err(Error::malformed(
                "chunk",
                at,
                format!("chunk {i} decodes to {} bytes, {want} expected", out.len()),
            ));
        }
        Ok(())
    }

    /// All chunks, decoded and concatenated (in parallel, chunks on rayon's threads).
    pub fn decode_all(&self) -> Result<Vec<u8>, Error> {
        let tally = Tally::new(self.progress.as_ref(), self.nbytes);
        if self.chunksize == 0 {
            let mut all = Vec::new();
            let mut one = Vec::new();
            for i in 0..self.nchunks {
                self.chunk_into(i, &mut one)?;
                all.extend_from_slice(&one);
                tally.add(one.len() as u64);
            }
            tally.finish();
            return Ok(all);
        }
        let mut all = zeroed(self.nbytes)?;
        let chunk = |buf: &mut Vec<u8>, (i, dst): (usize, &mut [u8])| {
            // a stored chunk of the expected size decodes in place
            if !self.chunk_direct(i, dst)? {
                self.chunk_into(i, buf)?;
                dst.copy_from_slice(buf);
            }
            tally.add(dst.len() as u64);
            Ok::<(), Error>(())
        };
        if rayon::current_num_threads() > 1 {
            all.par_chunks_mut(self.chunksize)
                .enumerate()
                .try_for_each_init(Vec::new, |buf, c| chunk(buf, c))?;
        } else {
            // one thread: on the calling thread (see `b2nd_rows`)
            let mut buf = Vec::new();
            for c in all.chunks_mut(self.chunksize).enumerate() {
                chunk(&mut buf, c)?;
            }
        }
        tally.finish();
        Ok(all)
    }

    /// A metalayer's content, decoded from msgpack.
    pub fn meta(&self, name: &str) -> Option<Result<Meta, Error>> {
        self.metalayers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| decode_msgpack(c, "metalayer"))
    }

    /// The variable-length metalayers, decoded from msgpack.
    pub fn vlmeta(&self) -> Result<Vec<(String, Meta)>, Error> {
        self.vlmetalayers
            .iter()
            .map(|(n, c)| Ok((n.clone(), decode_msgpack(c, "vlmetalayer")?)))
            .collect()
    }

    /// The frame's `b2nd` metalayer, if it has one: an n-dimensional array.
    pub fn b2nd(&self) -> Option<Result<B2nd, Error>> {
        self.meta("b2nd").map(|m| B2nd::from_meta(&m?))
    }
}

/// `n` zero bytes (the one zeroed allocation of asdf-rs, `asdf_common::mem`: fresh pages,
/// huge pages asked for large buffers), or an error when they cannot be had.
fn zeroed(n: u64) -> Result<Vec<u8>, Error> {
    let too_big = || Error::TooLarge {
        what: "decoded data",
        size: n,
        limit: isize::MAX as u64,
    };
    let n = usize::try_from(n).map_err(|_| too_big())?;
    asdf_common::mem::zeroed_bytes(n).ok_or_else(too_big)
}

fn decode_msgpack(bytes: &[u8], what: &'static str) -> Result<Meta, Error> {
    let mut r = bytes;
    let v = rmpv::decode::read_value_ref_with_max_depth(&mut r, 64)
        .map_err(|e| Error::malformed(what, 0, format!("msgpack: {e}")))?;
    Ok(v.to_owned())
}

/// The `b2nd` metalayer: shape, chunk and block shapes and the numpy datatype of an
/// n-dimensional array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct B2nd {
    /// The array's shape.
    pub shape: Vec<u64>,
    /// The shape of each chunk (chunks at the edges are padded to it).
    pub chunkshape: Vec<u64>,
    /// The shape of each block inside a chunk.
    pub blockshape: Vec<u64>,
    /// The numpy datatype string (`<f8`, `|S7`, `[('id', '<i4'), ('x', '<f8')]`).
    pub dtype: String,
}

impl B2nd {
    fn from_meta(m: &Meta) -> Result<B2nd, Error> {
        let bad = |d: &str| Error::malformed("b2nd metalayer", 0, d.to_string());
        let items = m.as_array().ok_or_else(|| bad("not a list"))?;
        if items.len() < 7 {
            return Err(bad("fewer than 7 items"));
        }
        let dims = |v: &Meta| -> Result<Vec<u64>, Error> {
            v.as_array()
                .ok_or_else(|| bad("a shape is not a list"))?
                .iter()
                .map(|d| {
                    d.as_u64()
                        .ok_or_else(|| bad("a dimension is not a whole number"))
                })
                .collect()
        };
        let ndim = items[1].as_u64().ok_or_else(|| bad("ndim"))? as usize;
        let shape = dims(&items[2])?;
        let chunkshape = dims(&items[3])?;
        let blockshape = dims(&items[4])?;
        if shape.len() != ndim || chunkshape.len() != ndim || blockshape.len() != ndim {
            return Err(bad("shapes disagree with ndim"));
        }
        if items[5].as_u64() != Some(0) {
            return Err(bad("dtype format other than numpy (0)"));
        }
        let dtype = items[6]
            .as_str()
            .ok_or_else(|| bad("dtype is not a string"))?
            .to_string();
        Ok(B2nd {
            shape,
            chunkshape,
            blockshape,
            dtype,
        })
    }
}

impl Frame<'_> {
    /// The whole n-dimensional array of a `.b2nd` frame, in C order: each chunk is padded to
    /// the chunk shape, and within it the blocks are in C order, each block in C order.
    pub fn b2nd_array(&self, nd: &B2nd) -> Result<Vec<u8>, Error> {
        let rows = nd.shape.first().copied().unwrap_or(1);
        self.b2nd_rows(nd, 0..rows)
    }

    /// Rows `rows` (along the first axis) of a `.b2nd` array, in C order: only the chunks
    /// that hold them are decoded. A 0-d array has one row.
    pub fn b2nd_rows(&self, nd: &B2nd, rows: std::ops::Range<u64>) -> Result<Vec<u8>, Error> {
        let ndim = nd.shape.len();
        let item = self.typesize;
        let count = nd.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        let all = count
            .and_then(|c| c.checked_mul(item as u64))
            .filter(|&t| t <= self.nbytes.max(item as u64))
            .ok_or_else(|| {
                Error::malformed("b2nd metalayer", 0, "shape larger than the frame's data")
            })?;
        let nrows = nd.shape.first().copied().unwrap_or(1);
        let (r0, r1) = (rows.start, rows.end);
        if r0 > r1 || r1 > nrows {
            return Err(Error::malformed(
                "row range",
                0,
                format!("rows {r0}..{r1} of an array of {nrows}"),
            ));
        }
        let row_bytes = all.checked_div(nrows).unwrap_or(0);
        let total = ((r1 - r0) * row_bytes) as usize;
        let mut out = zeroed(total as u64)?;
        let tally = Tally::new(self.progress.as_ref(), total as u64);
        if total == 0 || ndim == 0 {
            if ndim == 0 && total > 0 {
                let c = self.chunk(0)?;
                out.copy_from_slice(slice(&c, 0, total as u64, "0-d array")?);
                tally.finish();
            }
            return Ok(out);
        }
        if nd.chunkshape.contains(&0) || nd.blockshape.contains(&0) {
            return Err(Error::malformed(
                "b2nd metalayer",
                0,
                "a zero chunk or block dimension",
            ));
        }
        // chunks per dimension, and blocks per chunk per dimension
        let nchunks: Vec<u64> = (0..ndim)
            .map(|d| nd.shape[d].div_ceil(nd.chunkshape[d]))
            .collect();
        let nblocks: Vec<u64> = (0..ndim)
            .map(|d| nd.chunkshape[d].div_ceil(nd.blockshape[d]))
            .collect();
        let too_big = || Error::malformed("b2nd metalayer", 0, "chunk or block shape too large");
        let block_items = nd
            .blockshape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .ok_or_else(too_big)?;
        let blocks_per_chunk = nblocks
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .ok_or_else(too_big)?;
        let chunk_items = blocks_per_chunk
            .checked_mul(block_items)
            .filter(|c| c.checked_mul(item as u64).is_some())
            .ok_or_else(too_big)?;
        // chunks of whole rows (every dimension but the first complete, in chunks and in
        // blocks) lie one after the other in the array: decode them in parallel, in place
        if (1..ndim).all(|d| nd.chunkshape[d] == nd.shape[d] && nd.blockshape[d] == nd.shape[d]) {
            let cr = nd.chunkshape[0];
            let (c0, c1) = (r0 / cr, r1.div_ceil(cr));
            if (self.nchunks as u64) < c1 {
                return Err(Error::malformed(
                    "b2nd metalayer",
                    0,
                    format!("{} chunks for the array's shape", self.nchunks),
                ));
            }
            // the output cut at chunk boundaries, each piece with its chunk and first row
            let mut pieces = Vec::new();
            let mut rest = &mut out[..];
            for c in c0..c1 {
                let from = r0.max(c * cr);
                let to = r1.min((c + 1) * cr);
                let (piece, tail) = rest.split_at_mut(((to - from) * row_bytes) as usize);
                pieces.push((c as usize, (from - c * cr) * row_bytes, piece));
                rest = tail;
            }
            let piece = |buf: &mut Vec<u8>, (c, skip, dst): (usize, u64, &mut [u8])| {
                // a whole chunk that is exactly these rows: no copy
                if skip == 0 && self.chunk_direct(c, dst)? {
                    tally.add(dst.len() as u64);
                    return Ok(());
                }
                self.chunk_into(c, buf)?;
                let got = buf
                    .get(skip as usize..skip as usize + dst.len())
                    .ok_or_else(|| {
                        Error::malformed(
                            "b2nd chunk",
                            0,
                            format!("chunk {c} holds {} bytes, rows past them asked", buf.len()),
                        )
                    })?;
                dst.copy_from_slice(got);
                tally.add(dst.len() as u64);
                Ok::<(), Error>(())
            };
            if rayon::current_num_threads() > 1 {
                pieces
                    .into_par_iter()
                    .try_for_each_init(Vec::new, |buf, p| piece(buf, p))?;
            } else {
                // one thread: on the calling thread, not the pool's one worker. The pages of
                // the fresh output are then first touched by the thread that mapped them;
                // handed to another thread, the kernel's work to back them took 3-6 times
                // longer (1 GiB: 0.12-0.28 s of system time against 0.04-0.08 s)
                let mut buf = Vec::new();
                for p in pieces {
                    piece(&mut buf, p)?;
                }
            }
            tally.finish();
            return Ok(out);
        }
        let mut buf = Vec::new();
        let mut ci = vec![0u64; ndim];
        for c in 0..self.nchunks {
            // chunks whose rows are all outside the range are not decoded
            let first = ci[0] * nd.chunkshape[0];
            if first >= r1 || first + nd.chunkshape[0] <= r0 {
                for d in (0..ndim).rev() {
                    ci[d] += 1;
                    if ci[d] < nchunks[d] {
                        break;
                    }
                    ci[d] = 0;
                }
                continue;
            }
            self.chunk_into(c, &mut buf)?;
            if (buf.len() as u64) < chunk_items * item as u64 {
                return Err(Error::malformed(
                    "b2nd chunk",
                    0,
                    format!(
                        "chunk {c} holds {} bytes, its blocks need {}",
                        buf.len(),
                        chunk_items * item as u64
                    ),
                ));
            }
            // walk every block of this chunk, and every row (last dimension) of each block
            let mut copied = 0u64;
            let mut bi = vec![0u64; ndim];
            for b in 0..blocks_per_chunk {
                let base = b * block_items * item as u64;
                let mut ei = vec![0u64; ndim];
                let rows = block_items / nd.blockshape[ndim - 1];
                for r in 0..rows {
                    // global index of this row's first element
                    let mut inside = true;
                    let mut flat = 0u64;
                    for d in 0..ndim {
                        let g = ci[d] * nd.chunkshape[d] + bi[d] * nd.blockshape[d] + ei[d];
                        let within_chunk = bi[d] * nd.blockshape[d] + ei[d] < nd.chunkshape[d];
                        let (g, extent) = if d == 0 {
                            (g.wrapping_sub(r0), r1 - r0)
                        } else {
                            (g, nd.shape[d])
                        };
                        if g >= extent || !within_chunk {
                            inside = false;
                            break;
                        }
                        flat = flat * extent + g;
                    }
                    if inside {
                        let d = ndim - 1;
                        let g0 = ci[d] * nd.chunkshape[d] + bi[d] * nd.blockshape[d];
                        let lim_chunk = nd.chunkshape[d] - bi[d] * nd.blockshape[d];
                        let n = nd.blockshape[d].min(nd.shape[d] - g0).min(lim_chunk);
                        let from = (base + r * nd.blockshape[d] * item as u64) as usize;
                        let to = (flat * item as u64) as usize;
                        let len = (n * item as u64) as usize;
                        out[to..to + len].copy_from_slice(&buf[from..from + len]);
                        copied += len as u64;
                    }
                    // next row: increment ei over dims 0..ndim-1 (last dim is the row)
                    for d in (0..ndim - 1).rev() {
                        ei[d] += 1;
                        if ei[d] < nd.blockshape[d] {
                            break;
                        }
                        ei[d] = 0;
                    }
                }
                for d in (0..ndim).rev() {
                    bi[d] += 1;
                    if bi[d] < nblocks[d] {
                        break;
                    }
                    bi[d] = 0;
                }
            }
            tally.add(copied);
            for d in (0..ndim).rev() {
                ci[d] += 1;
                if ci[d] < nchunks[d] {
                    break;
                }
                ci[d] = 0;
            }
        }
        tally.finish();
        Ok(out)
    }
}
