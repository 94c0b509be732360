//! Writing Blosc2: chunks (extended header, one stream per block) and contiguous frames, in
//! the layout C-Blosc2 reads.

use crate::chunk::{BLOSCLZ, EXTENDED_HEADER, LZ4, ZLIB, ZSTD};
use crate::error::Error;
use crate::filters;
use crate::frame::B2nd;
use crate::progress::{Progress, Tally};

/// A codec to compress with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Codec {
    /// BloscLZ, C-Blosc2's own LZ77 codec (our encoder: greedy, one hash probe).
    Blosclz,
    /// LZ4 (fast).
    Lz4,
    /// LZ4 with a harder match search (the same block format as LZ4; our encoder: hash
    /// chains, more candidates at higher levels).
    Lz4hc,
    /// zlib (deflate with the zlib wrapper).
    Zlib,
    /// Zstandard (python-blosc2's default).
    Zstd,
}

impl Codec {
    /// The chunk header's format number, and python-blosc2's codec number (the frame's).
    pub(crate) fn numbers(self) -> (u8, u8) {
        match self {
            Codec::Blosclz => (BLOSCLZ, 0),
            Codec::Lz4 => (LZ4, 1),
            Codec::Lz4hc => (LZ4, 2),
            Codec::Zlib => (ZLIB, 4),
            Codec::Zstd => (ZSTD, 5),
        }
    }
}

/// A filter applied before the codec, in a pipeline of up to six.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Filter {
    /// None (an empty slot).
    None,
    /// Byte shuffle (python-blosc2's default); meta: bytes to group by (0: the type size).
    Shuffle,
    /// Bit shuffle.
    BitShuffle,
    /// XOR with the previous item (first block) or with the first block (others); must be
    /// the first filter.
    Delta,
    /// Zero low mantissa bits of float32/float64 items (lossy); meta as a signed byte: bits
    /// of mantissa to keep, or (negative) to drop.
    TruncPrec,
    /// Differences of consecutive bytes in each byte stream (after a shuffle); meta: the
    /// stream count (0: the type size).
    ByteDelta,
}

impl Filter {
    fn id(self) -> u8 {
        match self {
            Filter::None => filters::NOFILTER,
            Filter::Shuffle => filters::SHUFFLE,
            Filter::BitShuffle => filters::BITSHUFFLE,
            Filter::Delta => filters::DELTA,
            Filter::TruncPrec => filters::TRUNC_PREC,
            Filter::ByteDelta => filters::BYTEDELTA,
        }
    }

    /// A pipeline of this filter alone (meta 0), in the last slot as C-Blosc2 puts it.
    pub const fn only(self) -> [(Filter, u8); 6] {
        let mut p = [(Filter::None, 0); 6];
        p[5] = (self, 0);
        p
    }

    /// A pipeline of these filters in order (at most six), padded with empty slots in front.
    pub fn pipeline(steps: &[(Filter, u8)]) -> [(Filter, u8); 6] {
        let mut p = [(Filter::None, 0); 6];
        let steps = &steps[..steps.len().min(6)];
        p[6 - steps.len()..].copy_from_slice(steps);
        p
    }
}

/// How to compress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CParams {
    /// The codec.
    pub codec: Codec,
    /// Its level (zstd 1-22, zlib 1-9; lz4 ignores it); 0 stores the data uncompressed (a
    /// memcpyed chunk), as C-Blosc2's clevel 0.
    pub level: i32,
    /// The filter pipeline, applied in slot order (see [`Filter::pipeline`]).
    pub filters: [(Filter, u8); 6],
    /// Item size in bytes (what shuffle regroups by).
    pub typesize: usize,
    /// Bytes per block; 0 picks one (256 KiB, in whole items).
    pub blocksize: usize,
}

impl Default for CParams {
    /// python-blosc2's defaults: zstd level 5 with shuffle, 8-byte items.
    fn default() -> Self {
        CParams {
            codec: Codec::Zstd,
            level: 5,
            filters: Filter::Shuffle.only(),
            typesize: 8,
            blocksize: 0,
        }
    }
}

const DEFAULT_BLOCK: usize = 256 << 10;

use crate::shuffle::shuffle;

pub(crate) fn bitshuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let mut n = src.len() / ts;
    n -= n % 8;
    let row = n / 8;
    let body = n * ts;
    dst[..body].fill(0);
    for e in 0..n {
        for j in 0..ts {
            let byte = src[e * ts + j];
            if byte == 0 {
                continue;
            }
            for k in 0..8 {
                if byte >> k & 1 != 0 {
                    dst[(j * 8 + k) * row + e / 8] |= 1 << (e % 8);
                }
            }
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Refuses pipelines the decoders would not undo the same way: delta anywhere but first,
/// and truncation of anything but 4- or 8-byte items or by more than the mantissa.
fn check_pipeline(p: &CParams) -> Result<(), Error> {
    let used: Vec<(usize, (Filter, u8))> = p
        .filters
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, (f, _))| *f != Filter::None)
        .collect();
    for (n, (k, (f, m))) in used.iter().enumerate() {
        let bad = |d: String| Err(Error::malformed("filter pipeline", *k as u64, d));
        match f {
            Filter::Delta if n != 0 => return bad("delta must be the first filter".into()),
            Filter::TruncPrec => {
                let mantissa = match p.typesize {
                    4 => 23,
                    8 => 52,
                    t => return bad(format!("trunc_prec needs 4- or 8-byte items, not {t}")),
                };
                let bits = *m as i8;
                let zeroed = if bits >= 0 {
                    mantissa - i32::from(bits)
                } else {
                    -i32::from(bits)
                };
                if i32::from(bits).abs() > mantissa || zeroed >= mantissa || zeroed < 0 {
                    return bad(format!("trunc_prec by {bits} bits"));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Applies the pipeline to one block (`src`, in `dst`); `first` is the chunk's first block
/// as given (the delta filter's reference), `is_first` whether `src` is that block.
fn forward(
    p: &CParams,
    ts: usize,
    src: &[u8],
    first: &[u8],
    is_first: bool,
    dst: &mut [u8],
    tmp: &mut [u8],
) {
    dst.copy_from_slice(src);
    for &(f, m) in &p.filters {
        let t = &mut tmp[..dst.len()];
        match f {
            Filter::None => continue,
            Filter::Shuffle => shuffle(if m == 0 { ts } else { usize::from(m) }, dst, t),
            Filter::BitShuffle => bitshuffle(ts, dst, t),
            Filter::Delta => delta(ts, dst, first, is_first, t),
            Filter::TruncPrec => trunc_prec(ts, m as i8, dst, t),
            Filter::ByteDelta => bytedelta(if m == 0 { ts } else { usize::from(m) }, dst, t),
        }
        dst.copy_from_slice(t);
    }
}

fn delta(ts: usize, src: &[u8], first: &[u8], is_first: bool, dst: &mut [u8]) {
    let w = match ts {
        1 | 2 | 4 | 8 => ts,
        t if t % 8 == 0 => 8,
        _ => 1,
    };
    let n = src.len() / w;
    dst.copy_from_slice(src);
    if is_first {
        for i in 1..n {
            for b in 0..w {
                dst[i * w + b] = src[i * w + b] ^ first[(i - 1) * w + b];
            }
        }
    } else {
        for k in 0..n * w {
            dst[k] = src[k] ^ first[k];
        }
    }
}

fn trunc_prec(ts: usize, bits: i8, src: &[u8], dst: &mut [u8]) {
    dst.copy_from_slice(src);
    let mantissa: i32 = if ts == 4 { 23 } else { 52 };
    let zeroed = if bits >= 0 {
        mantissa - i32::from(bits)
    } else {
        -i32::from(bits)
    } as u32;
    match ts {
        4 => {
            let mask = !((1u32 << zeroed) - 1);
            for x in dst.chunks_exact_mut(4) {
                let v = u32::from_le_bytes([x[0], x[1], x[2], x[3]]) & mask;
                x.copy_from_slice(&v.to_le_bytes());
            }
        }
        _ => {
            let mask = !((1u64 << zeroed) - 1);
            for x in dst.chunks_exact_mut(8) {
                let v = u64::from_le_bytes(x[..8].try_into().unwrap_or([0; 8])) & mask;
                x.copy_from_slice(&v.to_le_bytes());
            }
        }
    }
}

fn bytedelta(streams: usize, src: &[u8], dst: &mut [u8]) {
    dst.copy_from_slice(src);
    let len = src.len() / streams.max(1);
    if len == 0 {
        return;
    }
    for (s, d) in src[..len * streams]
        .chunks_exact(len)
        .zip(dst[..len * streams].chunks_exact_mut(len))
    {
        let mut prev = 0u8;
        for (x, y) in s.iter().zip(d.iter_mut()) {
            *y = x.wrapping_sub(prev);
            prev = *x;
        }
    }
}

pub(crate) fn compress(codec: Codec, level: i32, data: &[u8]) -> Result<Vec<u8>, Error> {
    let fail = |e: &dyn std::fmt::Display| Error::Codec {
        block: 0,
        codec: "encoder",
        offset: 0,
        detail: e.to_string(),
    };
    Ok(match codec {
        Codec::Blosclz => crate::blosclz::compress(data),
        Codec::Lz4 => lz4_flex::block::compress(data),
        Codec::Lz4hc => crate::lz4hc::compress(data, 4usize << level.clamp(1, 9)),
        Codec::Zlib => {
            use std::io::Write;
            let lvl = flate2::Compression::new(level.clamp(0, 9) as u32);
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), lvl);
            e.write_all(data).map_err(|e| fail(&e))?;
            e.finish().map_err(|e| fail(&e))?
        }
        Codec::Zstd => ZSTD_CCTX.with(|z| -> Result<Vec<u8>, Error> {
            // one compression context a thread, kept from block to block (making one is
            // about as costly as compressing a 256 KiB block at level 5)
            let mut z = z.borrow_mut();
            let c = match &mut *z {
                Some(c) => {
                    c.set_compression_level(level).map_err(|e| fail(&e))?;
                    c
                }
                None => z.insert(zstd::bulk::Compressor::new(level).map_err(|e| fail(&e))?),
            };
            c.compress(data).map_err(|e| fail(&e))
        })?,
    })
}

thread_local! {
    static ZSTD_CCTX: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// One block of a chunk, filtered and compressed.
enum Packed {
    /// All zeros after the filters: stored as a zero length.
    Zeros,
    /// Compressed, smaller than the filtered block.
    Compressed(Vec<u8>),
    /// The filtered block as it is (compression did not make it smaller).
    Stored(Vec<u8>),
}

/// Compresses `data` into one Blosc2 chunk (at most 2 GiB of input).
pub fn encode_chunk(data: &[u8], p: &CParams) -> Result<Vec<u8>, Error> {
    let too_big = || Error::TooLarge {
        what: "chunk",
        size: data.len() as u64,
        limit: (i32::MAX as usize - EXTENDED_HEADER) as u64,
    };
    if data.len() > i32::MAX as usize - EXTENDED_HEADER {
        return Err(too_big());
    }
    let ts = p.typesize.clamp(1, 255);
    let nbytes = data.len();
    let (format, _) = p.codec.numbers();
    let mut header = [0u8; EXTENDED_HEADER];
    header[0] = 5; // chunk format version
    header[1] = 1; // codec format version
    header[3] = ts as u8;
    header[4..8].copy_from_slice(&(nbytes as i32).to_le_bytes());
    check_pipeline(p)?;
    for (k, &(f, m)) in p.filters.iter().enumerate() {
        header[16 + k] = f.id();
        header[24 + k] = m;
    }
    header[22] = 0; // user-defined codec
                    // extended header (shuffle and bitshuffle bits both set), blocks never split
    let flags_base = 0x01 | 0x04 | 0x10;
    let mut blocksize = if p.blocksize == 0 {
        DEFAULT_BLOCK
    } else {
        p.blocksize
    };
    blocksize = (blocksize / ts).max(1) * ts;
    blocksize = blocksize.min(nbytes.max(1));
    header[8..12].copy_from_slice(&(blocksize as i32).to_le_bytes());
    if p.level == 0 {
        // level 0: stored as it is (memcpyed), as C-Blosc2 does with clevel 0
        header[2] = flags_base | 0x02 | (format << 5);
        header[12..16].copy_from_slice(&((nbytes + EXTENDED_HEADER) as i32).to_le_bytes());
        let mut out = Vec::with_capacity(EXTENDED_HEADER + nbytes);
        out.extend_from_slice(&header);
        out.extend_from_slice(data);
        return Ok(out);
    }
    // all zeros: a special chunk with no data
    if data.iter().all(|&b| b == 0) {
        header[2] = flags_base | (format << 5);
        header[31] = 1 << 4;
        header[12..16].copy_from_slice(&(EXTENDED_HEADER as i32).to_le_bytes());
        return Ok(header.to_vec());
    }
    let nblocks = nbytes.div_ceil(blocksize);
    let mut out = header.to_vec();
    out.resize(EXTENDED_HEADER + 4 * nblocks, 0);
    let first = &data[..blocksize.min(nbytes)];
    // Each block is filtered and compressed on its own: on rayon's threads when there are
    // several of both, and put together in order (the bytes do not depend on the threads).
    let one = |(buf, tmp): &mut (Vec<u8>, Vec<u8>), (j, block): (usize, &[u8])| {
        let b = &mut buf[..block.len()];
        forward(p, ts, block, first, j == 0, b, tmp);
        if b.iter().all(|&x| x == 0) {
            return Ok(Packed::Zeros);
        }
        let c = compress(p.codec, p.level, b)?;
        Ok(if c.len() < b.len() {
            Packed::Compressed(c)
        } else {
            Packed::Stored(b.to_vec())
        })
    };
    let scratch = || (vec![0u8; blocksize], vec![0u8; blocksize]);
    let packed: Vec<Packed> = if nblocks > 1 && rayon::current_num_threads() > 1 {
        use rayon::prelude::*;
        data.par_chunks(blocksize)
            .enumerate()
            .map_init(scratch, one)
            .collect::<Result<_, Error>>()?
    } else {
        let mut s = scratch();
        let mut packed = Vec::with_capacity(nblocks);
        for jb in data.chunks(blocksize).enumerate() {
            packed.push(one(&mut s, jb)?);
        }
        packed
    };
    for (j, block) in packed.iter().enumerate() {
        let start = out.len();
        out[EXTENDED_HEADER + 4 * j..EXTENDED_HEADER + 4 * j + 4]
            .copy_from_slice(&(start as i32).to_le_bytes());
        match block {
            Packed::Zeros => out.extend_from_slice(&0i32.to_le_bytes()),
            Packed::Compressed(b) | Packed::Stored(b) => {
                out.extend_from_slice(&(b.len() as i32).to_le_bytes());
                out.extend_from_slice(b);
            }
        }
        if out.len() >= nbytes + EXTENDED_HEADER {
            break;
        }
    }
    if out.len() >= nbytes + EXTENDED_HEADER {
        // no gain: store the data as it is (memcpyed)
        header[2] = flags_base | 0x02 | (format << 5);
        header[12..16].copy_from_slice(&((nbytes + EXTENDED_HEADER) as i32).to_le_bytes());
        let mut out = header.to_vec();
        out.extend_from_slice(data);
        return Ok(out);
    }
    let cbytes = out.len();
    out[2] = flags_base | (format << 5);
    out[12..16].copy_from_slice(&(cbytes as i32).to_le_bytes());
    Ok(out)
}

/// A contiguous frame to write: chunks of `chunksize` decoded bytes each (the last may be
/// shorter), with metalayers.
#[derive(Clone, Debug, Default)]
pub struct FrameWriter {
    chunks: Vec<Vec<u8>>,
    nbytes: u64,
    params: Option<CParams>,
    chunksize: usize,
    /// Fixed metalayers: (name of at most 31 bytes, msgpack content).
    pub metalayers: Vec<(String, Vec<u8>)>,
    /// Variable-length metalayers: (name, msgpack content; stored as a chunk).
    pub vlmetalayers: Vec<(String, Vec<u8>)>,
    /// Compress the offsets index (zstd with shuffle, 16 KiB blocks, as C-Blosc2 compresses
    /// it) instead of storing it as it is (the default: 8 bytes per chunk, looked up in place
    /// by a reader without decoding anything).
    pub compress_offsets: bool,
}

impl FrameWriter {
    /// An empty frame whose chunks hold `chunksize` bytes each, compressed with `p`.
    pub fn new(chunksize: usize, p: CParams) -> Self {
        FrameWriter {
            chunksize,
            params: Some(p),
            ..Default::default()
        }
    }

    /// Appends one chunk of `data` (at most `chunksize` bytes; only the last may be shorter).
    pub fn append(&mut self, data: &[u8]) -> Result<(), Error> {
        let p = self.params.unwrap_or_default();
        if data.len() > self.chunksize
            || (self.nbytes % self.chunksize.max(1) as u64 != 0 && !self.chunks.is_empty())
        {
            return Err(Error::malformed(
                "chunk",
                self.nbytes,
                format!(
                    "{} bytes after a short chunk or above the chunk size {}",
                    data.len(),
                    self.chunksize
                ),
            ));
        }
        self.chunks.push(encode_chunk(data, &p)?);
        self.nbytes += data.len() as u64;
        Ok(())
    }

    /// The frame's bytes.
    pub fn finish(&self) -> Result<Vec<u8>, Error> {
        let p = self.params.unwrap_or_default();
        let (_, compcode) = p.codec.numbers();
        let mut h = Vec::with_capacity(256);
        h.push(0x9e);
        h.push(0xa8);
        h.extend_from_slice(b"b2frame\0");
        h.push(0xd2);
        h.extend_from_slice(&[0; 4]); // header length, below
        h.push(0xcf);
        h.extend_from_slice(&[0; 8]); // frame length, below
        h.push(0xa4);
        h.push(2 | 0x10); // frame format 2, 64-bit offsets
        h.push(0); // contiguous
        h.push(compcode | ((p.level.clamp(0, 9) as u8) << 4));
        h.push(0); // split mode: always (each chunk says its own)
                   // chunks of zeros are not stored: their offset says so (as C-Blosc2 writes them)
        let is_zeros = |c: &Vec<u8>| c.len() == EXTENDED_HEADER && (c[31] >> 4) & 7 == 1;
        let cbytes: u64 = self
            .chunks
            .iter()
            .filter(|c| !is_zeros(c))
            .map(|c| c.len() as u64)
            .sum();
        h.push(0xd3);
        h.extend_from_slice(&(self.nbytes as i64).to_be_bytes());
        h.push(0xd3);
        h.extend_from_slice(&(cbytes as i64).to_be_bytes());
        h.push(0xd2);
        h.extend_from_slice(&(p.typesize as i32).to_be_bytes());
        h.push(0xd2);
        // the block size of the chunks (readers use it for chunks the offsets make up)
        let bs = if p.blocksize == 0 {
            DEFAULT_BLOCK.min(self.chunksize)
        } else {
            p.blocksize
        };
        h.extend_from_slice(&i32::try_from(bs).unwrap_or(0).to_be_bytes());
        h.push(0xd2);
        h.extend_from_slice(&(self.chunksize as i32).to_be_bytes());
        h.push(0xd1);
        h.extend_from_slice(&1i16.to_be_bytes());
        h.push(0xd1);
        h.extend_from_slice(&1i16.to_be_bytes());
        h.push(if self.vlmetalayers.is_empty() {
            0xc2
        } else {
            0xc3
        });
        h.push(0xd8);
        h.push(6); // filter slots
        let fl: [u8; 6] = std::array::from_fn(|k| p.filters[k].0.id());
        let fm: [u8; 6] = std::array::from_fn(|k| p.filters[k].1);
        h.extend_from_slice(&fl);
        h.push(compcode); // codec (as C-Blosc2 writes it)
        h.push(0); // codec meta
        h.extend_from_slice(&fm);
        h.push(0); // other flags 2
        h.push(0); // reserved
        debug_assert_eq!(h.len(), 87);
        write_metalayers(&mut h, &self.metalayers, 87)?;
        let header_len = h.len();
        h[11..15].copy_from_slice(&(header_len as i32).to_be_bytes());
        // chunks, then the offsets chunk
        let mut offsets = Vec::with_capacity(self.chunks.len() * 8);
        let mut at = 0u64;
        for c in &self.chunks {
            if is_zeros(c) {
                offsets.extend_from_slice(&(1u64 << 63 | 1u64 << 56).to_le_bytes());
            } else {
                offsets.extend_from_slice(&(at as i64).to_le_bytes());
                at += c.len() as u64;
            }
        }
        for c in self.chunks.iter().filter(|c| !is_zeros(c)) {
            h.extend_from_slice(c);
        }
        if !self.chunks.is_empty() {
            // stored uncompressed (8 bytes per chunk): a reader looks an offset up in place,
            // so reading one chunk costs the same in a frame of 10 chunks or of 100,000
            let op = if self.compress_offsets {
                CParams {
                    codec: Codec::Zstd,
                    level: 5,
                    filters: Filter::Shuffle.only(),
                    typesize: 8,
                    blocksize: 16 << 10,
                }
            } else {
                CParams {
                    codec: Codec::Zstd,
                    level: 0,
                    filters: Filter::None.only(),
                    typesize: 8,
                    blocksize: 0,
                }
            };
            h.extend_from_slice(&encode_chunk(&offsets, &op)?);
        }
        // trailer
        let mut t = vec![0x94, 1];
        let vl = self
            .vlmetalayers
            .iter()
            .map(|(n, c)| {
                let p = CParams {
                    codec: Codec::Zstd,
                    level: 5,
                    filters: Filter::None.only(),
                    typesize: 1,
                    blocksize: 0,
                };
                Ok((n.clone(), encode_chunk(c, &p)?))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        write_metalayers(&mut t, &vl, 2)?;
        let tlen = t.len() + 23;
        t.push(0xce);
        t.extend_from_slice(&(tlen as u32).to_be_bytes());
        t.push(0xd8);
        t.push(0);
        t.extend_from_slice(&[0; 16]);
        h.extend_from_slice(&t);
        let len = h.len() as u64;
        h[16..24].copy_from_slice(&len.to_be_bytes());
        Ok(h)
    }
}

/// `0x93 0xcd size 0xde n {name: 0xd2 offset} 0xdc n {0xc6 len content}`, offsets from the
/// start of `out`; `size` counts from the `0x93` (header) or the `0xcd` (trailer) as C does.
fn write_metalayers(
    out: &mut Vec<u8>,
    layers: &[(String, Vec<u8>)],
    start: usize,
) -> Result<(), Error> {
    if layers.len() > 16 {
        return Err(Error::malformed("metalayers", 0, "more than 16"));
    }
    out.push(0x93);
    out.push(0xcd);
    let size_at = out.len();
    out.extend_from_slice(&[0, 0]);
    out.push(0xde);
    out.extend_from_slice(&(layers.len() as u16).to_be_bytes());
    let mut slots = Vec::new();
    for (name, _) in layers {
        if name.len() > 31 {
            return Err(Error::malformed(
                "metalayer name",
                0,
                format!("{name:?} is longer than 31 bytes"),
            ));
        }
        out.push(0xa0 + name.len() as u8);
        out.extend_from_slice(name.as_bytes());
        out.push(0xd2);
        slots.push(out.len());
        out.extend_from_slice(&[0; 4]);
    }
    let from = if start == 2 { size_at - 1 } else { start };
    let size = (out.len() - from) as u16;
    out[size_at..size_at + 2].copy_from_slice(&size.to_be_bytes());
    out.push(0xdc);
    out.extend_from_slice(&(layers.len() as u16).to_be_bytes());
    for ((_, content), slot) in layers.iter().zip(slots) {
        let at = out.len() as i32;
        out[slot..slot + 4].copy_from_slice(&at.to_be_bytes());
        out.push(0xc6);
        out.extend_from_slice(&(content.len() as u32).to_be_bytes());
        out.extend_from_slice(content);
    }
    Ok(())
}

impl B2nd {
    /// The `b2nd` metalayer's msgpack content, in the fixed layout C-Blosc2 writes and reads.
    pub fn to_meta(&self) -> Result<Vec<u8>, Error> {
        let ndim = self.shape.len();
        if ndim > 15 || self.chunkshape.len() != ndim || self.blockshape.len() != ndim {
            return Err(Error::malformed(
                "b2nd metalayer",
                0,
                "at most 15 dimensions, with one chunk and block size each",
            ));
        }
        let i32_of = |d: u64| {
            i32::try_from(d).map_err(|_| {
                Error::malformed("b2nd metalayer", 0, "chunk or block dimension too large")
            })
        };
        let mut m = vec![0x97, 0, ndim as u8, 0x90 + ndim as u8];
        for &d in &self.shape {
            m.push(0xd3);
            m.extend_from_slice(&(d as i64).to_be_bytes());
        }
        for dims in [&self.chunkshape, &self.blockshape] {
            m.push(0x90 + ndim as u8);
            for &d in dims.iter() {
                m.push(0xd2);
                m.extend_from_slice(&i32_of(d)?.to_be_bytes());
            }
        }
        m.push(0);
        m.push(0xdb);
        m.extend_from_slice(&(self.dtype.len() as u32).to_be_bytes());
        m.extend_from_slice(self.dtype.as_bytes());
        Ok(m)
    }
}

/// Writes the C-order array `data` (items of `p.typesize` bytes) as a `.b2nd` frame with the
/// chunk and block shapes of `nd`: each chunk padded to the chunk shape, its blocks in C
/// order, each padded to the block shape. `vlmeta` become variable-length metalayers.
pub fn b2nd_frame(
    nd: &B2nd,
    data: &[u8],
    p: &CParams,
    vlmeta: &[(String, Vec<u8>)],
) -> Result<Vec<u8>, Error> {
    encode_b2nd(nd, data, p, vlmeta, None)
}

/// As [`b2nd_frame`], telling `progress` how far it has come: `(done, total)` in bytes of
/// `data` taken into chunks, once per chunk encoded (on the calling thread).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use asdf_blosc2::{b2nd_frame_with_progress, B2nd, CParams, Progress};
/// let nd = B2nd {
///     shape: vec![10, 4],
///     chunkshape: vec![4, 4],
///     blockshape: vec![2, 4],
///     dtype: "|u1".into(),
/// };
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let s = seen.clone();
/// let progress = Progress::new(move |done, total| s.lock().unwrap().push((done, total)));
/// let p = CParams { typesize: 1, ..CParams::default() };
/// b2nd_frame_with_progress(&nd, &[1u8; 40], &p, &[], &progress)?;
/// // chunks of 4 rows of 4 bytes: 16, 16, then the last 2 rows
/// assert_eq!(*seen.lock().unwrap(), [(16, 40), (32, 40), (40, 40)]);
/// # Ok::<(), asdf_blosc2::Error>(())
/// ```
pub fn b2nd_frame_with_progress(
    nd: &B2nd,
    data: &[u8],
    p: &CParams,
    vlmeta: &[(String, Vec<u8>)],
    progress: &Progress,
) -> Result<Vec<u8>, Error> {
    encode_b2nd(nd, data, p, vlmeta, Some(progress))
}

fn encode_b2nd(
    nd: &B2nd,
    data: &[u8],
    p: &CParams,
    vlmeta: &[(String, Vec<u8>)],
    progress: Option<&Progress>,
) -> Result<Vec<u8>, Error> {
    let tally = Tally::new(progress, data.len() as u64);
    let ndim = nd.shape.len();
    let item = p.typesize.max(1);
    let count: u64 = nd.shape.iter().product();
    if count * item as u64 != data.len() as u64 {
        return Err(Error::malformed(
            "array",
            0,
            format!("{} bytes for {count} items of {item} bytes", data.len()),
        ));
    }
    if count > 0 && (nd.chunkshape.contains(&0) || nd.blockshape.contains(&0)) {
        return Err(Error::malformed(
            "b2nd metalayer",
            0,
            "a zero chunk or block dimension",
        ));
    }
    let nblocks: Vec<u64> = (0..ndim)
        .map(|d| nd.chunkshape[d].div_ceil(nd.blockshape[d].max(1)))
        .collect();
    let block_items: u64 = nd.blockshape.iter().product();
    let blocks_per_chunk: u64 = nblocks.iter().product();
    let chunk_bytes = usize::try_from(blocks_per_chunk * block_items * item as u64)
        .ok()
        .filter(|&c| c <= i32::MAX as usize - EXTENDED_HEADER)
        .ok_or_else(|| Error::malformed("b2nd metalayer", 0, "chunks larger than 2 GiB"))?;
    let mut params = *p;
    params.blocksize = usize::try_from(block_items * item as u64).unwrap_or(0);
    let mut w = FrameWriter::new(chunk_bytes.max(item), params);
    w.metalayers.push(("b2nd".into(), nd.to_meta()?));
    w.vlmetalayers = vlmeta.to_vec();
    if ndim == 0 {
        w.append(data)?;
        tally.finish();
        return w.finish();
    }
    if count == 0 {
        return w.finish();
    }
    let nchunks: Vec<u64> = (0..ndim)
        .map(|d| nd.shape[d].div_ceil(nd.chunkshape[d]))
        .collect();
    let mut buf = vec![0u8; chunk_bytes];
    let mut ci = vec![0u64; ndim];
    let last = ndim - 1;
    for _ in 0..nchunks.iter().product::<u64>() {
        buf.fill(0);
        let mut taken = 0u64;
        let mut bi = vec![0u64; ndim];
        for b in 0..blocks_per_chunk {
            let base = b * block_items * item as u64;
            let rows = block_items / nd.blockshape[last];
            let mut ei = vec![0u64; ndim];
            for r in 0..rows {
                let mut inside = true;
                let mut flat = 0u64;
                for d in 0..ndim {
                    let inner = bi[d] * nd.blockshape[d] + ei[d];
                    let g = ci[d] * nd.chunkshape[d] + inner;
                    if g >= nd.shape[d] || inner >= nd.chunkshape[d] {
                        inside = false;
                        break;
                    }
                    flat = flat * nd.shape[d] + g;
                }
                if inside {
                    let inner0 = bi[last] * nd.blockshape[last];
                    let g0 = ci[last] * nd.chunkshape[last] + inner0;
                    let n = nd.blockshape[last]
                        .min(nd.shape[last] - g0)
                        .min(nd.chunkshape[last] - inner0);
                    let to = (base + r * nd.blockshape[last] * item as u64) as usize;
                    let from = (flat * item as u64) as usize;
                    let len = (n * item as u64) as usize;
                    buf[to..to + len].copy_from_slice(&data[from..from + len]);
                    taken += len as u64;
                }
                for d in (0..last).rev() {
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
        w.append(&buf)?;
        tally.add(taken);
        for d in (0..ndim).rev() {
            ci[d] += 1;
            if ci[d] < nchunks[d] {
                break;
            }
            ci[d] = 0;
        }
    }
    tally.finish();
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks compressed on several threads give the same chunk, byte for byte, as on one:
    /// zero blocks, compressible ones, incompressible ones (stored), for each codec, with
    /// shuffle; and a chunk that does not compress at all is stored whole either way.
    #[test]
    fn blocks_on_many_threads_give_the_same_chunk_as_on_one() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut noise = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        };
        let mut data = vec![0u8; 64 << 10];
        data.extend((0..(256u32 << 10)).map(|i| (i / 8 % 251) as u8));
        data.extend((0..(64 << 10)).map(|_| noise()));
        let random: Vec<u8> = (0..(200 << 10)).map(|_| noise()).collect();
        let pool = |n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
        };
        let (one, three) = (pool(1), pool(3));
        for codec in [
            Codec::Blosclz,
            Codec::Lz4,
            Codec::Lz4hc,
            Codec::Zlib,
            Codec::Zstd,
        ] {
            for input in [&data, &random] {
                let p = CParams {
                    codec,
                    typesize: 8,
                    blocksize: 16 << 10,
                    ..CParams::default()
                };
                let a = one.install(|| encode_chunk(input, &p)).unwrap();
                let b = three.install(|| encode_chunk(input, &p)).unwrap();
                assert_eq!(a, b, "{codec:?}, {} bytes", input.len());
                assert_eq!(crate::chunk::decode(&a, input.len()).unwrap(), *input);
            }
        }
    }

    fn params(filters: [(Filter, u8); 6], typesize: usize) -> CParams {
        CParams {
            filters,
            typesize,
            ..CParams::default()
        }
    }

    #[test]
    fn pipelines_the_decoder_cannot_undo_are_refused() {
        let data = vec![1u8; 64];
        let late_delta = Filter::pipeline(&[(Filter::Shuffle, 0), (Filter::Delta, 0)]);
        assert!(matches!(
            encode_chunk(&data, &params(late_delta, 8)),
            Err(Error::Malformed {
                what: "filter pipeline",
                ..
            })
        ));
        let trunc = Filter::pipeline(&[(Filter::TruncPrec, 10)]);
        assert!(encode_chunk(&data, &params(trunc, 2)).is_err());
        let too_much = Filter::pipeline(&[(Filter::TruncPrec, (-30i8) as u8)]);
        assert!(encode_chunk(&data, &params(too_much, 4)).is_err());
        assert!(encode_chunk(&data, &params(trunc, 4)).is_ok());
    }

    #[test]
    fn every_pipeline_round_trips_through_the_decoder() {
        let data: Vec<u8> = (0..10_000u32)
            .flat_map(|i| ((i / 7) as f32 * 0.5).to_le_bytes())
            .collect();
        for steps in [
            vec![(Filter::Delta, 0), (Filter::Shuffle, 0)],
            vec![(Filter::Shuffle, 0), (Filter::ByteDelta, 0)],
            vec![(Filter::BitShuffle, 0)],
            vec![(Filter::Shuffle, 2)],
        ] {
            for codec in [
                Codec::Blosclz,
                Codec::Lz4,
                Codec::Lz4hc,
                Codec::Zlib,
                Codec::Zstd,
            ] {
                let p = CParams {
                    codec,
                    filters: Filter::pipeline(&steps),
                    typesize: 4,
                    blocksize: 4096,
                    ..CParams::default()
                };
                let c = encode_chunk(&data, &p).unwrap();
                assert!(c.len() < data.len() / 2, "{codec:?} {steps:?}: {}", c.len());
                assert_eq!(
                    crate::chunk::decode(&c, data.len()).unwrap(),
                    data,
                    "{codec:?} {steps:?}"
                );
            }
        }
    }
}
