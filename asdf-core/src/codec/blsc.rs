//! `blsc`: one Blosc1 chunk as python-blosc writes it (`blosc.compress`, defaults typesize 8,
//! clevel 9, byte shuffle, blosclz), decoded and encoded by our pure-Rust asdf-blosc2
//! (`asdf_blosc2::blosc1`, feature `blosc2`), which checks every header field against the
//! stored bytes and the block's declared size before anything is sized by it.

use std::io;

use super::blosc_layout::{block_extent, le32, one_block_chunk, Starts, MEMCPYED};
use super::pieced::{invalid, Pieces, StoredAt};
use super::{CodecError, Compression};

const CODEC: &str = "blsc";

/// The c-blosc1 chunk header's decoded size, for the size check before any work.
fn declared_size(stored: &[u8]) -> Result<u64, CodecError> {
    match stored.get(4..8) {
        Some(b) if stored.len() >= 16 => {
            Ok(u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        }
        _ => Err(CodecError::Corrupt {
            codec: CODEC,
            message: format!(
                "chunk of {} bytes is shorter than the 16-byte header",
                stored.len()
            ),
        }),
    }
}

#[cfg(feature = "blosc2")]
mod imp {
    use super::{CodecError, CODEC};
    use asdf_blosc2::blosc1::{self, Params};
    use asdf_blosc2::Error;

    fn codec_error(e: Error) -> CodecError {
        match e {
            Error::UnsupportedCodec { .. } | Error::Unsupported { .. } => CodecError::Unsupported {
                codec: CODEC,
                reason: e.to_string(),
            },
            e => CodecError::Corrupt {
                codec: CODEC,
                message: e.to_string(),
            },
        }
    }

    /// Checks the header: its fields (as C-Blosc 1.x reads them), its compressed size
    /// against the stored bytes, its decoded size against `expected`.
    pub(super) fn check(stored: &[u8], expected: u64) -> Result<(), CodecError> {
        let h = blosc1::parse(stored).map_err(codec_error)?;
        if h.cbytes > stored.len() {
            return Err(CodecError::Corrupt {
                codec: CODEC,
                message: format!(
                    "header claims {} compressed bytes, {} stored",
                    h.cbytes,
                    stored.len()
                ),
            });
        }
        super::check_size(stored, expected)
    }

    pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        check(stored, out.len() as u64)?;
        blosc1::decode_to_slice(stored, out).map_err(codec_error)
    }

    pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
        let p = Params {
            clevel: level.map_or(9, |l| l.clamp(0, 9) as u8),
            ..Params::default()
        };
        blosc1::encode(data, &p).map_err(|e| match e {
            Error::TooLarge { .. } => CodecError::Unsupported {
                codec: CODEC,
                reason: format!(
                    "{} bytes exceed the blosc1 chunk limit of 2 GiB",
                    data.len()
                ),
            },
            e => CodecError::Encode {
                codec: CODEC,
                message: e.to_string(),
            },
        })
    }
}

#[cfg(not(feature = "blosc2"))]
mod imp {
    use super::{CodecError, CODEC};

    fn unsupported() -> CodecError {
        CodecError::Unsupported {
            codec: CODEC,
            reason: "asdf-core was built without the `blosc2` feature".into(),
        }
    }

    pub(super) fn check(stored: &[u8], expected: u64) -> Result<(), CodecError> {
        super::check_size(stored, expected)?;
        Err(unsupported())
    }

    pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        check(stored, out.len() as u64)
    }

    pub(super) fn encode(_data: &[u8], _level: Option<i32>) -> Result<Vec<u8>, CodecError> {
        Err(unsupported())
    }
}

/// Decode one chunk into exactly `data_size` bytes.
pub(super) fn decode(stored: &[u8], data_size: u64) -> Result<Vec<u8>, CodecError> {
    // The header is checked (its fields, and its sizes against the stored bytes and
    // `data_size`) before the output is allocated.
    imp::check(stored, data_size)?;
    let mut out = crate::mem::zeroed_bytes(super::to_usize(data_size)?)
        .ok_or(CodecError::TooLargeForPlatform { size: data_size })?;
    imp::decode_into(stored, &mut out)?;
    Ok(out)
}

/// The header's decoded size must be `expected`.
fn check_size(stored: &[u8], expected: u64) -> Result<(), CodecError> {
    let actual = declared_size(stored)?;
    if actual != expected {
        return Err(CodecError::SizeMismatch { expected, actual });
    }
    Ok(())
}

/// Decode one chunk into `out`, which must be its decoded size.
pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    imp::decode_into(stored, out)
}

/// Encode `data` as one chunk: blosclz with byte shuffle of 8-byte items, level `level`
/// (0 to 9, default 9), as python-blosc's `blosc.compress` defaults.
pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
    imp::encode(data, level)
}

/// The streaming decoder: one Blosc1 chunk whose stored bytes are read by position,
/// decoded a block at a time (each block copied into a one-block chunk with the chunk's
/// header and decoded alone), in decoded order whatever order the blocks are stored in.
pub(super) struct Blocks<S> {
    stored: S,
    state: Option<B1State>,
    /// Next block to decode (or, for a chunk stored as it is, bytes copied so far).
    next: u64,
}

struct B1State {
    header: [u8; 16],
    nbytes: u64,
    blocksize: u64,
    cbytes: u64,
    typesize: u64,
    nblocks: u64,
    starts: Starts,
}

fn blsc_err(message: String) -> io::Error {
    invalid(Compression::Blsc, message)
}

impl<S: StoredAt> Blocks<S> {
    pub(super) fn new(stored: S) -> Self {
        Blocks {
            stored,
            state: None,
            next: 0,
        }
    }

    fn header(&mut self) -> io::Result<B1State> {
        let len = self.stored.stored_len();
        let mut header = [0u8; 16];
        if len < 16 {
            return Err(blsc_err(format!(
                "chunk of {len} bytes is shorter than the 16-byte header"
            )));
        }
        self.stored.read_stored_at(0, &mut header)?;
        let (nbytes, blocksize, cbytes) = (
            u64::from(le32(&header, 4)),
            u64::from(le32(&header, 8)),
            u64::from(le32(&header, 12)),
        );
        let typesize = u64::from(header[3]);
        if header[0] == 0 || header[0] > 2 || typesize == 0 {
            return Err(blsc_err(format!(
                "version {} or typesize {typesize} not of a blosc1 chunk",
                header[0]
            )));
        }
        if cbytes < 16 || cbytes > len {
            return Err(blsc_err(format!(
                "header claims {cbytes} compressed bytes, {len} stored"
            )));
        }
        let memcpyed = header[2] & MEMCPYED != 0;
        if memcpyed && cbytes != nbytes + 16 {
            return Err(blsc_err(format!(
                "uncompressed chunk of {nbytes} bytes stored in {cbytes}"
            )));
        }
        if !memcpyed && nbytes > 0 && (blocksize == 0 || blocksize > nbytes) {
            return Err(blsc_err(format!(
                "blocksize {blocksize} for {nbytes} bytes"
            )));
        }
        let nblocks = if memcpyed || nbytes == 0 {
            0
        } else {
            nbytes.div_ceil(blocksize)
        };
        if 16 + 4 * nblocks > cbytes {
            return Err(blsc_err(format!(
                "{nblocks} blocks do not fit in {cbytes} compressed bytes"
            )));
        }
        Ok(B1State {
            header,
            nbytes,
            blocksize,
            cbytes,
            typesize,
            nblocks,
            starts: Starts::new(16, nblocks as usize),
        })
    }
}

impl<S: StoredAt> Pieces for Blocks<S> {
    /// Decodes the next block (or, for a chunk stored as it is, the next MiB) into `out`.
    fn next_piece(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        if self.state.is_none() {
            self.state = Some(self.header()?);
        }
        let Some(st) = &mut self.state else {
            return Ok(false);
        };
        if st.header[2] & MEMCPYED != 0 {
            let n = (st.nbytes - self.next).min(1 << 20);
            if n == 0 {
                return Ok(false);
            }
            out.resize(n as usize, 0);
            self.stored.read_stored_at(16 + self.next, out)?;
            self.next += n;
            return Ok(true);
        }
        if self.next >= st.nblocks {
            return Ok(false);
        }
        let j = self.next;
        let start = u64::from(st.starts.get(&mut self.stored, j as usize)?);
        if start < 16 + 4 * st.nblocks || start >= st.cbytes {
            return Err(blsc_err(format!(
                "block {j} starts at {start}, outside the chunk's data"
            )));
        }
        let last_partial = j == st.nblocks - 1 && st.nbytes % st.blocksize != 0;
        let bsize = if last_partial {
            st.nbytes % st.blocksize
        } else {
            st.blocksize
        };
        let ext = block_extent(start, st.cbytes, bsize, st.typesize);
        let mut data = vec![0u8; ext as usize];
        self.stored.read_stored_at(start, &mut data)?;
        let chunk = one_block_chunk(&st.header, bsize as u32, &data, last_partial);
        out.resize(bsize as usize, 0);
        decode_into(&chunk, out).map_err(|e| blsc_err(format!("block {j}: {e}")))?;
        self.next += 1;
        Ok(true)
    }
}
