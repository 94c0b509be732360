//! Compression codecs, selected by the block header's 4-byte label.
//!
//! | label | format | module |
//! |---|---|---|
//! | `zlib` | one zlib stream (several concatenated streams are accepted) | `zlib` |
//! | `bzp2` | bzip2 stream(s); large blocks written as one stream and decoded block by block on every core | `bzp2` |
//! | `lz4\0` | python asdf's chunks: `[u32 BE n][u32 LE len][lz4 block of n-4 bytes]`, 4 MiB of input each; or one lz4 frame (ASDF.jl's `lz4_layout=:frame`), told apart by the frame magic `04 22 4D 18` | `lz4`, `lz4f` |
//! | `zstd` | one zstd frame (asdf-compression), large ones compressed on every core | `zstd` |
//! | `lz4f` | one lz4 frame (asdf-compression) | `lz4f` |
//! | `blsc` | one Blosc1 chunk as python-blosc writes it (asdf-compression; through asdf-blosc2, feature `blosc2`) | `blsc` |
//! | `xz\0\0` | one xz stream (ASDF.jl), or several concatenated | `xz` |
//!
//! Decoding never trusts the declared size for its allocation: the output buffer is at most a
//! per-codec plausible multiple of the stored size and grows as real output arrives, never
//! beyond the declared size, which the output must match exactly.
//!
//! ```
//! use asdf_core::unstable::codec::{decode, encode, Compression};
//! let data = vec![42u8; 10_000];
//! let stored = encode(Compression::Zlib, &data, None)?;
//! assert_eq!(decode(Compression::Zlib, &stored, 10_000)?, data);
//! # Ok::<(), asdf_core::unstable::codec::CodecError>(())
//! ```

use std::io::Read;
use std::str::FromStr;

mod blosc2;
mod blosc_layout;
mod blsc;
mod bzp2;
mod lz4;
mod lz4f;
mod pieced;
pub(crate) mod stream;
mod xz;
mod zlib;
mod zstd;

pub(crate) use blsc::{
    abacus_piece_ranges as blsc_abacus_pieces, is_one_chunk as blsc_is_one_chunk,
};
pub(crate) use stream::decoder;

/// Errors of the codec layer (the caller adds the block index).
#[derive(Debug, thiserror::Error, PartialEq, Eq, Clone)]
#[non_exhaustive]
pub enum CodecError {
    /// A compression label no codec handles.
    #[error("unknown compression label {:?}", String::from_utf8_lossy(.0))]
    UnknownLabel([u8; 4]),
    /// A compression name no codec handles.
    #[error("unknown compression name {0:?}")]
    UnknownName(String),
    /// The codec or this variant of it is not supported by this build.
    #[error("{codec} is not supported: {reason}")]
    Unsupported {
        /// Codec name.
        codec: &'static str,
        /// Why.
        reason: String,
    },
    /// The stored bytes are not valid for the codec.
    #[error("corrupt {codec} data: {message}")]
    Corrupt {
        /// Codec name.
        codec: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The decoded data is shorter or longer than declared.
    #[error("decoded size {actual} does not match the declared {expected}")]
    SizeMismatch {
        /// Declared size.
        expected: u64,
        /// Decoded (or, when known up front, claimed) size.
        actual: u64,
    },
    /// The decoder produces more than the declared size.
    #[error("decoded data exceeds the declared {expected} bytes")]
    ExcessData {
        /// Declared size.
        expected: u64,
    },
    /// The size does not fit in this platform's address space.
    #[error("{size} bytes do not fit in memory on this platform")]
    TooLargeForPlatform {
        /// The size.
        size: u64,
    },
    /// Compression failed.
    #[error("{codec} compression failed: {message}")]
    Encode {
        /// Codec name.
        codec: &'static str,
        /// What went wrong.
        message: String,
    },
}

/// A block compression codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compression {
    /// `zlib`: a zlib stream.
    Zlib,
    /// `bzp2`: a bzip2 stream.
    Bzp2,
    /// `lz4\0`: python asdf's chunked lz4 blocks.
    Lz4,
    /// `zstd`: a zstd frame.
    Zstd,
    /// `lz4f`: an lz4 frame.
    Lz4f,
    /// `blsc`: a Blosc1 chunk (python-blosc, C-Blosc 1.x).
    Blsc,
    /// `bsc2`: a Blosc2 contiguous frame of a 1-D super-chunk (abacusutils).
    Bsc2,
    /// `bls2`: one Blosc2 chunk (asdf-compression).
    Bls2,
    /// `xz\0\0`: an xz stream (ASDF.jl).
    Xz,
}

impl Compression {
    /// Every codec.
    pub const ALL: [Compression; 9] = [
        Compression::Zlib,
        Compression::Bzp2,
        Compression::Lz4,
        Compression::Zstd,
        Compression::Lz4f,
        Compression::Blsc,
        Compression::Bsc2,
        Compression::Bls2,
        Compression::Xz,
    ];

    /// The codec for a block header label: `None` for all zeros, an error for an unknown one.
    pub fn from_label(label: &[u8; 4]) -> Result<Option<Compression>, CodecError> {
        if label == &[0; 4] {
            return Ok(None);
        }
        Compression::ALL
            .into_iter()
            .find(|c| &c.label() == label)
            .map(Some)
            .ok_or(CodecError::UnknownLabel(*label))
    }

    /// The 4-byte block header label (`lz4` and `xz` are padded with zero bytes).
    pub fn label(self) -> [u8; 4] {
        match self {
            Compression::Zlib => *b"zlib",
            Compression::Bzp2 => *b"bzp2",
            Compression::Lz4 => *b"lz4\0",
            Compression::Zstd => *b"zstd",
            Compression::Lz4f => *b"lz4f",
            Compression::Blsc => *b"blsc",
            Compression::Bsc2 => *b"bsc2",
            Compression::Bls2 => *b"bls2",
            Compression::Xz => *b"xz\0\0",
        }
    }

    /// The label as text, without padding: `zlib`, `bzp2`, `lz4`, `zstd`, `lz4f`, `blsc`,
    /// `bsc2`, `bls2`, `xz`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Zlib => "zlib",
            Compression::Bzp2 => "bzp2",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
            Compression::Lz4f => "lz4f",
            Compression::Blsc => "blsc",
            Compression::Bsc2 => "bsc2",
            Compression::Bls2 => "bls2",
            Compression::Xz => "xz",
        }
    }

    /// Output bytes per stored byte below which the declared size is allocated at once.
    fn plausible_ratio(self) -> usize {
        match self {
            Compression::Zlib => 1032,
            Compression::Bzp2 => 1 << 16,
            Compression::Lz4 | Compression::Lz4f => 256,
            Compression::Zstd => 40_000,
            Compression::Blsc | Compression::Bsc2 | Compression::Bls2 => 1 << 16,
            // LZMA2 codes a long run in a few bits, as bzip2 does
            Compression::Xz => 1 << 16,
        }
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Compression {
    type Err = CodecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Compression::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| CodecError::UnknownName(s.to_owned()))
    }
}

fn to_usize(size: u64) -> Result<usize, CodecError> {
    usize::try_from(size).map_err(|_| CodecError::TooLargeForPlatform { size })
}

/// Decode `stored` into exactly `data_size` bytes.
#[doc(hidden)] // plumbing: asdf_core::unstable
pub fn decode(c: Compression, stored: &[u8], data_size: u64) -> Result<Vec<u8>, CodecError> {
    match c {
        Compression::Lz4 if lz4::is_frame(stored) => {
            decode(Compression::Lz4f, stored, data_size).map_err(lz4::frame_error)
        }
        Compression::Lz4 => lz4::decode(stored, data_size),
        Compression::Blsc => blsc::decode(stored, data_size),
        Compression::Zstd => zstd::decode(stored, data_size),
        Compression::Bls2 => blosc2::decode_bls2(stored, data_size),
        Compression::Bsc2 => blosc2::decode_bsc2(stored, data_size),
        _ => {
            let plausible = stored
                .len()
                .saturating_mul(c.plausible_ratio())
                .max(64 << 10);
            if data_size <= plausible as u64 {
                let mut out = crate::mem::zeroed_bytes(to_usize(data_size)?)
                    .ok_or(CodecError::TooLargeForPlatform { size: data_size })?;
                decode_into(c, stored, &mut out)?;
                Ok(out)
            } else {
                match c {
                    Compression::Zlib => {
                        read_growing(c, zlib::reader(stored), data_size, plausible)
                    }
                    Compression::Bzp2 => {
                        read_growing(c, bzp2::reader(stored), data_size, plausible)
                    }
                    Compression::Xz => read_growing(c, xz::reader(stored), data_size, plausible),
                    _ => read_growing(c, lz4f::reader(stored), data_size, plausible),
                }
            }
        }
    }
}

/// Decode `stored` into `out`, which must be filled exactly.
#[doc(hidden)] // plumbing: asdf_core::unstable
pub fn decode_into(c: Compression, stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    match c {
        Compression::Zlib => read_exact_into(c, zlib::reader(stored), out),
        Compression::Bzp2 => bzp2::decode_into(stored, out),
        Compression::Lz4 if lz4::is_frame(stored) => {
            decode_into(Compression::Lz4f, stored, out).map_err(lz4::frame_error)
        }
        Compression::Lz4 => lz4::decode_into(stored, out),
        Compression::Zstd => zstd::decode_into(stored, out),
        Compression::Lz4f => read_exact_into(c, lz4f::reader(stored), out),
        Compression::Xz => read_exact_into(c, xz::reader(stored), out),
        Compression::Blsc => blsc::decode_into(stored, out),
        Compression::Bls2 | Compression::Bsc2 => {
            let v = decode(c, stored, out.len() as u64)?;
            out.copy_from_slice(&v);
            Ok(())
        }
    }
}

/// Encode `data` the way python asdf and asdf-compression write it. `level` is the codec's
/// compression level (zlib 0–9, default 6; bzp2 1–9, default 9; zstd, default 3; blsc 0–9,
/// default 9; xz 0–9, default 6); lz4 and lz4f ignore it.
#[doc(hidden)] // plumbing: asdf_core::unstable
pub fn encode(c: Compression, data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
    encode_items(c, data, level, 1)
}

/// As [`encode`], for data made of items of `typesize` bytes: `bsc2` and `bls2` shuffle by
/// it (the other codecs ignore it; `blsc` always writes typesize 8, as python-blosc does).
#[doc(hidden)] // plumbing: asdf_core::unstable
pub fn encode_items(
    c: Compression,
    data: &[u8],
    level: Option<i32>,
    typesize: usize,
) -> Result<Vec<u8>, CodecError> {
    match c {
        Compression::Bls2 => blosc2::encode_bls2(data, level, typesize),
        Compression::Bsc2 => blosc2::encode_bsc2(data, level, typesize),
        Compression::Zlib => zlib::encode(data, level),
        Compression::Bzp2 => bzp2::encode(data, level),
        Compression::Lz4 => Ok(lz4::encode(data)),
        Compression::Zstd => zstd::encode(data, level),
        Compression::Lz4f => lz4f::encode(data),
        Compression::Blsc => blsc::encode(data, level),
        Compression::Xz => xz::encode(data, level),
    }
}

/// Input bytes per independently compressed `lz4` chunk (4 MiB, as python asdf writes).
pub(crate) use zstd::{
    encode_streaming as zstd_encode_streaming, streams_on_workers as zstd_streams,
    StreamError as ZstdStreamError,
};

pub(crate) const LZ4_CHUNK_INPUT: usize = lz4::CHUNK_INPUT;

/// The first four stored bytes of an `lz4` block that is one lz4 frame (ASDF.jl's `:frame`
/// layout) rather than python asdf's chunks.
pub(crate) const LZ4_FRAME_MAGIC: [u8; 4] = lz4::FRAME_MAGIC;

/// One framed `lz4` chunk (`[u32 BE n][u32 LE len][lz4 block]`) of `input`, at most
/// [`LZ4_CHUNK_INPUT`] bytes: the stored bytes of an `lz4` block are such chunks one after
/// the other, so a writer can compress them in parallel and write each as it is ready.
pub(crate) fn lz4_encode_chunk(input: &[u8]) -> Vec<u8> {
    lz4::encode_chunk(input)
}

fn corrupt(c: Compression, e: &std::io::Error) -> CodecError {
    CodecError::Corrupt {
        codec: c.name(),
        message: e.to_string(),
    }
}

/// Fill `out` from `r`, then make sure `r` has nothing more.
fn read_exact_into<R: Read>(c: Compression, r: R, out: &mut [u8]) -> Result<(), CodecError> {
    read_exact_reporting(c, r, out, &mut |_| ())
}

/// Fills `out` from the decoder `r` and checks that nothing follows, telling `report` the
/// bytes filled so far every [`REPORT_EVERY`] bytes and at the end.
fn read_exact_reporting<R: Read>(
    c: Compression,
    mut r: R,
    out: &mut [u8],
    report: &mut dyn FnMut(u64),
) -> Result<(), CodecError> {
    let (mut filled, mut told) = (0, 0);
    while filled < out.len() {
        // at most REPORT_EVERY bytes a call, so that a decoder that fills all it is given
        // still reports as it goes
        let end = filled.saturating_add(REPORT_EVERY).min(out.len());
        let slot = out.get_mut(filled..end).unwrap_or_default();
        match r.read(slot) {
            Ok(0) => {
                return Err(CodecError::SizeMismatch {
                    expected: out.len() as u64,
                    actual: filled as u64,
                })
            }
            Ok(n) => {
                filled += n;
                if filled - told >= REPORT_EVERY || filled == out.len() {
                    report(filled as u64);
                    told = filled;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(corrupt(c, &e)),
        }
    }
    check_end(c, r, out.len() as u64)
}

/// How often [`decode_into_reporting`] reports, in bytes decoded.
const REPORT_EVERY: usize = 8 << 20;

/// As [`decode_into`], telling `report` how many bytes are decoded so far: every 8 MiB for
/// the codecs that decode in order on one thread anyway (zlib, zstd, lz4f, blsc, xz), through
/// their streaming decoders; once, at the end, for those that decode pieces on several
/// threads at once (bzp2, lz4, bls2, bsc2), whose speed a stream would cost.
pub(crate) fn decode_into_reporting(
    c: Compression,
    stored: &[u8],
    out: &mut [u8],
    report: &mut dyn FnMut(u64),
) -> Result<(), CodecError> {
    let streamed = match c {
        Compression::Zlib
        | Compression::Zstd
        | Compression::Lz4f
        | Compression::Blsc
        | Compression::Xz => stream::decoder_at(c, stored, out.len() as u64),
        _ => None,
    };
    match streamed {
        Some(r) => read_exact_reporting(c, r, out, report),
        None => {
            decode_into(c, stored, out)?;
            report(out.len() as u64);
            Ok(())
        }
    }
}

fn check_end<R: Read>(c: Compression, mut r: R, expected: u64) -> Result<(), CodecError> {
    let mut extra = [0u8; 1];
    loop {
        match r.read(&mut extra) {
            Ok(0) => return Ok(()),
            Ok(_) => return Err(CodecError::ExcessData { expected }),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(corrupt(c, &e)),
        }
    }
}

/// Read exactly `expected` bytes from `r` into a buffer that starts at `initial` bytes and
/// doubles as output arrives.
fn read_growing<R: Read>(
    c: Compression,
    mut r: R,
    expected: u64,
    initial: usize,
) -> Result<Vec<u8>, CodecError> {
    let expected_usize = to_usize(expected)?;
    let mut out = vec![0u8; initial.min(expected_usize)];
    let mut filled = 0usize;
    loop {
        if filled == out.len() {
            if filled == expected_usize {
                break;
            }
            let grown = out
                .len()
                .saturating_mul(2)
                .max(64 << 10)
                .min(expected_usize);
            out.resize(grown, 0);
        }
        let slot = out.get_mut(filled..).unwrap_or_default();
        match r.read(slot) {
            Ok(0) => {
                return Err(CodecError::SizeMismatch {
                    expected,
                    actual: filled as u64,
                })
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(corrupt(c, &e)),
        }
    }
    check_end(c, r, expected)?;
    Ok(out)
}

#[cfg(test)]
mod tests;
