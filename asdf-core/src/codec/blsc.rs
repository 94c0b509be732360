//! `blsc`: one c-blosc1 chunk as python-blosc writes it (`blosc.compress`, defaults typesize
//! 8, clevel 9, byte shuffle, blosclz), decoded and encoded through the C library (feature
//! `blosc`). The 16-byte chunk header is validated here before any call into C.

use super::CodecError;

const CODEC: &str = "blsc";

fn corrupt(message: String) -> CodecError {
    CodecError::Corrupt {
        codec: CODEC,
        message,
    }
}

/// The c-blosc1 chunk header.
#[derive(Debug)]
#[cfg_attr(not(feature = "blosc"), allow(dead_code))]
struct ChunkHeader {
    version: u8,
    flags: u8,
    typesize: u8,
    nbytes: u32,
    blocksize: u32,
    cbytes: u32,
}

/// Flag: the data is stored uncompressed after the header.
const MEMCPYED: u8 = 0x2;

fn le32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        a.copy_from_slice(s);
    }
    u32::from_le_bytes(a)
}

/// Parse and check the chunk header against the stored size and the expected output size.
fn check_header(stored: &[u8], expected: u64) -> Result<ChunkHeader, CodecError> {
    if stored.len() < 16 {
        return Err(corrupt(format!(
            "chunk of {} bytes is shorter than the 16-byte header",
            stored.len()
        )));
    }
    let h = ChunkHeader {
        version: stored[0],
        flags: stored[2],
        typesize: stored[3],
        nbytes: le32(stored, 4),
        blocksize: le32(stored, 8),
        cbytes: le32(stored, 12),
    };
    if h.version == 0 || h.version > 2 {
        return Err(CodecError::Unsupported {
            codec: CODEC,
            reason: format!(
                "blosc format version {} (only blosc1 versions 1 and 2)",
                h.version
            ),
        });
    }
    if h.typesize == 0 {
        return Err(corrupt("typesize 0".into()));
    }
    if (h.cbytes as usize) < 16 || h.cbytes as usize > stored.len() {
        return Err(corrupt(format!(
            "header claims {} compressed bytes, {} stored",
            h.cbytes,
            stored.len()
        )));
    }
    if u64::from(h.nbytes) != expected {
        return Err(CodecError::SizeMismatch {
            expected,
            actual: u64::from(h.nbytes),
        });
    }
    if h.flags & MEMCPYED != 0 {
        if u64::from(h.cbytes) != u64::from(h.nbytes) + 16 {
            return Err(corrupt(format!(
                "uncompressed chunk of {} bytes stored in {}",
                h.nbytes, h.cbytes
            )));
        }
    } else if h.nbytes > 0 {
        if h.blocksize == 0 {
            return Err(corrupt("blocksize 0".into()));
        }
        // One 4-byte start offset per block follows the header.
        let nblocks = u64::from(h.nbytes).div_ceil(u64::from(h.blocksize));
        if 16 + 4 * nblocks > u64::from(h.cbytes) {
            return Err(corrupt(format!(
                "{nblocks} blocks do not fit in {} compressed bytes",
                h.cbytes
            )));
        }
    }
    Ok(h)
}

#[cfg(feature = "blosc")]
mod ffi {
    use super::{check_header, corrupt, CodecError, CODEC};
    use std::os::raw::{c_int, c_void};

    pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        let h = check_header(stored, out.len() as u64)?;
        if h.nbytes == 0 {
            return Ok(());
        }
        let cbytes = h.cbytes as usize;
        let mut nbytes = 0usize;
        // SAFETY: `stored` is a valid readable buffer of at least `cbytes` bytes (checked by
        // `check_header`), and `nbytes` is a valid out pointer; c-blosc only reads within
        // the given length.
        let valid = unsafe {
            blosc_src::blosc_cbuffer_validate(stored.as_ptr().cast::<c_void>(), cbytes, &mut nbytes)
        };
        if valid != 0 || nbytes != out.len() {
            return Err(corrupt("chunk header rejected by c-blosc".into()));
        }
        let threads: c_int = if out.len() >= 1 << 20 {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(8) as c_int)
        } else {
            1
        };
        // SAFETY: `stored` holds a chunk whose header c-blosc validated against `cbytes`
        // readable bytes; `out` is a writable buffer of exactly `out.len()` bytes, which is
        // passed as `destsize`, and c-blosc guarantees not to write past `destsize`. The
        // buffers do not overlap (one is borrowed shared, the other exclusively).
        let n = unsafe {
            blosc_src::blosc_decompress_ctx(
                stored.as_ptr().cast::<c_void>(),
                out.as_mut_ptr().cast::<c_void>(),
                out.len(),
                threads,
            )
        };
        if n < 0 || n as usize != out.len() {
            return Err(corrupt(format!("c-blosc decompression failed ({n})")));
        }
        Ok(())
    }

    pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
        if data.len() > blosc_src::BLOSC_MAX_BUFFERSIZE as usize {
            return Err(CodecError::Unsupported {
                codec: CODEC,
                reason: format!(
                    "{} bytes exceed the blosc1 chunk limit of 2 GiB",
                    data.len()
                ),
            });
        }
        let clevel = level.map_or(9, |l| l.clamp(0, 9));
        let cap = data.len() + blosc_src::BLOSC_MAX_OVERHEAD as usize;
        let mut out = vec![0u8; cap];
        let threads: c_int = if data.len() >= 1 << 20 {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(8) as c_int)
        } else {
            1
        };
        // SAFETY: `data` is readable for `data.len()` bytes, `out` writable for `cap` bytes
        // (passed as `destsize`, which c-blosc never writes past), the compressor name is a
        // NUL-terminated static string, and the buffers do not overlap.
        let n = unsafe {
            blosc_src::blosc_compress_ctx(
                clevel,
                blosc_src::BLOSC_SHUFFLE as c_int,
                8,
                data.len(),
                data.as_ptr().cast::<c_void>(),
                out.as_mut_ptr().cast::<c_void>(),
                cap,
                blosc_src::BLOSC_BLOSCLZ_COMPNAME.as_ptr().cast(),
                0,
                threads,
            )
        };
        if n <= 0 {
            return Err(CodecError::Encode {
                codec: CODEC,
                message: format!("c-blosc compression failed ({n})"),
            });
        }
        out.truncate(n as usize);
        Ok(out)
    }
}

/// Decode one chunk into exactly `data_size` bytes.
pub(super) fn decode(stored: &[u8], data_size: u64) -> Result<Vec<u8>, CodecError> {
    // The header is checked (sizes against the stored bytes and `data_size`) before the
    // output is allocated.
    check_header(stored, data_size)?;
    let mut out = crate::mem::zeroed_bytes(super::to_usize(data_size)?)
        .ok_or(CodecError::TooLargeForPlatform { size: data_size })?;
    decode_into(stored, &mut out)?;
    Ok(out)
}

#[cfg(feature = "blosc")]
pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    ffi::decode_into(stored, out)
}

#[cfg(feature = "blosc")]
pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
    ffi::encode(data, level)
}

#[cfg(not(feature = "blosc"))]
fn unsupported() -> CodecError {
    CodecError::Unsupported {
        codec: CODEC,
        reason: "asdf-core was built without the `blosc` feature".into(),
    }
}

#[cfg(not(feature = "blosc"))]
pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    check_header(stored, out.len() as u64)?;
    Err(unsupported())
}

#[cfg(not(feature = "blosc"))]
pub(super) fn encode(_data: &[u8], _level: Option<i32>) -> Result<Vec<u8>, CodecError> {
    Err(unsupported())
}
