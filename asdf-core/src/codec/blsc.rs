//! `blsc`: one Blosc1 chunk as python-blosc writes it (`blosc.compress`, defaults typesize 8,
//! clevel 9, byte shuffle, blosclz), decoded and encoded by our pure-Rust asdf-blosc2
//! (`asdf_blosc2::blosc1`, feature `blosc2`), which checks every header field against the
//! stored bytes and the block's declared size before anything is sized by it.

use super::CodecError;

const CODEC: &str = "blsc";

/// The c-blosc1 chunk header's decoded size, for the size check before any work.
fn declared_size(stored: &[u8]) -> Result<u64, CodecError> {
    match stored.get(4..8) {
        Some(b) if stored.len() >= 16 => {
            Ok(u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        }
        _ => Err(CodecError::Corrupt {
            codec: CODEC,
            message: format!(
                "chunk of {} bytes is shorter than the 16-byte header",
                stored.len()
            ),
        }),
    }
}

#[cfg(feature = "blosc2")]
mod imp {
    use super::{CodecError, CODEC};
    use asdf_blosc2::blosc1::{self, Params};
    use asdf_blosc2::Error;

    fn codec_error(e: Error) -> CodecError {
        match e {
            Error::UnsupportedCodec { .. } | Error::Unsupported { .. } => CodecError::Unsupported {
                codec: CODEC,
                reason: e.to_string(),
            },
            e => CodecError::Corrupt {
                codec: CODEC,
                message: e.to_string(),
            },
        }
    }

    /// Checks the header: its fields (as C-Blosc 1.x reads them), its compressed size
    /// against the stored bytes, its decoded size against `expected`.
    pub(super) fn check(stored: &[u8], expected: u64) -> Result<(), CodecError> {
        let h = blosc1::parse(stored).map_err(codec_error)?;
        if h.cbytes > stored.len() {
            return Err(CodecError::Corrupt {
                codec: CODEC,
                message: format!(
                    "header claims {} compressed bytes, {} stored",
                    h.cbytes,
                    stored.len()
                ),
            });
        }
        super::check_size(stored, expected)
    }

    pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        check(stored, out.len() as u64)?;
        blosc1::decode_to_slice(stored, out).map_err(codec_error)
    }

    pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
        let p = Params {
            clevel: level.map_or(9, |l| l.clamp(0, 9) as u8),
            ..Params::default()
        };
        blosc1::encode(data, &p).map_err(|e| match e {
            Error::TooLarge { .. } => CodecError::Unsupported {
                codec: CODEC,
                reason: format!(
                    "{} bytes exceed the blosc1 chunk limit of 2 GiB",
                    data.len()
                ),
            },
            e => CodecError::Encode {
                codec: CODEC,
                message: e.to_string(),
            },
        })
    }
}

#[cfg(not(feature = "blosc2"))]
mod imp {
    use super::{CodecError, CODEC};

    fn unsupported() -> CodecError {
        CodecError::Unsupported {
            codec: CODEC,
            reason: "asdf-core was built without the `blosc2` feature".into(),
        }
    }

    pub(super) fn check(stored: &[u8], expected: u64) -> Result<(), CodecError> {
        super::check_size(stored, expected)?;
        Err(unsupported())
    }

    pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        check(stored, out.len() as u64)
    }

    pub(super) fn encode(_data: &[u8], _level: Option<i32>) -> Result<Vec<u8>, CodecError> {
        Err(unsupported())
    }
}

/// Decode one chunk into exactly `data_size` bytes.
pub(super) fn decode(stored: &[u8], data_size: u64) -> Result<Vec<u8>, CodecError> {
    // The header is checked (its fields, and its sizes against the stored bytes and
    // `data_size`) before the output is allocated.
    imp::check(stored, data_size)?;
    let mut out = crate::mem::zeroed_bytes(super::to_usize(data_size)?)
        .ok_or(CodecError::TooLargeForPlatform { size: data_size })?;
    imp::decode_into(stored, &mut out)?;
    Ok(out)
}

/// The header's decoded size must be `expected`.
fn check_size(stored: &[u8], expected: u64) -> Result<(), CodecError> {
    let actual = declared_size(stored)?;
    if actual != expected {
        return Err(CodecError::SizeMismatch { expected, actual });
    }
    Ok(())
}

/// Decode one chunk into `out`, which must be its decoded size.
pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    imp::decode_into(stored, out)
}

/// Encode `data` as one chunk: blosclz with byte shuffle of 8-byte items, level `level`
/// (0 to 9, default 9), as python-blosc's `blosc.compress` defaults.
pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
    imp::encode(data, level)
}
