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
