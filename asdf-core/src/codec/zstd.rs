//! `zstd`: one zstd frame (asdf-compression's `zstandard.ZstdCompressor().compress`).

use super::{read_growing, to_usize, CodecError, Compression};

const CODEC: &str = "zstd";

fn corrupt(e: &std::io::Error) -> CodecError {
    CodecError::Corrupt {
        codec: CODEC,
        message: e.to_string(),
    }
}

/// Check the frame's declared content size, when it has one, against `expected`.
fn check_content_size(stored: &[u8], expected: u64) -> Result<(), CodecError> {
    match ::zstd::zstd_safe::get_frame_content_size(stored) {
        Ok(Some(n)) if n != expected => Err(CodecError::SizeMismatch {
            expected,
            actual: n,
        }),
        Ok(_) => Ok(()),
        Err(_) => Err(CodecError::Corrupt {
            codec: CODEC,
            message: "not a zstd frame".into(),
        }),
    }
}

pub(super) fn decode(stored: &[u8], data_size: u64) -> Result<Vec<u8>, CodecError> {
    check_content_size(stored, data_size)?;
    let plausible = stored
        .len()
        .saturating_mul(Compression::Zstd.plausible_ratio())
        .max(64 << 10);
    if data_size <= plausible as u64 {
        let mut out = crate::mem::zeroed_bytes(to_usize(data_size)?)
            .ok_or(CodecError::TooLargeForPlatform { size: data_size })?;
        decode_into(stored, &mut out)?;
        Ok(out)
    } else {
        let r = ::zstd::stream::read::Decoder::with_buffer(stored).map_err(|e| corrupt(&e))?;
        read_growing(Compression::Zstd, r, data_size, plausible)
    }
}

pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    let expected = out.len() as u64;
    check_content_size(stored, expected)?;
    let mut d = ::zstd::bulk::Decompressor::new().map_err(|e| corrupt(&e))?;
    match d.decompress_to_buffer(stored, out) {
        Ok(n) if n == out.len() => Ok(()),
        Ok(n) => Err(CodecError::SizeMismatch {
            expected,
            actual: n as u64,
        }),
        Err(e) => {
            // Tell a too-small destination (more data than declared) from corrupt data.
            let r = ::zstd::stream::read::Decoder::with_buffer(stored).map_err(|e| corrupt(&e))?;
            match super::read_exact_into(Compression::Zstd, r, out) {
                Err(CodecError::ExcessData { expected }) => {
                    Err(CodecError::ExcessData { expected })
                }
                _ => Err(corrupt(&e)),
            }
        }
    }
}

pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
    ::zstd::bulk::compress(data, level.unwrap_or(3)).map_err(|e| CodecError::Encode {
        codec: CODEC,
        message: e.to_string(),
    })
}
