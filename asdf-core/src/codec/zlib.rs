//! `zlib`: a zlib stream (python asdf writes one `zlib.compress` stream per block).
//!
//! Like python's `zlib.decompressobj`, bytes after the end of the stream are ignored, except
//! that a further zlib stream directly after it is decoded too (concatenated streams).

use std::io::{self, Read};

use flate2::bufread::ZlibDecoder;

use super::CodecError;

/// A reader over one or more concatenated zlib streams.
pub(super) struct MultiZlib<'a> {
    inner: ZlibDecoder<&'a [u8]>,
}

/// Whether `b` starts with a valid zlib header (deflate method, header check bits).
pub(super) fn is_zlib_header(b: &[u8]) -> bool {
    match b {
        [cmf, flg, ..] => {
            cmf & 0x0f == 8
                && (cmf >> 4) <= 7
                && (u16::from(*cmf) * 256 + u16::from(*flg)) % 31 == 0
        }
        _ => false,
    }
}

pub(super) fn reader(stored: &[u8]) -> MultiZlib<'_> {
    MultiZlib {
        inner: ZlibDecoder::new(stored),
    }
}

impl Read for MultiZlib<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let n = self.inner.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            let rest: &[u8] = self.inner.get_ref();
            if !is_zlib_header(rest) {
                return Ok(0);
            }
            self.inner = ZlibDecoder::new(rest);
        }
    }
}

pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
    let level = level.map_or(6, |l| l.clamp(0, 9) as u32);
    let mut enc = flate2::bufread::ZlibEncoder::new(data, flate2::Compression::new(level));
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    enc.read_to_end(&mut out).map_err(|e| CodecError::Encode {
        codec: "zlib",
        message: e.to_string(),
    })?;
    Ok(out)
}
