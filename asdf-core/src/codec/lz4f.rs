//! `lz4f`: one lz4 frame (asdf-compression's `lz4.frame.compress`).

use std::io::Write;

use lz4_flex::frame::{FrameDecoder, FrameEncoder, FrameInfo};

use super::CodecError;

pub(super) fn reader(stored: &[u8]) -> FrameDecoder<&[u8]> {
    FrameDecoder::new(stored)
}

pub(super) fn encode(data: &[u8]) -> Result<Vec<u8>, CodecError> {
    let err = |e: &dyn std::fmt::Display| CodecError::Encode {
        codec: "lz4f",
        message: e.to_string(),
    };
    let info = FrameInfo::new().content_size(Some(data.len() as u64));
    let mut enc = FrameEncoder::with_frame_info(info, Vec::with_capacity(data.len() / 2 + 64));
    enc.write_all(data).map_err(|e| err(&e))?;
    enc.finish().map_err(|e| err(&e))
}
