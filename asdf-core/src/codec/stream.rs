//! Decoding a block as a stream: [`decoder`] reads stored bytes from any reader and yields
//! the decoded bytes a piece at a time, so a block larger than memory can be converted or
//! copied with memory bounded by the codec's window. `zlib`, `bzp2`, `zstd` and `lz4f` are
//! streams already; `lz4` blocks are decoded one 4 MiB chunk at a time. The Blosc formats
//! (`blsc`, `bsc2`, `bls2`) are not streams: [`decoder`] returns `None` for them.
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
/// use asdf_core::codec::{decoder, encode, Compression};
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
