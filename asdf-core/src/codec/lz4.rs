//! `lz4\0`: python asdf's chunked lz4 blocks.
//!
//! The stored bytes are a sequence of chunks `[u32 BE n][u32 LE len][raw lz4 block of n-4
//! bytes]` (python's `lz4.block.compress` with its size prefix, framed by its length), each
//! compressing at most 4 MiB of input. Chunks are independent, so they are decoded and
//! encoded in parallel.
//!
//! ASDF.jl also writes one lz4 frame under this label (its `lz4_layout=:frame`). A frame
//! starts with the magic number `0x184D2204` (bytes `04 22 4D 18`), which as python's first
//! length prefix would announce a chunk of 69,357,848 bytes, far above what python (4 MiB of
//! input) or ASDF.jl (8 MiB) compress into one chunk; so, as ASDF.jl's own reader does, stored
//! bytes that start with the magic are read as a frame ([`is_frame`]) and everything else as
//! python's chunks.

use std::io::{self, BufRead, Read};

use lz4_flex::frame::FrameDecoder;

use rayon::prelude::*;

use super::pieced::{invalid, Pieced, Pieces};
use super::{to_usize, CodecError, Compression};

const CODEC: &str = "lz4";

/// The lz4 frame magic number `0x184D2204`, as stored (little-endian).
pub(crate) const FRAME_MAGIC: [u8; 4] = [0x04, 0x22, 0x4D, 0x18];

/// Whether stored `lz4` bytes are one lz4 frame (ASDF.jl's `:frame` layout) rather than
/// python asdf's chunks.
pub(crate) fn is_frame(stored: &[u8]) -> bool {
    stored.starts_with(&FRAME_MAGIC)
}

/// The error of decoding an `lz4` block that is a frame, named as the block's codec.
pub(super) fn frame_error(e: CodecError) -> CodecError {
    match e {
        CodecError::Corrupt { message, .. } => corrupt(format!("lz4 frame: {message}")),
        other => other,
    }
}

/// Input bytes per chunk, as python asdf writes (`compression_block_size`, 4 MiB).
pub(super) const CHUNK_INPUT: usize = 4 << 20;

/// Largest output per input byte of an lz4 block (each byte of a match length extension
/// adds 255 bytes), plus slack for short blocks.
const MAX_RATIO: u64 = 255;

fn corrupt(message: String) -> CodecError {
    CodecError::Corrupt {
        codec: CODEC,
        message,
    }
}

struct Chunk<'a> {
    block: &'a [u8],
    len: usize,
}

/// Split the stored bytes into chunks and check their declared lengths add up to `expected`.
fn chunks(stored: &[u8], expected: u64) -> Result<Vec<Chunk<'_>>, CodecError> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    let mut total = 0u64;
    while pos < stored.len() {
        let head = stored
            .get(pos..pos + 8)
            .ok_or_else(|| corrupt(format!("truncated chunk header at byte {pos}")))?;
        let n = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        if n < 4 {
            return Err(corrupt(format!(
                "chunk at byte {pos} has length {n} below 4"
            )));
        }
        let block = stored.get(pos + 8..pos + 4 + n).ok_or_else(|| {
            corrupt(format!(
                "chunk at byte {pos} of {n} bytes runs past the end"
            ))
        })?;
        let len64 = u64::from(len);
        if len64
            > (block.len() as u64)
                .saturating_mul(MAX_RATIO)
                .saturating_add(64)
        {
            return Err(corrupt(format!(
                "chunk at byte {pos} claims {len} bytes from {} compressed bytes",
                block.len()
            )));
        }
        total = total.saturating_add(len64);
        if total > expected {
            return Err(CodecError::ExcessData { expected });
        }
        out.push(Chunk {
            block,
            len: len as usize,
        });
        pos += 4 + n;
    }
    if total != expected {
        return Err(CodecError::SizeMismatch {
            expected,
            actual: total,
        });
    }
    Ok(out)
}

fn decode_chunks(chunks: &[Chunk<'_>], out: &mut [u8]) -> Result<(), CodecError> {
    let mut jobs = Vec::with_capacity(chunks.len());
    let mut rest = out;
    for c in chunks {
        let at = c.len.min(rest.len());
        let (dst, tail) = std::mem::take(&mut rest).split_at_mut(at);
        rest = tail;
        jobs.push((c.block, dst));
    }
    let one = |(block, dst): (&[u8], &mut [u8])| -> Result<(), CodecError> {
        let want = dst.len();
        match lz4_flex::block::decompress_into(block, dst) {
            Ok(n) if n == want => Ok(()),
            Ok(n) => Err(corrupt(format!(
                "chunk decoded to {n} bytes instead of {want}"
            ))),
            Err(e) => Err(corrupt(e.to_string())),
        }
    };
    if jobs.len() <= 1 {
        jobs.into_iter().try_for_each(one)
    } else {
        jobs.into_par_iter().try_for_each(one)
    }
}

pub(super) fn decode(stored: &[u8], data_size: u64) -> Result<Vec<u8>, CodecError> {
    // The chunk lengths are checked against the stored size before this allocation.
    let chunks = chunks(stored, data_size)?;
    let mut out = crate::mem::zeroed_bytes(to_usize(data_size)?)
        .ok_or(CodecError::TooLargeForPlatform { size: data_size })?;
    decode_chunks(&chunks, &mut out)?;
    Ok(out)
}

pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    let chunks = chunks(stored, out.len() as u64)?;
    decode_chunks(&chunks, out)
}

pub(super) fn encode_chunk(input: &[u8]) -> Vec<u8> {
    let bound = lz4_flex::block::get_maximum_output_size(input.len());
    let mut out = vec![0u8; bound + 8];
    let n = lz4_flex::block::compress_into(input, out.get_mut(8..).unwrap_or_default())
        .unwrap_or_default();
    out.truncate(n + 8);
    let framed = (n as u32).saturating_add(4);
    out[0..4].copy_from_slice(&framed.to_be_bytes());
    out[4..8].copy_from_slice(&(input.len() as u32).to_le_bytes());
    out
}

pub(super) fn encode(data: &[u8]) -> Vec<u8> {
    let parts: Vec<Vec<u8>> = if data.len() <= CHUNK_INPUT {
        data.chunks(CHUNK_INPUT).map(encode_chunk).collect()
    } else {
        data.par_chunks(CHUNK_INPUT).map(encode_chunk).collect()
    };
    if parts.len() == 1 {
        return parts.into_iter().next().unwrap_or_default();
    }
    parts.concat()
}

/// The streaming decoder of an `lz4` block, either layout: the first four stored bytes
/// choose between python's chunks and a frame.
pub(super) fn stream_decoder<'r, R: BufRead + Send + 'r>(stored: R) -> Box<dyn Read + Send + 'r> {
    Box::new(Either::Sniff(Some(stored)))
}

/// The head read to tell the layouts apart, put back before the rest.
type Sniffed<R> = io::Chain<io::Cursor<Vec<u8>>, R>;

enum Either<R: BufRead> {
    Sniff(Option<R>),
    Chunks(Pieced<Chunks<Sniffed<R>>>),
    Frame(FrameDecoder<Sniffed<R>>),
}

impl<R: BufRead> Read for Either<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Either::Sniff(stored) = self {
            let Some(mut stored) = stored.take() else {
                return Err(invalid(Compression::Lz4, "failed earlier".into()));
            };
            let mut head = Vec::with_capacity(4);
            (&mut stored).take(4).read_to_end(&mut head)?;
            let frame = is_frame(&head);
            let rest = io::Cursor::new(head).chain(stored);
            *self = if frame {
                Either::Frame(FrameDecoder::new(rest))
            } else {
                Either::Chunks(Pieced::new(Chunks::new(rest)))
            };
        }
        match self {
            Either::Chunks(r) => r.read(buf),
            Either::Frame(r) => r.read(buf).map_err(|e| {
                if e.kind() == io::ErrorKind::InvalidData {
                    e
                } else {
                    invalid(Compression::Lz4, format!("lz4 frame: {e}"))
                }
            }),
            Either::Sniff(_) => Ok(0),
        }
    }
}

/// The streaming decoder: python asdf's `lz4` chunks read in order from `stored`, decoded
/// one at a time.
pub(super) struct Chunks<R> {
    stored: R,
}

impl<R> Chunks<R> {
    pub(super) fn new(stored: R) -> Self {
        Chunks { stored }
    }
}

/// Most input bytes a chunk may claim (python writes 4 MiB; a reader allows more, bounded).
const MAX_CHUNK: u32 = 256 << 20;

impl<R: BufRead> Pieces for Chunks<R> {
    /// Decodes the next chunk into `out`; false at the end of the stored bytes.
    fn next_piece(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
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
        if n < 4 || len > MAX_CHUNK || u64::from(n - 4) > u64::from(MAX_CHUNK) {
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
        if u64::from(len)
            > (block.len() as u64)
                .saturating_mul(MAX_RATIO)
                .saturating_add(64)
        {
            return Err(invalid(
                Compression::Lz4,
                format!("chunk of {n} bytes claiming {len} bytes"),
            ));
        }
        out.clear();
        out.resize(len as usize, 0);
        match lz4_flex::block::decompress_into(&block, out) {
            Ok(k) if k == len as usize => {}
            Ok(k) => {
                return Err(invalid(
                    Compression::Lz4,
                    format!("chunk decoded to {k} bytes instead of {len}"),
                ))
            }
            Err(e) => return Err(invalid(Compression::Lz4, e.to_string())),
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use crate::codec::stream::decoder;
    use crate::codec::Compression;
    use std::io::{self, Read};

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
