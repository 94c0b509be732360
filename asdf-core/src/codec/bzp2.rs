//! `bzp2`: bzip2 stream(s) (python asdf writes one `bz2.compress` stream per block).

use std::io::Read;

use bzip2::bufread::MultiBzDecoder;

use super::CodecError;

pub(super) fn reader(stored: &[u8]) -> MultiBzDecoder<&[u8]> {
    MultiBzDecoder::new(stored)
}

pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
    let level = level.map_or(9, |l| l.clamp(1, 9) as u32);
    let mut enc = bzip2::bufread::BzEncoder::new(data, bzip2::Compression::new(level));
    let mut out = Vec::with_capacity(data.len() / 4 + 64);
    enc.read_to_end(&mut out).map_err(|e| CodecError::Encode {
        codec: "bzp2",
        message: e.to_string(),
    })?;
    Ok(out)
}
