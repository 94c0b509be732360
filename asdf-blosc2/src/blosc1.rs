//! Blosc1 chunks, as C-Blosc 1.x (python-blosc's `blosc.compress`) writes and reads them:
//! the 16-byte header (format version 2), the block starts, and each block's streams.
//!
//! The layout is the one Blosc2 chunks grew from (see [`crate::chunk`]); what differs:
//! - the header is always 16 bytes: flags bit 0 byte shuffle, bit 2 bit shuffle (never both),
//!   bit 1 stored as it is ("memcpyed"), bit 3 reserved (C-Blosc 1.x refuses it), bit 4
//!   blocks not split, bits 5 to 7 the codec (0 blosclz, 1 lz4 and lz4hc, 2 snappy, 3 zlib,
//!   4 zstd); byte 1 the codec's format version, 1 for all;
//! - no special chunks and no zero-length or run-length streams: every stream is its codec's
//!   output, or the stream's bytes as they are when its stored size equals its decoded size;
//! - a block is split into `typesize` streams only when the flags allow it, the items are at
//!   most 16 bytes, the block holds at least 128 items and is not the short last one (chunks
//!   from before the split flag rely on the last two rules);
//! - bit shuffle works on whole blocks of a multiple of 8 items only (others are stored as
//!   they are), and byte shuffle on items over 1 byte.
//!
//! Decoding checks every header field against the input and the caller's expected size
//! before any buffer is sized by it; encoding writes what C-Blosc 1.21 reads, with the block
//! sizes its `blosc_compress` picks.

use crate::chunk::{self, ChunkHeader, BLOSCLZ, LZ4, ZLIB, ZSTD};
use crate::encode::{bitshuffle, compress, Codec};
use crate::error::{slice, Error};
use crate::shuffle::shuffle;

/// Bytes of the header.
pub const HEADER: usize = 16;
/// The largest input a chunk holds (C-Blosc 1.x's `BLOSC_MAX_BUFFERSIZE`).
pub const MAX_BUFFERSIZE: usize = i32::MAX as usize - HEADER;
/// The largest block (C-Blosc 1.x's `BLOSC_MAX_BLOCKSIZE`).
pub const MAX_BLOCKSIZE: usize = (i32::MAX as usize - 255 * 4) / 3;

/// Inputs smaller than this are stored as they are.
const MIN_BUFFERSIZE: usize = 128;
/// Items larger than this never split a block into streams.
const MAX_SPLITS: usize = 16;
/// The block size unit of C-Blosc 1.x's choice.
const L1: usize = 32 << 10;
/// Decoded size from which blocks are decoded and encoded on several threads.
const PARALLEL_FROM: usize = 1 << 20;

const FLAG_SHUFFLE: u8 = 0x01;
const FLAG_MEMCPYED: u8 = 0x02;
const FLAG_BITSHUFFLE: u8 = 0x04;
const FLAG_RESERVED: u8 = 0x08;
const FLAG_DONT_SPLIT: u8 = 0x10;

/// The shuffle filter of a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shuffle {
    /// None.
    None,
    /// Byte shuffle (python-blosc's default).
    Byte,
    /// Bit shuffle.
    Bit,
}

/// How to compress a Blosc1 chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// The codec.
    pub codec: Codec,
    /// C-Blosc's level, 0 to 9 (higher is clamped to 9); 0 stores the data as it is.
    pub clevel: u8,
    /// The shuffle filter.
    pub shuffle: Shuffle,
    /// Item size in bytes, 1 to 255 (0 and larger sizes count as 1, as C-Blosc does with
    /// larger ones).
    pub typesize: usize,
    /// Bytes per block; 0 lets the encoder choose, as C-Blosc 1.x does.
    pub blocksize: usize,
}

impl Default for Params {
    /// python-blosc's `blosc.compress` defaults: blosclz level 9, byte shuffle, 8-byte items.
    fn default() -> Self {
        Params {
            codec: Codec::Blosclz,
            clevel: 9,
            shuffle: Shuffle::Byte,
            typesize: 8,
            blocksize: 0,
        }
    }
}

fn le32(h: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]])
}

/// Reads and checks the header at the start of `src` as a Blosc1 header: format version 1
/// or 2, known flags, a codec C-Blosc 1.x has (but snappy) at its format version, a block
/// size within the decoded size, and (unless stored as it is) room for the block starts.
/// The compressed size is not checked against `src` here ([`decode_to_slice`] does).
pub fn parse(src: &[u8]) -> Result<ChunkHeader, Error> {
    let h = slice(src, 0, HEADER as u64, "chunk header")?;
    let (version, versionlz, flags) = (h[0], h[1], h[2]);
    let (nbytes, blocksize) = (le32(h, 4), le32(h, 8));
    if version == 0 || version > 2 {
        return Err(Error::Unsupported {
            what: "chunk format version other than 1 and 2 (not a Blosc1 chunk)",
            offset: 0,
        });
    }
    if flags & FLAG_RESERVED != 0 {
        return Err(Error::malformed("flags", 2, "reserved bit 3 set"));
    }
    if flags & FLAG_SHUFFLE != 0 && flags & FLAG_BITSHUFFLE != 0 {
        return Err(Error::malformed("flags", 2, "both byte and bit shuffle"));
    }
    let memcpyed = flags & FLAG_MEMCPYED != 0;
    if !memcpyed && nbytes > 0 {
        match flags >> 5 {
            BLOSCLZ | LZ4 | ZLIB | ZSTD => {}
            2 => {
                return Err(Error::UnsupportedCodec {
                    id: 2,
                    name: "snappy",
                })
            }
            c => {
                return Err(Error::UnsupportedCodec {
                    id: c,
                    name: "reserved",
                })
            }
        }
        if versionlz != 1 {
            return Err(Error::malformed(
                "codec format version",
                1,
                format!("{versionlz} (C-Blosc 1.x writes 1)"),
            ));
        }
    }
    if nbytes > 0 && (blocksize > nbytes || blocksize as usize > MAX_BLOCKSIZE) {
        return Err(Error::malformed(
            "blocksize",
            8,
            format!("{blocksize} for a chunk of {nbytes} bytes"),
        ));
    }
    let hdr = ChunkHeader::parse(src)?;
    if !hdr.memcpyed() && hdr.nbytes > 0 {
        let nblocks = hdr.nbytes.div_ceil(hdr.blocksize) as u64;
        if HEADER as u64 + 4 * nblocks > hdr.cbytes as u64 {
            return Err(Error::malformed(
                "cbytes",
                12,
                format!("{} bytes hold no {nblocks} block starts", hdr.cbytes),
            ));
        }
    }
    Ok(hdr)
}

/// Decodes the chunk at the start of `src` (it may go on past the chunk); `limit` bounds the
/// decoded size the header may declare.
pub fn decode(src: &[u8], limit: usize) -> Result<Vec<u8>, Error> {
    let hdr = parse(src)?;
    if hdr.nbytes > limit {
        return Err(Error::TooLarge {
            what: "chunk",
            size: hdr.nbytes as u64,
            limit: limit as u64,
        });
    }
    // the stored size is checked before the output is sized by the header
    slice(src, 0, hdr.cbytes as u64, "chunk")?;
    let mut out = vec![0u8; hdr.nbytes];
    decode_to_slice(src, &mut out)?;
    Ok(out)
}

/// Decodes the chunk at the start of `src` into `out`, whose length must be its decoded
/// size. Blocks of chunks of 1 MiB and more are decoded on rayon's threads.
pub fn decode_to_slice(src: &[u8], out: &mut [u8]) -> Result<(), Error> {
    let hdr = parse(src)?;
    if hdr.nbytes == 0 && out.is_empty() {
        return Ok(());
    }
    chunk::decode_to_slice_with(&hdr, src, out, out.len() >= PARALLEL_FROM)
}

/// Whether a block is split into one stream per byte of the items (C-Blosc 1.x's
/// forward-compatible rule: not for zstd, items of at most 16 bytes, 128 items or more).
fn split_block(codec: Codec, typesize: usize, blocksize: usize) -> bool {
    codec != Codec::Zstd && typesize <= MAX_SPLITS && blocksize / typesize >= MIN_BUFFERSIZE
}

/// The block size C-Blosc 1.x picks for `nbytes` bytes (`forced`: one asked for, 0 if none).
fn block_size(codec: Codec, clevel: u8, typesize: usize, nbytes: usize, forced: usize) -> usize {
    if nbytes < typesize {
        return 1;
    }
    // the codecs for high compression ratios work on larger blocks
    let hcr = matches!(codec, Codec::Lz4hc | Codec::Zlib | Codec::Zstd);
    let mut bs = nbytes;
    if forced != 0 {
        bs = forced.clamp(MIN_BUFFERSIZE, MAX_BLOCKSIZE);
    } else if nbytes >= L1 {
        bs = L1 * if hcr { 2 } else { 1 };
        bs = match clevel {
            0 => bs / 4,
            1 => bs / 2,
            2 => bs,
            3 => bs * 2,
            4 | 5 => bs * 4,
            6..=8 => bs * 8,
            _ => bs * 8 * if hcr { 2 } else { 1 },
        };
    }
    if clevel > 0 && split_block(codec, typesize, bs) {
        bs = bs.min(1 << 18) * typesize;
        bs = bs.clamp(1 << 16, 1 << 20);
    }
    bs = bs.min(nbytes);
    if bs > typesize {
        bs = bs / typesize * typesize;
    }
    bs
}

/// C-Blosc 1.x's zstd level for a Blosc level.
fn zstd_level(clevel: u8) -> i32 {
    match clevel {
        9 => 22,
        8 => 20,
        c => i32::from(c) * 2 - 1,
    }
}

/// A header with the fields every chunk has.
fn header(ts: usize, nbytes: usize, blocksize: usize, flags: u8) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[0] = 2;
    h[1] = 1;
    h[2] = flags;
    h[3] = ts as u8;
    h[4..8].copy_from_slice(&(nbytes as u32).to_le_bytes());
    h[8..12].copy_from_slice(&(blocksize as u32).to_le_bytes());
    h
}

/// Compresses `data` into one Blosc1 chunk (at most [`MAX_BUFFERSIZE`] bytes), as C-Blosc
/// 1.21's `blosc_compress` lays it out; blocks of inputs of 1 MiB and more are compressed
/// on rayon's threads (the bytes do not depend on the threads).
pub fn encode(data: &[u8], p: &Params) -> Result<Vec<u8>, Error> {
    let nbytes = data.len();
    if nbytes > MAX_BUFFERSIZE {
        return Err(Error::TooLarge {
            what: "Blosc1 chunk",
            size: nbytes as u64,
            limit: MAX_BUFFERSIZE as u64,
        });
    }
    let ts = if (1..=255).contains(&p.typesize) {
        p.typesize
    } else {
        1
    };
    let clevel = p.clevel.min(9);
    let bs = block_size(p.codec, clevel, ts, nbytes, p.blocksize);
    let (format, _) = p.codec.numbers();
    let split = split_block(p.codec, ts, bs);
    let mut flags = (format << 5) | if split { 0 } else { FLAG_DONT_SPLIT };
    flags |= match p.shuffle {
        Shuffle::None => 0,
        Shuffle::Byte => FLAG_SHUFFLE,
        Shuffle::Bit => FLAG_BITSHUFFLE,
    };
    let stored = || {
        let mut out = header(ts, nbytes, bs, flags | FLAG_MEMCPYED).to_vec();
        out[12..16].copy_from_slice(&((nbytes + HEADER) as u32).to_le_bytes());
        out.extend_from_slice(data);
        out
    };
    if clevel == 0 || nbytes < MIN_BUFFERSIZE {
        return Ok(stored());
    }
    let level = match p.codec {
        Codec::Zstd => zstd_level(clevel),
        _ => i32::from(clevel),
    };
    let nblocks = nbytes.div_ceil(bs);
    let leftover = nbytes % bs;
    // one block: filtered, then each of its streams compressed (or kept as it is)
    let one = |buf: &mut Vec<u8>, (j, block): (usize, &[u8])| {
        let last_partial = j == nblocks - 1 && leftover > 0;
        let filtered: &[u8] = match p.shuffle {
            Shuffle::Byte if ts > 1 => {
                shuffle(ts, block, &mut buf[..block.len()]);
                &buf[..block.len()]
            }
            // whole blocks of a multiple of 8 items only (the rest are stored as they are)
            Shuffle::Bit if block.len() >= ts && (block.len() / ts) % 8 == 0 => {
                bitshuffle(ts, block, &mut buf[..block.len()]);
                &buf[..block.len()]
            }
            _ => block,
        };
        let nsplits = if split && !last_partial { ts } else { 1 };
        let neblock = block.len() / nsplits;
        let mut packed = Vec::new();
        for s in filtered.chunks_exact(neblock) {
            let c = compress(p.codec, level, s)?;
            // a stream that does not shrink is kept as it is (its size says so)
            let c: &[u8] = if c.is_empty() || c.len() >= neblock {
                s
            } else {
                &c
            };
            packed.extend_from_slice(&(c.len() as u32).to_le_bytes());
            packed.extend_from_slice(c);
        }
        Ok::<Vec<u8>, Error>(packed)
    };
    let scratch = || vec![0u8; bs];
    let blocks: Vec<Vec<u8>> = if nblocks > 1 && nbytes >= PARALLEL_FROM {
        use rayon::prelude::*;
        data.par_chunks(bs)
            .enumerate()
            .map_init(scratch, one)
            .collect::<Result<_, Error>>()?
    } else {
        let mut s = scratch();
        data.chunks(bs)
            .enumerate()
            .map(|jb| one(&mut s, jb))
            .collect::<Result<_, Error>>()?
    };
    let body: usize = blocks.iter().map(Vec::len).sum();
    let cbytes = HEADER + 4 * nblocks + body;
    if cbytes > nbytes + HEADER {
        // no gain: stored as it is, as C-Blosc does when the compressed chunk would not fit
        return Ok(stored());
    }
    let mut out = Vec::with_capacity(cbytes);
    out.extend_from_slice(&header(ts, nbytes, bs, flags));
    out[12..16].copy_from_slice(&(cbytes as u32).to_le_bytes());
    let mut at = HEADER + 4 * nblocks;
    for b in &blocks {
        out.extend_from_slice(&(at as u32).to_le_bytes());
        at += b.len();
    }
    for b in &blocks {
        out.extend_from_slice(b);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize) -> Vec<u8> {
        (0..n as u32)
            .flat_map(|i| (u64::from(i / 3) * 1000 + u64::from(i % 5)).to_le_bytes())
            .collect()
    }

    #[test]
    fn every_codec_and_shuffle_round_trips() {
        for codec in [
            Codec::Blosclz,
            Codec::Lz4,
            Codec::Lz4hc,
            Codec::Zlib,
            Codec::Zstd,
        ] {
            for shuffle in [Shuffle::None, Shuffle::Byte, Shuffle::Bit] {
                for (n, ts) in [(0, 8), (100, 8), (5000, 8), (70_003, 4), (300_000, 8)] {
                    for clevel in [0, 1, 5, 9] {
                        let p = Params {
                            codec,
                            clevel,
                            shuffle,
                            typesize: ts,
                            blocksize: 0,
                        };
                        let data = items(n / 8 + 1)[..n].to_vec();
                        let c = encode(&data, &p).unwrap();
                        assert_eq!(decode(&c, n).unwrap(), data, "{p:?} {n}");
                        if clevel > 0 && n >= 5000 {
                            let most = if shuffle == Shuffle::Byte { n / 2 } else { n };
                            assert!(c.len() < most, "{p:?} {n}: {}", c.len());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn block_sizes_are_c_blosc_1_s() {
        // python-blosc's default for 32 MiB of 8-byte items: blosclz, level 9, split
        assert_eq!(block_size(Codec::Blosclz, 9, 8, 32 << 20, 0), 1 << 20);
        assert!(split_block(Codec::Blosclz, 8, 1 << 20));
        // zstd never splits; level 9 doubles the block of the high-ratio codecs
        assert_eq!(block_size(Codec::Zstd, 9, 8, 32 << 20, 0), 1 << 20);
        assert!(!split_block(Codec::Zstd, 8, 1 << 20));
        // small inputs: one block of whole items
        assert_eq!(block_size(Codec::Lz4, 5, 8, 1001, 0), 1000);
        assert_eq!(block_size(Codec::Lz4, 5, 8, 3, 0), 1);
    }

    #[test]
    fn writes_what_c_blosc_1_writes_for_a_python_default() {
        // `blosc.compress(b"ASDF" * 2000)` with python-blosc 1.11.4 (C-Blosc 1.21): the same
        // header, and a chunk that decodes to the input
        let data = b"ASDF".repeat(2000);
        let c = encode(&data, &Params::default()).unwrap();
        assert_eq!(
            &c[..12],
            b"\x02\x01\x01\x08\x40\x1f\x00\x00\x40\x1f\x00\x00"
        );
        assert_eq!(decode(&c, 8000).unwrap(), data);
    }

    #[test]
    fn hostile_headers_are_errors() {
        let data = items(20_000);
        let good = encode(&data, &Params::default()).unwrap();
        let n = data.len();
        // version, reserved flag, both shuffles, snappy, codec format version
        for (at, v) in [(0, 3u8), (0, 0), (2, 0x09), (2, 0x05), (2, 0x41), (1, 2)] {
            let mut bad = good.clone();
            bad[at] = v;
            assert!(decode(&bad, n).is_err(), "byte {at} = {v}");
        }
        // a block size beyond the decoded size, or zero
        for bs in [n as u32 + 1, 0, u32::MAX] {
            let mut bad = good.clone();
            bad[8..12].copy_from_slice(&bs.to_le_bytes());
            assert!(decode(&bad, n).is_err(), "blocksize {bs}");
        }
        // a decoded size above the limit is refused before anything is allocated
        let mut bad = good.clone();
        bad[4..8].copy_from_slice(&0x2000_0000u32.to_le_bytes());
        bad[8..12].copy_from_slice(&0x2000_0000u32.to_le_bytes());
        assert!(matches!(decode(&bad, n), Err(Error::TooLarge { .. })));
        // compressed sizes beyond the input, or too small for the block starts
        for cb in [good.len() as u32 + 1, 16, 17] {
            let mut bad = good.clone();
            bad[12..16].copy_from_slice(&cb.to_le_bytes());
            assert!(decode(&bad, n).is_err(), "cbytes {cb}");
        }
        // cut anywhere: an error
        for cut in [0, 10, 16, 20, good.len() / 2, good.len() - 1] {
            assert!(decode(&good[..cut], n).is_err(), "cut at {cut}");
        }
        // any single byte changed: an error or other bytes, never a panic
        for at in 0..good.len().min(400) {
            for flip in [0x01, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[at] ^= flip;
                if let Ok(out) = decode(&bad, n) {
                    assert_eq!(out.len(), n);
                }
            }
        }
    }

    /// Decode and encode speed on the chunk python-blosc wrote of `floats.data` (in the
    /// folder `asdf-codec-bench` of the system's temporary directory, as asdf-core's
    /// `time_decode`): `cargo test -p asdfrs-blosc2 --release --features dev-tools --lib
    /// blosc1_speed -- --nocapture`.
    #[test]
    #[cfg(feature = "dev-tools")]
    fn blosc1_speed() {
        use std::time::{Duration, Instant};
        let dir = std::env::temp_dir().join("asdf-codec-bench");
        let data = std::fs::read(dir.join("floats.data")).unwrap();
        let stored = std::fs::read(dir.join("floats.blsc")).unwrap();
        let best = |n: usize, f: &mut dyn FnMut()| {
            (0..n).fold(Duration::MAX, |b, _| {
                let t = Instant::now();
                f();
                b.min(t.elapsed())
            })
        };
        let whole = best(15, &mut || {
            assert!(decode(&stored, data.len()).unwrap() == data)
        });
        let mut out = vec![0u8; data.len()];
        let into = best(15, &mut || decode_to_slice(&stored, &mut out).unwrap());
        let mut ours = Vec::new();
        let enc = best(5, &mut || ours = encode(&data, &Params::default()).unwrap());
        assert!(decode(&ours, data.len()).unwrap() == data);
        eprintln!(
            "python-blosc's chunk of {} MiB (ratio {:.2}): decode best {whole:?} (into a warm \
             buffer {into:?}); our encoding {enc:?}, ratio {:.2}",
            data.len() >> 20,
            data.len() as f64 / stored.len() as f64,
            data.len() as f64 / ours.len() as f64
        );
    }

    #[test]
    fn chunks_from_before_the_split_flag_decode_unsplit() {
        // 32-byte items, flag clear: one stream a block, as C-Blosc 1.x reads it
        let data = items(4096);
        let p = Params {
            typesize: 32,
            ..Params::default()
        };
        let mut c = encode(&data, &p).unwrap();
        assert_ne!(c[2] & FLAG_DONT_SPLIT, 0);
        c[2] &= !FLAG_DONT_SPLIT;
        assert_eq!(decode(&c, data.len()).unwrap(), data);
    }
}
