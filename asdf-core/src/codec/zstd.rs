//! `zstd`: one zstd frame (asdf-compression's `zstandard.ZstdCompressor(threads=-1).compress`).

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

/// Below this size a block is compressed on the calling thread (zstd's jobs are several MiB).
const MULTITHREAD_MIN: usize = 8 << 20;

/// One zstd frame, as python's `zstandard.ZstdCompressor(level, threads=-1)` writes it: from
/// 8 MiB up zstd's multithreaded mode compresses its jobs on every core (the frame is the
/// same kind of frame, its content size declared; any zstd decoder reads it).
pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
    let err = |e: std::io::Error| CodecError::Encode {
        codec: CODEC,
        message: e.to_string(),
    };
    let mut c = ::zstd::bulk::Compressor::new(level.unwrap_or(3)).map_err(err)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if data.len() >= MULTITHREAD_MIN && threads > 1 {
        let workers = u32::try_from(threads).unwrap_or(u32::MAX);
        c.set_parameter(::zstd::zstd_safe::CParameter::NbWorkers(workers))
            .map_err(err)?;
    }
    c.compress(data).map_err(err)
}

/// Whether [`encode_streaming`] would use more than one thread for `len` bytes: blocks at
/// least this large are worth piping through the multithreaded encoder.
pub(crate) fn streams_on_workers(len: usize) -> bool {
    len >= MULTITHREAD_MIN && std::thread::available_parallelism().map_or(1, |n| n.get()) > 1
}

/// Bytes of compressed output handed to `sink` at a time.
const STREAM_OUT: usize = 4 << 20;

/// The same single frame as [`encode`] (content size declared, every core from 8 MiB), but
/// handed to `sink` in pieces of about 4 MiB as zstd's workers produce them, so the caller
/// can write and hash the output while the rest is being compressed; `sink` is also told
/// how many bytes of `data` the encoder has taken so far (and called with an empty piece
/// when only that moved). Returns the number of bytes
/// handed over. An error of `sink` stops the encoder and is returned as is.
pub(crate) fn encode_streaming(
    data: &[u8],
    level: Option<i32>,
    sink: &mut dyn FnMut(&[u8], u64) -> std::io::Result<()>,
) -> Result<u64, StreamError> {
    use ::zstd::zstd_safe::{CCtx, CParameter, InBuffer, OutBuffer, ResetDirective};
    let fail = |code: usize| {
        StreamError::Codec(CodecError::Encode {
            codec: CODEC,
            message: ::zstd::zstd_safe::get_error_name(code).to_string(),
        })
    };
    let mut cx = CCtx::try_create().ok_or_else(|| {
        StreamError::Codec(CodecError::Encode {
            codec: CODEC,
            message: "cannot allocate a compression context".into(),
        })
    })?;
    cx.set_parameter(CParameter::CompressionLevel(level.unwrap_or(3)))
        .map_err(fail)?;
    if streams_on_workers(data.len()) {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let workers = u32::try_from(threads).unwrap_or(u32::MAX);
        cx.set_parameter(CParameter::NbWorkers(workers))
            .map_err(fail)?;
    }
    cx.set_pledged_src_size(Some(data.len() as u64))
        .map_err(fail)?;
    let mut input = InBuffer::around(data);
    let mut out: Vec<u8> = Vec::with_capacity(STREAM_OUT);
    let mut total = 0u64;
    // input taken by the encoder when `sink` was last called
    let mut taken = 0usize;
    loop {
        out.clear();
        let mut ob = OutBuffer::around(&mut out);
        // Input is handed over with `e_continue` while there is some: each call takes about
        // one job's worth and returns what is ready without waiting for the whole frame
        // (with `e_end` a multithreaded call returns only once the output buffer is full),
        // so output and progress flow at the pace of the jobs.
        let ending = input.pos() == data.len();
        let directive = if ending {
            ::zstd::zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_end
        } else {
            ::zstd::zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_continue
        };
        let remaining = cx
            .compress_stream2(&mut ob, &mut input, directive)
            .map_err(fail)?;
        let produced = ob.pos();
        let piece = out.get(..produced).unwrap_or_default();
        if !piece.is_empty() || input.pos() > taken {
            taken = input.pos();
            if let Err(e) = sink(piece, taken as u64) {
                // stop the workers before returning
                let _ = cx.reset(ResetDirective::SessionOnly);
                return Err(StreamError::Sink(e));
            }
            total += produced as u64;
        }
        if ending && remaining == 0 {
            return Ok(total);
        }
    }
}

/// Why [`encode_streaming`] stopped.
#[derive(Debug)]
pub(crate) enum StreamError {
    /// The encoder failed.
    Codec(CodecError),
    /// The sink failed.
    Sink(std::io::Error),
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_large_block_is_one_frame_with_its_size_from_the_multithreaded_encoder() {
        let data: Vec<u8> = (0..(super::MULTITHREAD_MIN as u32 + 4321))
            .map(|i| ((i / 5).wrapping_mul(2654435761) >> 26) as u8)
            .collect();
        let stored = super::encode(&data, None).unwrap();
        assert_eq!(
            ::zstd::zstd_safe::get_frame_content_size(&stored).ok(),
            Some(Some(data.len() as u64))
        );
        // One frame: a decoder that stops after the first frame (python's decompressobj)
        // still reads everything.
        let mut d = ::zstd::bulk::Decompressor::new().unwrap();
        let mut out = vec![0u8; data.len()];
        assert_eq!(
            d.decompress_to_buffer(&stored, &mut out[..]).unwrap(),
            data.len()
        );
        assert_eq!(out, data);
        assert_eq!(super::decode(&stored, data.len() as u64).unwrap(), data);
    }
}
