//! Decoding a block as a stream: [`decoder`] reads stored bytes from any reader and yields
//! the decoded bytes a piece at a time, so a block larger than memory can be converted or
//! copied with memory bounded by the codec's window. `zlib`, `bzp2`, `zstd` and `lz4f` are
//! streams already; `lz4` blocks are decoded one 4 MiB chunk at a time.
//!
//! The Blosc formats are not streams: their block starts sit before the data (`blsc`,
//! `bls2`) or the chunk offsets after it (`bsc2`), and a multithreaded writer stores blocks
//! in the order its threads finish. [`decoder`] returns `None` for them; [`decoder_at`]
//! decodes them from stored bytes it reads by position ([`StoredAt`]), in decoded order:
//! `blsc` and `bls2` one internal block at a time (each block is copied into a one-block
//! chunk with the original header and decoded alone), `bsc2` chunk by chunk, each chunk
//! block by block. Memory holds one block (c-blosc1 blocks are at most a few MiB; one
//! Blosc2 chunk when it uses a dictionary, lazy or variable-length blocks or the delta filter,
//! whose blocks are not independent).
//!
//! The decoded length is checked: more than `data_size` bytes, or fewer at the end of the
//! stored bytes, is an [`std::io::ErrorKind::InvalidData`] error naming the codec.

use std::io::{self, BufRead, Read};

use super::Compression;

/// A reader of the decoded bytes of a block whose stored bytes `stored` gives (only its
/// `used_size` bytes: limit it with [`Read::take`]). `data_size` is the block's declared
/// decoded size, which the output must match exactly. `None` for the codecs that are not
/// streams (`blsc`, `bsc2`, `bls2`).
///
/// ```
/// use asdf_core::codec::Compression;
/// use asdf_core::unstable::{decoder, encode};
/// use std::io::Read;
/// let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
/// let stored = encode(Compression::Zstd, &data, None).unwrap();
/// let mut out = Vec::new();
/// decoder(Compression::Zstd, &stored[..], data.len() as u64)
///     .unwrap()
///     .read_to_end(&mut out)?;
/// assert_eq!(out, data);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn decoder<'r, R: BufRead + Send + 'r>(
    c: Compression,
    stored: R,
    data_size: u64,
) -> Option<Box<dyn Read + Send + 'r>> {
    let inner: Box<dyn Read + Send + 'r> = match c {
        Compression::Zlib => Box::new(ZlibStreams {
            dec: Some(flate2::bufread::ZlibDecoder::new(stored)),
        }),
        Compression::Bzp2 => Box::new(bzip2::bufread::MultiBzDecoder::new(stored)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(stored).ok()?),
        Compression::Lz4f => Box::new(lz4_flex::frame::FrameDecoder::new(stored)),
        Compression::Lz4 => Box::new(Lz4Chunks {
            stored,
            out: Vec::new(),
            at: 0,
        }),
        Compression::Blsc | Compression::Bsc2 | Compression::Bls2 => return None,
    };
    Some(Box::new(Exact {
        inner,
        codec: c,
        left: data_size,
    }))
}

/// Positional access to a block's stored bytes (its `used_size` bytes), for
/// [`decoder_at`].
pub trait StoredAt: Send {
    /// The number of stored bytes.
    fn stored_len(&self) -> u64;
    /// Fills `buf` from byte `offset` of the stored bytes; an error if they end first.
    fn read_stored_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
}

impl StoredAt for &[u8] {
    fn stored_len(&self) -> u64 {
        self.len() as u64
    }
    fn read_stored_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|o| self.get(o..)?.get(..buf.len()))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{} bytes at {offset} past the stored bytes", buf.len()),
                )
            })?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// A reader of the decoded bytes of a block of `data_size` bytes whose stored bytes
/// `stored` gives by position: every codec (`None` only for `bsc2` and `bls2` when asdf-core
/// is built without the `blosc2` feature). The stream codecs read the stored bytes in order
/// (as [`decoder`]); the Blosc codecs read each block where it is stored, in decoded order.
///
/// ```
/// use asdf_core::codec::Compression;
/// use asdf_core::unstable::{decoder_at, encode};
/// use std::io::Read;
/// let data: Vec<u8> = (0..100_000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
/// let stored = encode(Compression::Bls2, &data, None).unwrap();
/// let mut out = Vec::new();
/// decoder_at(Compression::Bls2, &stored[..], data.len() as u64)
///     .unwrap()
///     .read_to_end(&mut out)?;
/// assert_eq!(out, data);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn decoder_at<'r, S: StoredAt + 'r>(
    c: Compression,
    stored: S,
    data_size: u64,
) -> Option<Box<dyn Read + Send + 'r>> {
    let inner: Box<dyn Read + Send + 'r> = match c {
        Compression::Blsc => Box::new(Blosc1::new(stored)),
        #[cfg(feature = "blosc2")]
        Compression::Bls2 => {
            let len = stored.stored_len();
            Box::new(b2::Chunk::new(stored, 0, len, data_size))
        }
        #[cfg(feature = "blosc2")]
        Compression::Bsc2 => Box::new(b2::FrameReader::new(stored, data_size)),
        #[cfg(not(feature = "blosc2"))]
        Compression::Bls2 | Compression::Bsc2 => return None,
        _ => {
            let len = stored.stored_len();
            let seq = io::BufReader::with_capacity(1 << 20, InOrder { stored, at: 0, len });
            return decoder(c, seq, data_size);
        }
    };
    Some(Box::new(Exact {
        inner,
        codec: c,
        left: data_size,
    }))
}

/// The stored bytes read in order through [`StoredAt`].
struct InOrder<S> {
    stored: S,
    at: u64,
    len: u64,
}

impl<S: StoredAt> Read for InOrder<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf
            .len()
            .min(usize::try_from(self.len - self.at).unwrap_or(usize::MAX));
        if n == 0 {
            return Ok(0);
        }
        let dst = buf.get_mut(..n).unwrap_or_default();
        self.stored.read_stored_at(self.at, dst)?;
        self.at += n as u64;
        Ok(n)
    }
}

fn le32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        a.copy_from_slice(s);
    }
    u32::from_le_bytes(a)
}

/// Block starts of a chunk, read by position a window at a time (a chunk of many small
/// blocks costs no more memory than one of few).
struct Starts {
    /// Stored offset of the first start.
    at: u64,
    count: usize,
    first: usize,
    window: Vec<u32>,
}

impl Starts {
    const WINDOW: usize = 4096;

    fn get<S: StoredAt>(&mut self, s: &mut S, j: usize) -> io::Result<u32> {
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
const DONT_SPLIT: u8 = 0x10;
/// Flag of both chunk formats: the data is stored as it is after the header.
const MEMCPYED: u8 = 0x02;

/// A one-block chunk: `header` (16 or 32 bytes) with its sizes set for a block of `bsize`
/// decoded bytes whose stored streams are `data`, the one block start after the header.
/// `last_partial` marks the short last block, which is never split into streams (the flag
/// says so, since a one-block chunk's only block is not short).
fn one_block_chunk(header: &[u8], bsize: u32, data: &[u8], last_partial: bool) -> Vec<u8> {
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
fn block_extent(start: u64, cbytes: u64, bsize: u64, typesize: u64) -> u64 {
    (bsize + 4 * typesize.max(1)).min(cbytes.saturating_sub(start))
}

/// `blsc`: one Blosc1 chunk, decoded a block at a time through asdf-blosc2.
struct Blosc1<S> {
    stored: S,
    state: Option<B1State>,
    out: Vec<u8>,
    at: usize,
    /// Next block to decode (or, for a chunk stored as it is, bytes copied so far).
    next: u64,
}

struct B1State {
    header: [u8; 16],
    nbytes: u64,
    blocksize: u64,
    cbytes: u64,
    typesize: u64,
    nblocks: u64,
    starts: Starts,
}

fn blsc_err(message: String) -> io::Error {
    invalid(Compression::Blsc, message)
}

impl<S: StoredAt> Blosc1<S> {
    fn new(stored: S) -> Self {
        Blosc1 {
            stored,
            state: None,
            out: Vec::new(),
            at: 0,
            next: 0,
        }
    }

    fn header(&mut self) -> io::Result<B1State> {
        let len = self.stored.stored_len();
        let mut header = [0u8; 16];
        if len < 16 {
            return Err(blsc_err(format!(
                "chunk of {len} bytes is shorter than the 16-byte header"
            )));
        }
        self.stored.read_stored_at(0, &mut header)?;
        let (nbytes, blocksize, cbytes) = (
            u64::from(le32(&header, 4)),
            u64::from(le32(&header, 8)),
            u64::from(le32(&header, 12)),
        );
        let typesize = u64::from(header[3]);
        if header[0] == 0 || header[0] > 2 || typesize == 0 {
            return Err(blsc_err(format!(
                "version {} or typesize {typesize} not of a blosc1 chunk",
                header[0]
            )));
        }
        if cbytes < 16 || cbytes > len {
            return Err(blsc_err(format!(
                "header claims {cbytes} compressed bytes, {len} stored"
            )));
        }
        let memcpyed = header[2] & MEMCPYED != 0;
        if memcpyed && cbytes != nbytes + 16 {
            return Err(blsc_err(format!(
                "uncompressed chunk of {nbytes} bytes stored in {cbytes}"
            )));
        }
        if !memcpyed && nbytes > 0 && (blocksize == 0 || blocksize > nbytes) {
            return Err(blsc_err(format!(
                "blocksize {blocksize} for {nbytes} bytes"
            )));
        }
        let nblocks = if memcpyed || nbytes == 0 {
            0
        } else {
            nbytes.div_ceil(blocksize)
        };
        if 16 + 4 * nblocks > cbytes {
            return Err(blsc_err(format!(
                "{nblocks} blocks do not fit in {cbytes} compressed bytes"
            )));
        }
        Ok(B1State {
            header,
            nbytes,
            blocksize,
            cbytes,
            typesize,
            nblocks,
            starts: Starts {
                at: 16,
                count: nblocks as usize,
                first: 0,
                window: Vec::new(),
            },
        })
    }

    /// Decodes the next block into `out`; false after the last.
    fn next_block(&mut self) -> io::Result<bool> {
        if self.state.is_none() {
            self.state = Some(self.header()?);
        }
        let Some(st) = &mut self.state else {
            return Ok(false);
        };
        if st.header[2] & MEMCPYED != 0 {
            let n = (st.nbytes - self.next).min(1 << 20);
            if n == 0 {
                return Ok(false);
            }
            self.out.resize(n as usize, 0);
            self.stored.read_stored_at(16 + self.next, &mut self.out)?;
            self.next += n;
            self.at = 0;
            return Ok(true);
        }
        if self.next >= st.nblocks {
            return Ok(false);
        }
        let j = self.next;
        let start = u64::from(st.starts.get(&mut self.stored, j as usize)?);
        if start < 16 + 4 * st.nblocks || start >= st.cbytes {
            return Err(blsc_err(format!(
                "block {j} starts at {start}, outside the chunk's data"
            )));
        }
        let last_partial = j == st.nblocks - 1 && st.nbytes % st.blocksize != 0;
        let bsize = if last_partial {
            st.nbytes % st.blocksize
        } else {
            st.blocksize
        };
        let ext = block_extent(start, st.cbytes, bsize, st.typesize);
        let mut data = vec![0u8; ext as usize];
        self.stored.read_stored_at(start, &mut data)?;
        let chunk = one_block_chunk(&st.header, bsize as u32, &data, last_partial);
        self.out.resize(bsize as usize, 0);
        super::blsc::decode_into(&chunk, &mut self.out)
            .map_err(|e| blsc_err(format!("block {j}: {e}")))?;
        self.next += 1;
        self.at = 0;
        Ok(true)
    }
}

impl<S: StoredAt> Read for Blosc1<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.out.len() {
            if !self.next_block()? {
                return Ok(0);
            }
        }
        let rest = self.out.get(self.at..).unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf.get_mut(..n)
            .unwrap_or_default()
            .copy_from_slice(rest.get(..n).unwrap_or_default());
        self.at += n;
        Ok(n)
    }
}

/// Blosc2 chunks and frames, decoded a block at a time through asdf-blosc2.
#[cfg(feature = "blosc2")]
mod b2 {
    use super::{
        block_extent, invalid, le32, one_block_chunk, Compression, Starts, StoredAt, MEMCPYED,
    };
    use asdf_blosc2::chunk::{ChunkHeader, Special};
    use std::io::{self, Read};

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
    pub(super) struct Chunk<S> {
        pub(super) stored: S,
        base: u64,
        len: u64,
        limit: u64,
        codec: Compression,
        state: Option<(ChunkHeader, Vec<u8>, Kind)>,
        out: Vec<u8>,
        at: usize,
        /// Decoded bytes produced so far.
        done: u64,
        next: u64,
    }

    impl<S: StoredAt> Chunk<S> {
        pub(super) fn new(stored: S, base: u64, len: u64, limit: u64) -> Self {
            Chunk {
                stored,
                base,
                len,
                limit,
                codec: Compression::Bls2,
                state: None,
                out: Vec::new(),
                at: 0,
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
                            starts: Starts {
                                at: self.base + h.header_len as u64,
                                count: nblocks as usize,
                                first: 0,
                                window: Vec::new(),
                            },
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
        pub(super) fn skip(&mut self, n: u64) -> io::Result<u64> {
            if self.state.is_none() {
                self.state = Some(self.open()?);
            }
            let Some((h, _, kind)) = &self.state else {
                return Ok(0);
            };
            if self.done != 0 || self.at != self.out.len() {
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

        fn next_piece(&mut self) -> io::Result<bool> {
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
            self.at = 0;
            match kind {
                Kind::Repeat(p) => {
                    let n = left.min(1 << 20) as usize;
                    if p.iter().all(|&b| b == 0) {
                        self.out.clear();
                        self.out.resize(n, 0);
                    } else {
                        // whole items only (the chunk is a whole number of them)
                        let n = (n / p.len()).max(1) * p.len();
                        self.out = p.iter().copied().cycle().take(n).collect();
                    }
                }
                Kind::Raw => {
                    let n = left.min(1 << 20) as usize;
                    self.out.resize(n, 0);
                    let at = self.base + h.header_len as u64 + self.done;
                    self.stored.read_stored_at(at, &mut self.out)?;
                }
                Kind::Whole => {
                    let mut src = vec![0u8; h.cbytes];
                    self.stored.read_stored_at(self.base, &mut src)?;
                    self.out = asdf_blosc2::chunk::decode(&src, h.nbytes).map_err(|e| err(c, e))?;
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
                    self.out.resize(bsize as usize, 0);
                    asdf_blosc2::chunk::decode_to_slice(&oh, &one, &mut self.out)
                        .map_err(|e| err(c, format!("block {j}: {e}")))?;
                    self.next += 1;
                }
            }
            self.done += self.out.len() as u64;
            if self.done > h.nbytes as u64 {
                return Err(err(c, "a chunk decodes to more than it declares"));
            }
            Ok(true)
        }
    }

    impl<S: StoredAt> Read for Chunk<S> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            while self.at == self.out.len() {
                if !self.next_piece()? {
                    return Ok(0);
                }
            }
            let rest = self.out.get(self.at..).unwrap_or_default();
            let n = rest.len().min(buf.len());
            buf.get_mut(..n)
                .unwrap_or_default()
                .copy_from_slice(rest.get(..n).unwrap_or_default());
            self.at += n;
            Ok(n)
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
    pub(super) struct FrameReader<S> {
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
        pub(super) fn new(stored: S, data_size: u64) -> Self {
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
        pub(super) fn skip(&mut self, n: u64) -> io::Result<u64> {
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

    /// The chunks of a `bsc2` frame (see [`super::FramePiece`]), from its header and
    /// offsets index read by position; chunk data is not read (but for the headers of the
    /// chunks of a frame whose chunks vary in size).
    pub(crate) fn frame_pieces<S: StoredAt>(
        mut s: S,
        data_size: u64,
    ) -> io::Result<Vec<super::FramePiece>> {
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
                out.push(super::FramePiece {
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
            out.push(super::FramePiece {
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

    impl<S: StoredAt> Read for FrameReader<S> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            loop {
                if let Some(sp) = &mut self.special {
                    let n = sp.read(buf)?;
                    if n > 0 {
                        return Ok(n);
                    }
                    self.special = None;
                } else if let Some(ch) = &mut self.chunk {
                    let n = ch.read(buf)?;
                    if n > 0 {
                        return Ok(n);
                    }
                }
                if !self.next_chunk()? {
                    return Ok(0);
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

/// The chunks of a `bsc2` frame of `data_size` decoded bytes.
#[cfg(feature = "blosc2")]
pub(crate) fn frame_pieces<S: StoredAt>(stored: S, data_size: u64) -> io::Result<Vec<FramePiece>> {
    b2::frame_pieces(stored, data_size)
}

/// The chunks of a `bsc2` frame (built without the `blosc2` feature: an error).
#[cfg(not(feature = "blosc2"))]
pub(crate) fn frame_pieces<S: StoredAt>(_: S, _: u64) -> io::Result<Vec<FramePiece>> {
    Err(invalid(
        Compression::Bsc2,
        "built without the `blosc2` feature".into(),
    ))
}

/// Decoded bytes `lo..hi` of a block of `data_size` bytes whose stored bytes `stored`
/// gives by position, decoding no further than `hi`. `bls2` and `bsc2` skip the chunks and
/// internal blocks before `lo` without reading them; the other codecs decode from the start
/// (the stream codecs cannot start elsewhere) and drop what comes before `lo`. The caller
/// checks `hi - lo` against its limits first.
pub(crate) fn decoded_window<'r, S: StoredAt + 'r>(
    c: Compression,
    stored: S,
    data_size: u64,
    window: std::ops::Range<u64>,
) -> io::Result<Vec<u8>> {
    let (lo, hi) = (window.start, window.end.min(data_size));
    if lo >= hi {
        return Ok(Vec::new());
    }
    let unavailable = || invalid(c, "not available in this build".into());
    let (mut reader, skipped): (Box<dyn Read + Send + 'r>, u64) = match c {
        #[cfg(feature = "blosc2")]
        Compression::Bls2 => {
            let len = stored.stored_len();
            let mut ch = b2::Chunk::new(stored, 0, len, data_size);
            let s = ch.skip(lo)?;
            (Box::new(ch), s)
        }
        #[cfg(feature = "blosc2")]
        Compression::Bsc2 => {
            let mut f = b2::FrameReader::new(stored, data_size);
            let s = f.skip(lo)?;
            (Box::new(f), s)
        }
        _ => (decoder_at(c, stored, data_size).ok_or_else(unavailable)?, 0),
    };
    let drop = lo - skipped.min(lo);
    let dropped = io::copy(&mut (&mut reader).take(drop), &mut io::sink())?;
    let short = || invalid(c, format!("the block ends before decoded byte {hi}"));
    if dropped != drop {
        return Err(short());
    }
    let n = usize::try_from(hi - lo).map_err(|_| invalid(c, "window too large".into()))?;
    let mut out = vec![0u8; n];
    reader.read_exact(&mut out).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            short()
        } else {
            e
        }
    })?;
    Ok(out)
}

fn invalid(c: Compression, message: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {message}", c.name()),
    )
}

/// Checks that the decoded length is exactly the declared one.
struct Exact<'r> {
    inner: Box<dyn Read + Send + 'r>,
    codec: Compression,
    left: u64,
}

impl Read for Exact<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // nothing more may come
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(invalid(
                    self.codec,
                    "more data than the block declares".into(),
                )),
            };
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(buf.get_mut(..want).unwrap_or_default())?;
        if n == 0 {
            return Err(invalid(
                self.codec,
                format!(
                    "the stored data ends {} bytes short of the block",
                    self.left
                ),
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// One zlib stream, or several one after the other (as the whole-block decoder accepts);
/// bytes after the last stream that do not start another are ignored, as python does.
struct ZlibStreams<R> {
    dec: Option<flate2::bufread::ZlibDecoder<R>>,
}

impl<R: BufRead> Read for ZlibStreams<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while let Some(dec) = &mut self.dec {
            let n = dec.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            let Some(dec) = self.dec.take() else { break };
            let mut rest = dec.into_inner();
            if super::zlib::is_zlib_header(rest.fill_buf()?) {
                self.dec = Some(flate2::bufread::ZlibDecoder::new(rest));
            }
        }
        Ok(0)
    }
}

/// python asdf's `lz4` chunks, decoded one at a time.
struct Lz4Chunks<R> {
    stored: R,
    out: Vec<u8>,
    at: usize,
}

/// Most input bytes a chunk may claim (python writes 4 MiB; a reader allows more, bounded).
const LZ4_MAX_CHUNK: u32 = 256 << 20;

impl<R: BufRead> Lz4Chunks<R> {
    /// Reads the next chunk into `out`; false at the end of the stored bytes.
    fn next_chunk(&mut self) -> io::Result<bool> {
        let mut head = [0u8; 8];
        let mut got = 0;
        while got < 8 {
            let n = self.stored.read(head.get_mut(got..).unwrap_or_default())?;
            if n == 0 {
                if got == 0 {
                    return Ok(false);
                }
                return Err(invalid(Compression::Lz4, "truncated chunk header".into()));
            }
            got += n;
        }
        let n = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        if n < 4 || len > LZ4_MAX_CHUNK || u64::from(n - 4) > u64::from(LZ4_MAX_CHUNK) {
            return Err(invalid(
                Compression::Lz4,
                format!("chunk of {n} bytes claiming {len} bytes"),
            ));
        }
        let mut block = Vec::new();
        (&mut self.stored)
            .take(u64::from(n - 4))
            .read_to_end(&mut block)?;
        if block.len() != (n - 4) as usize {
            return Err(invalid(Compression::Lz4, "truncated chunk".into()));
        }
        // as the whole decoder: no output allocated beyond what the block can decode to
        if u64::from(len) > (block.len() as u64).saturating_mul(255).saturating_add(64) {
            return Err(invalid(
                Compression::Lz4,
                format!("chunk of {n} bytes claiming {len} bytes"),
            ));
        }
        self.out.clear();
        self.out.resize(len as usize, 0);
        match lz4_flex::block::decompress_into(&block, &mut self.out) {
            Ok(k) if k == len as usize => {}
            Ok(k) => {
                return Err(invalid(
                    Compression::Lz4,
                    format!("chunk decoded to {k} bytes instead of {len}"),
                ))
            }
            Err(e) => return Err(invalid(Compression::Lz4, e.to_string())),
        }
        self.at = 0;
        Ok(true)
    }
}

impl<R: BufRead> Read for Lz4Chunks<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.out.len() {
            if !self.next_chunk()? {
                return Ok(0);
            }
        }
        let rest = self.out.get(self.at..).unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf.get_mut(..n)
            .unwrap_or_default()
            .copy_from_slice(rest.get(..n).unwrap_or_default());
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::encode;

    #[test]
    fn every_stream_codec_decodes_and_checks_its_length() {
        for c in [
            Compression::Zlib,
            Compression::Bzp2,
            Compression::Zstd,
            Compression::Lz4f,
            Compression::Lz4,
        ] {
            // lz4 over three of its 4 MiB chunks; the others smaller (a debug build)
            let n: u32 = if c == Compression::Lz4 {
                (9 << 20) + 77
            } else {
                300_077
            };
            let data: Vec<u8> = (0..n).map(|i| (i / 7 % 251) as u8).collect();
            let stored = encode(c, &data, Some(1)).unwrap();
            let mut out = Vec::new();
            decoder(c, &stored[..], data.len() as u64)
                .unwrap()
                .read_to_end(&mut out)
                .unwrap();
            assert!(out == data, "{c}");
            // declared longer or shorter than the data: an error, not a short read
            for declared in [data.len() as u64 + 1, data.len() as u64 - 1] {
                let r = decoder(c, &stored[..], declared)
                    .unwrap()
                    .read_to_end(&mut Vec::new());
                assert_eq!(
                    r.map_err(|e| e.kind()),
                    Err(io::ErrorKind::InvalidData),
                    "{c} {declared}"
                );
            }
            // cut stored bytes
            let cut = &stored[..stored.len() / 2];
            assert!(
                decoder(c, cut, data.len() as u64)
                    .unwrap()
                    .read_to_end(&mut Vec::new())
                    .is_err(),
                "{c}"
            );
        }
        assert!(decoder(Compression::Blsc, &b""[..], 0).is_none());
    }

    #[test]
    fn concatenated_zlib_streams_decode_as_the_whole_decoder_does() {
        let (a, b) = (vec![1u8; 70_000], vec![2u8; 5000]);
        let mut stored = encode(Compression::Zlib, &a, None).unwrap();
        stored.extend(encode(Compression::Zlib, &b, None).unwrap());
        // trailing bytes that start no stream are ignored, as python does
        stored.extend_from_slice(b"\0\0");
        let want = crate::codec::decode(Compression::Zlib, &stored, 75_000).unwrap();
        let mut out = Vec::new();
        decoder(Compression::Zlib, &stored[..], 75_000)
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, want);
        assert_eq!(&out[..70_000], &a[..]);
    }

    /// Items whose bytes repeat a little (so the Blosc codecs compress them), not one run.
    fn items(n: u32) -> Vec<u8> {
        (0..n)
            .flat_map(|i| ((i / 5) ^ (i % 7)).to_le_bytes())
            .collect()
    }

    #[test]
    #[cfg(feature = "blosc2")]
    fn blosc_codecs_decode_block_by_block_from_positions() {
        // several blocks and chunks, a short last one; blsc written on several threads
        // (its blocks may be stored out of order)
        let data = items((9 << 18) + 13);
        for c in [Compression::Blsc, Compression::Bls2, Compression::Bsc2] {
            let stored = encode(c, &data, None).unwrap();
            if c != Compression::Bsc2 {
                // several blocks, the last one short
                let (nbytes, blocksize) = (le32(&stored, 4), le32(&stored, 8));
                assert!(nbytes / blocksize >= 2 && nbytes % blocksize != 0, "{c}");
            }
            let mut out = Vec::new();
            decoder_at(c, &stored[..], data.len() as u64)
                .unwrap()
                .read_to_end(&mut out)
                .unwrap();
            assert!(out == data, "{c}");
            // a declared size the block does not hold, and cut stored bytes: errors
            for declared in [data.len() as u64 + 4, data.len() as u64 - 4] {
                assert!(
                    decoder_at(c, &stored[..], declared)
                        .unwrap()
                        .read_to_end(&mut Vec::new())
                        .is_err(),
                    "{c} {declared}"
                );
            }
            let cut = &stored[..stored.len() * 2 / 3];
            assert!(
                decoder_at(c, cut, data.len() as u64)
                    .unwrap()
                    .read_to_end(&mut Vec::new())
                    .is_err(),
                "{c}"
            );
        }
    }

    /// The chunk with its blocks stored in reverse order (as a multithreaded writer may
    /// store them), the block starts updated: `header_len` is 16 (blsc) or 32 (bls2).
    #[cfg(feature = "blosc2")]
    fn reversed_blocks(stored: &[u8], header_len: usize) -> Vec<u8> {
        let (nbytes, blocksize, cbytes) = (
            le32(stored, 4) as usize,
            le32(stored, 8) as usize,
            le32(stored, 12) as usize,
        );
        let nblocks = nbytes.div_ceil(blocksize);
        let starts: Vec<usize> = (0..nblocks)
            .map(|j| le32(stored, header_len + 4 * j) as usize)
            .collect();
        let mut sorted = starts.clone();
        sorted.sort_unstable();
        let end = |s: usize| sorted.iter().find(|&&t| t > s).copied().unwrap_or(cbytes);
        let first = header_len + 4 * nblocks;
        let mut out = stored[..first].to_vec();
        for j in (0..nblocks).rev() {
            let at = out.len() as u32;
            out[header_len + 4 * j..header_len + 4 * j + 4].copy_from_slice(&at.to_le_bytes());
            out.extend_from_slice(&stored[starts[j]..end(starts[j])]);
        }
        assert_eq!(out.len(), cbytes);
        out
    }

    #[test]
    #[cfg(feature = "blosc2")]
    fn blosc_blocks_stored_in_any_order_decode_in_order() {
        let data = items(3 << 18);
        for (c, header_len) in [(Compression::Blsc, 16), (Compression::Bls2, 32)] {
            let stored = encode(c, &data, None).unwrap();
            let reversed = reversed_blocks(&stored, header_len);
            assert_ne!(reversed, stored, "{c}");
            // the whole decoder reads it as it is
            assert!(crate::codec::decode(c, &reversed, data.len() as u64).unwrap() == data);
            let mut out = Vec::new();
            decoder_at(c, &reversed[..], data.len() as u64)
                .unwrap()
                .read_to_end(&mut out)
                .unwrap();
            assert!(out == data, "{c}");
        }
    }

    #[test]
    #[cfg(feature = "blosc2")]
    fn blosc_block_starts_out_of_place_are_errors_not_panics() {
        let data = items(1 << 18);
        let mut stored = encode(Compression::Blsc, &data, None).unwrap();
        // the second block start points into the header
        stored[20..24].copy_from_slice(&3u32.to_le_bytes());
        let r = decoder_at(Compression::Blsc, &stored[..], data.len() as u64)
            .unwrap()
            .read_to_end(&mut Vec::new());
        assert_eq!(r.map_err(|e| e.kind()), Err(io::ErrorKind::InvalidData));
        // every single-byte corruption of the head of a small block of each Blosc codec
        // (several blocks, a short last one): an error or other bytes, never a panic
        let small = items(70_001);
        for c in [Compression::Blsc, Compression::Bls2, Compression::Bsc2] {
            let stored = encode(c, &small, None).unwrap();
            for at in 0..stored.len().min(300) {
                for flip in [0x01, 0x5a, 0xff] {
                    let mut bad = stored.clone();
                    bad[at] ^= flip;
                    let _ = decoder_at(c, &bad[..], small.len() as u64)
                        .unwrap()
                        .read_to_end(&mut Vec::new());
                }
            }
        }
    }

    #[test]
    fn stream_codecs_decode_from_positions_too() {
        let data = items(70_001);
        for c in [Compression::Zlib, Compression::Lz4, Compression::Zstd] {
            let stored = encode(c, &data, None).unwrap();
            let mut out = Vec::new();
            decoder_at(c, &stored[..], data.len() as u64)
                .unwrap()
                .read_to_end(&mut out)
                .unwrap();
            assert!(out == data, "{c}");
        }
    }

    #[test]
    fn lz4_chunk_claiming_too_much_is_refused_before_allocating() {
        let mut stored = 8u32.to_be_bytes().to_vec();
        stored.extend_from_slice(&u32::MAX.to_le_bytes());
        stored.extend_from_slice(&[0; 4]);
        let r = decoder(Compression::Lz4, &stored[..], 1 << 40)
            .unwrap()
            .read_to_end(&mut Vec::new());
        assert_eq!(r.map_err(|e| e.kind()), Err(io::ErrorKind::InvalidData));
    }
}
