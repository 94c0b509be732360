//! Decoding a block as a stream, whatever its codec: [`decoder`] reads stored bytes from any
//! reader and yields the decoded bytes a piece at a time, so a block larger than memory can be
//! converted or copied with memory bounded by the codec's window. `zlib`, `bzp2`, `zstd`,
//! `lz4f` and `xz` are streams already; `lz4` blocks are decoded one 4 MiB chunk at a time
//! (or, when they are one lz4 frame, as ASDF.jl may write them, as that frame).
//!
//! The Blosc formats are not streams: their block starts sit before the data (`blsc`,
//! `bls2`) or the chunk offsets after it (`bsc2`), and a multithreaded writer stores blocks
//! in the order its threads finish. [`decoder`] returns `None` for them; [`decoder_at`]
//! decodes them from stored bytes it reads by position ([`StoredAt`]), in decoded order:
//! `blsc` and `bls2` one internal block at a time (each block is copied into a one-block
//! chunk with the original header and decoded alone), `bsc2` chunk by chunk, each chunk
//! block by block. Memory holds one block (c-blosc1 blocks are at most a few MiB; one
//! Blosc2 chunk when it uses a dictionary, lazy or variable-length blocks or the delta filter,
//! whose blocks are not independent).
//!
//! This module is the part every codec shares: the entry points, positional access, the
//! length check ([`Exact`]); `pieced` holds what the codecs' streaming decoders are built
//! on ([`StoredAt`], and `Pieced`, which makes a decoder that yields whole pieces a [`Read`]). Each codec's own streaming decoder sits with its
//! whole-block decoder in the codec's file: `zlib::Streams`, `lz4::Chunks`, `blsc::Blocks`,
//! `blosc2::stream::{Chunk, FrameReader}`.
//!
//! The decoded length is checked: more than `data_size` bytes, or fewer at the end of the
//! stored bytes, is an [`std::io::ErrorKind::InvalidData`] error naming the codec.

use std::io::{self, BufRead, Read};

#[cfg(feature = "blosc2")]
use super::blosc2::stream::{Chunk, FrameReader};
pub use super::pieced::StoredAt;
use super::pieced::{invalid, Pieced};
use super::Compression;
use super::{blsc, lz4, xz, zlib};

pub(crate) use super::blosc2::frame_pieces;

/// A reader of the decoded bytes of a block whose stored bytes `stored` gives (only its
/// `used_size` bytes: limit it with [`Read::take`]). `data_size` is the block's declared
/// decoded size, which the output must match exactly. `None` for the codecs that are not
/// streams (`blsc`, `bsc2`, `bls2`).
///
/// ```
/// use asdf_core::unstable::codec::Compression;
/// use asdf_core::unstable::{decoder, encode};
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
        Compression::Zlib => Box::new(zlib::Streams::new(stored)),
        Compression::Bzp2 => Box::new(bzip2::bufread::MultiBzDecoder::new(stored)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(stored).ok()?),
        Compression::Lz4f => Box::new(lz4_flex::frame::FrameDecoder::new(stored)),
        Compression::Lz4 => lz4::stream_decoder(stored),
        Compression::Xz => Box::new(xz::reader(stored)),
        Compression::Blsc | Compression::Bsc2 | Compression::Bls2 => return None,
    };
    Some(Box::new(Exact {
        inner,
        codec: c,
        left: data_size,
    }))
}

/// A reader of the decoded bytes of a block of `data_size` bytes whose stored bytes
/// `stored` gives by position: every codec (`None` only for `bsc2` and `bls2` when asdf-core
/// is built without the `blosc2` feature). The stream codecs read the stored bytes in order
/// (as [`decoder`]); the Blosc codecs read each block where it is stored, in decoded order.
///
/// ```
/// use asdf_core::unstable::codec::Compression;
/// use asdf_core::unstable::{decoder_at, encode};
/// use std::io::Read;
/// let data: Vec<u8> = (0..100_000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
/// let stored = encode(Compression::Bls2, &data, None).unwrap();
/// let mut out = Vec::new();
/// decoder_at(Compression::Bls2, &stored[..], data.len() as u64)
///     .unwrap()
///     .read_to_end(&mut out)?;
/// assert_eq!(out, data);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn decoder_at<'r, S: StoredAt + 'r>(
    c: Compression,
    stored: S,
    data_size: u64,
) -> Option<Box<dyn Read + Send + 'r>> {
    let inner: Box<dyn Read + Send + 'r> = match c {
        Compression::Blsc => Box::new(Pieced::new(blsc::stream(stored, data_size))),
        #[cfg(feature = "blosc2")]
        Compression::Bls2 => {
            let len = stored.stored_len();
            Box::new(Pieced::new(Chunk::new(stored, 0, len, data_size)))
        }
        #[cfg(feature = "blosc2")]
        Compression::Bsc2 => Box::new(Pieced::new(FrameReader::new(stored, data_size))),
        #[cfg(not(feature = "blosc2"))]
        Compression::Bls2 | Compression::Bsc2 => return None,
        _ => {
            let len = stored.stored_len();
            let seq = io::BufReader::with_capacity(1 << 20, InOrder { stored, at: 0, len });
            return decoder(c, seq, data_size);
        }
    };
    Some(Box::new(Exact {
        inner,
        codec: c,
        left: data_size,
    }))
}

/// The stored bytes read in order through [`StoredAt`].
struct InOrder<S> {
    stored: S,
    at: u64,
    len: u64,
}

impl<S: StoredAt> Read for InOrder<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf
            .len()
            .min(usize::try_from(self.len - self.at).unwrap_or(usize::MAX));
        if n == 0 {
            return Ok(0);
        }
        let dst = buf.get_mut(..n).unwrap_or_default();
        self.stored.read_stored_at(self.at, dst)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Decoded bytes `lo..hi` of a block of `data_size` bytes whose stored bytes `stored`
/// gives by position, decoding no further than `hi`. `bls2` and `bsc2` skip the chunks and
/// internal blocks before `lo` without reading them; the other codecs decode from the start
/// (the stream codecs cannot start elsewhere) and drop what comes before `lo`. The caller
/// checks `hi - lo` against its limits first.
pub(crate) fn decoded_window<'r, S: StoredAt + 'r>(
    c: Compression,
    stored: S,
    data_size: u64,
    window: std::ops::Range<u64>,
) -> io::Result<Vec<u8>> {
    let (lo, hi) = (window.start, window.end.min(data_size));
    if lo >= hi {
        return Ok(Vec::new());
    }
    let unavailable = || invalid(c, "not available in this build".into());
    let (mut reader, skipped): (Box<dyn Read + Send + 'r>, u64) = match c {
        #[cfg(feature = "blosc2")]
        Compression::Bls2 => {
            let len = stored.stored_len();
            let mut ch = Chunk::new(stored, 0, len, data_size);
            let s = ch.skip(lo)?;
            (Box::new(Pieced::new(ch)), s)
        }
        #[cfg(feature = "blosc2")]
        Compression::Bsc2 => {
            let mut f = FrameReader::new(stored, data_size);
            let s = f.skip(lo)?;
            (Box::new(Pieced::new(f)), s)
        }
        _ => (decoder_at(c, stored, data_size).ok_or_else(unavailable)?, 0),
    };
    let drop = lo - skipped.min(lo);
    let dropped = io::copy(&mut (&mut reader).take(drop), &mut io::sink())?;
    let short = || invalid(c, format!("the block ends before decoded byte {hi}"));
    if dropped != drop {
        return Err(short());
    }
    let n = usize::try_from(hi - lo).map_err(|_| invalid(c, "window too large".into()))?;
    let mut out = vec![0u8; n];
    reader.read_exact(&mut out).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            short()
        } else {
            e
        }
    })?;
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "blosc2")]
    use crate::codec::blosc_layout::le32;
    use crate::codec::encode;
    use crate::codec::pieced::Pieces;

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

    /// Pieces of the given lengths (an empty one among them), each byte its piece's index.
    struct Numbered(Vec<usize>, u8);

    impl Pieces for Numbered {
        fn next_piece(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
            let Some(&len) = self.0.get(usize::from(self.1)) else {
                return Ok(false);
            };
            out.clear();
            out.resize(len, self.1);
            self.1 += 1;
            Ok(true)
        }
    }

    #[test]
    fn pieced_hands_out_every_piece_in_order_whatever_the_buffer() {
        let lens = vec![5, 0, 1, 300, 7];
        let want: Vec<u8> = lens
            .iter()
            .enumerate()
            .flat_map(|(i, &n)| std::iter::repeat_n(i as u8, n))
            .collect();
        for bufsize in [1, 3, 7, 64, 1000] {
            let mut r = Pieced::new(Numbered(lens.clone(), 0));
            let (mut got, mut buf) = (Vec::new(), vec![0u8; bufsize]);
            loop {
                let n = r.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            assert_eq!(got, want, "{bufsize}");
        }
    }

    /// One piece, then a piece that fails after filling `out` with other bytes.
    struct FailsSecond(u8);

    impl Pieces for FailsSecond {
        fn next_piece(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
            self.0 += 1;
            out.clear();
            out.resize(8, self.0);
            match self.0 {
                1 => Ok(true),
                _ => Err(io::ErrorKind::InvalidData.into()),
            }
        }
    }

    #[test]
    fn pieced_hands_out_nothing_of_a_failed_piece() {
        let mut r = Pieced::new(FailsSecond(0));
        let mut buf = [0u8; 8];
        assert_eq!(r.read(&mut buf).unwrap(), 8);
        assert!(r.read(&mut buf).is_err());
        // read again: the failed piece's bytes are not handed out
        assert!(r.read(&mut buf).is_err());
    }

    /// Items whose bytes repeat a little (so the Blosc codecs compress them), not one run.
    fn items(n: u32) -> Vec<u8> {
        (0..n)
            .flat_map(|i| ((i / 5) ^ (i % 7)).to_le_bytes())
            .collect()
    }

    #[test]
    #[cfg(feature = "blosc2")]
    fn blosc_codecs_decode_block_by_block_from_positions() {
        // several blocks and chunks, a short last one; blsc written on several threads
        // (its blocks may be stored out of order)
        let data = items((9 << 18) + 13);
        for c in [Compression::Blsc, Compression::Bls2, Compression::Bsc2] {
            let stored = encode(c, &data, None).unwrap();
            if c != Compression::Bsc2 {
                // several blocks, the last one short
                let (nbytes, blocksize) = (le32(&stored, 4), le32(&stored, 8));
                assert!(nbytes / blocksize >= 2 && nbytes % blocksize != 0, "{c}");
            }
            let mut out = Vec::new();
            decoder_at(c, &stored[..], data.len() as u64)
                .unwrap()
                .read_to_end(&mut out)
                .unwrap();
            assert!(out == data, "{c}");
            // a declared size the block does not hold, and cut stored bytes: errors
            for declared in [data.len() as u64 + 4, data.len() as u64 - 4] {
                assert!(
                    decoder_at(c, &stored[..], declared)
                        .unwrap()
                        .read_to_end(&mut Vec::new())
                        .is_err(),
                    "{c} {declared}"
                );
            }
            let cut = &stored[..stored.len() * 2 / 3];
            assert!(
                decoder_at(c, cut, data.len() as u64)
                    .unwrap()
                    .read_to_end(&mut Vec::new())
                    .is_err(),
                "{c}"
            );
        }
    }

    /// The chunk with its blocks stored in reverse order (as a multithreaded writer may
    /// store them), the block starts updated: `header_len` is 16 (blsc) or 32 (bls2).
    #[cfg(feature = "blosc2")]
    fn reversed_blocks(stored: &[u8], header_len: usize) -> Vec<u8> {
        let (nbytes, blocksize, cbytes) = (
            le32(stored, 4) as usize,
            le32(stored, 8) as usize,
            le32(stored, 12) as usize,
        );
        let nblocks = nbytes.div_ceil(blocksize);
        let starts: Vec<usize> = (0..nblocks)
            .map(|j| le32(stored, header_len + 4 * j) as usize)
            .collect();
        let mut sorted = starts.clone();
        sorted.sort_unstable();
        let end = |s: usize| sorted.iter().find(|&&t| t > s).copied().unwrap_or(cbytes);
        let first = header_len + 4 * nblocks;
        let mut out = stored[..first].to_vec();
        for j in (0..nblocks).rev() {
            let at = out.len() as u32;
            out[header_len + 4 * j..header_len + 4 * j + 4].copy_from_slice(&at.to_le_bytes());
            out.extend_from_slice(&stored[starts[j]..end(starts[j])]);
        }
        assert_eq!(out.len(), cbytes);
        out
    }

    #[test]
    #[cfg(feature = "blosc2")]
    fn blosc_blocks_stored_in_any_order_decode_in_order() {
        let data = items(3 << 18);
        for (c, header_len) in [(Compression::Blsc, 16), (Compression::Bls2, 32)] {
            let stored = encode(c, &data, None).unwrap();
            let reversed = reversed_blocks(&stored, header_len);
            assert_ne!(reversed, stored, "{c}");
            // the whole decoder reads it as it is
            assert!(crate::codec::decode(c, &reversed, data.len() as u64).unwrap() == data);
            let mut out = Vec::new();
            decoder_at(c, &reversed[..], data.len() as u64)
                .unwrap()
                .read_to_end(&mut out)
                .unwrap();
            assert!(out == data, "{c}");
        }
    }

    #[test]
    #[cfg(feature = "blosc2")]
    fn blosc_block_starts_out_of_place_are_errors_not_panics() {
        let data = items(1 << 18);
        let mut stored = encode(Compression::Blsc, &data, None).unwrap();
        // the second block start points into the header
        stored[20..24].copy_from_slice(&3u32.to_le_bytes());
        let r = decoder_at(Compression::Blsc, &stored[..], data.len() as u64)
            .unwrap()
            .read_to_end(&mut Vec::new());
        assert_eq!(r.map_err(|e| e.kind()), Err(io::ErrorKind::InvalidData));
        // every single-byte corruption of the head of a small block of each Blosc codec
        // (several blocks, a short last one): an error or other bytes, never a panic
        let small = items(70_001);
        for c in [Compression::Blsc, Compression::Bls2, Compression::Bsc2] {
            let stored = encode(c, &small, None).unwrap();
            for at in 0..stored.len().min(300) {
                for flip in [0x01, 0x5a, 0xff] {
                    let mut bad = stored.clone();
                    bad[at] ^= flip;
                    let _ = decoder_at(c, &bad[..], small.len() as u64)
                        .unwrap()
                        .read_to_end(&mut Vec::new());
                }
            }
        }
    }

    #[test]
    fn stream_codecs_decode_from_positions_too() {
        let data = items(70_001);
        for c in [Compression::Zlib, Compression::Lz4, Compression::Zstd] {
            let stored = encode(c, &data, None).unwrap();
            let mut out = Vec::new();
            decoder_at(c, &stored[..], data.len() as u64)
                .unwrap()
                .read_to_end(&mut out)
                .unwrap();
            assert!(out == data, "{c}");
        }
    }
}
