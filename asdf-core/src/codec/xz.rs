//! `xz\0\0`: one xz stream (the `.xz` container around LZMA2), as ASDF.jl writes it with
//! CodecXz's `XzCompressor` (liblzma's `lzma_easy_encoder`, preset 6, CRC64 check).
//!
//! Decoded by lzma-rust2 (pure Rust, built without its `unsafe` optimizations). Its window
//! grows with the decoded output, never beyond the dictionary the stream declares, so memory
//! follows what the block really holds; the caller bounds that by the declared size. Several
//! concatenated streams (and the zero padding between them) decode as one, as `xz` and
//! liblzma's `LZMA_CONCATENATED` do; each block's check (CRC32, CRC64 or SHA-256) is verified.

use std::io::{Read, Write};

use lzma_rust2::{CheckType, XzOptions, XzReader, XzWriter};

use super::CodecError;

/// The decoder of the stored bytes `stored` reads.
pub(super) fn reader<R: Read>(stored: R) -> XzReader<R> {
    XzReader::new(stored, true)
}

/// Preset 6 and a CRC64 check unless told otherwise: what ASDF.jl writes (CodecXz's defaults).
pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
    let err = |e: &dyn std::fmt::Display| CodecError::Encode {
        codec: "xz",
        message: e.to_string(),
    };
    let preset = level.map_or(6, |l| l.clamp(0, 9) as u32);
    let mut options = XzOptions::with_preset(preset);
    options.set_check_sum_type(CheckType::Crc64);
    let mut w =
        XzWriter::new(Vec::with_capacity(data.len() / 4 + 64), options).map_err(|e| err(&e))?;
    w.write_all(data).map_err(|e| err(&e))?;
    w.finish().map_err(|e| err(&e))
}
