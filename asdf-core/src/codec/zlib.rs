//! `zlib`: a zlib stream (python asdf writes one `zlib.compress` stream per block).
//!
//! Like python's `zlib.decompressobj`, bytes after the end of the stream are ignored, except
//! that a further zlib stream directly after it is decoded too (concatenated streams).

use std::io::{self, BufRead, Read};

use flate2::bufread::ZlibDecoder;

use super::CodecError;

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

/// One zlib stream, or several one after the other; bytes after the last stream that do not
/// start another are ignored, as python does. The whole-block decoder reads a slice through
/// it, the streaming decoder ([`super::stream::decoder`]) any buffered reader.
pub(super) struct Streams<R> {
    dec: Option<ZlibDecoder<R>>,
}

impl<R: BufRead> Streams<R> {
    /// The decoder of the stored bytes `stored` reads (one or more streams).
    pub(super) fn new(stored: R) -> Self {
        Streams {
            dec: Some(ZlibDecoder::new(stored)),
        }
    }
}

/// The decoder of the stored bytes of a whole block.
pub(super) fn reader(stored: &[u8]) -> Streams<&[u8]> {
    Streams::new(stored)
}

impl<R: BufRead> Read for Streams<R> {
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
            if is_zlib_header(rest.fill_buf()?) {
                self.dec = Some(ZlibDecoder::new(rest));
            }
        }
        Ok(0)
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

#[cfg(test)]
mod tests {
    use crate::codec::stream::decoder;
    use crate::codec::{encode, Compression};
    use std::io::Read;

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
}
