//! `blsc`: one Blosc1 chunk as python-blosc writes it (`blosc.compress`, defaults typesize 8,
//! clevel 9, byte shuffle, blosclz), decoded and encoded by our pure-Rust asdf-blosc2
//! (`asdf_blosc2::blosc1`, feature `blosc2`), which checks every header field against the
//! stored bytes and the block's declared size before anything is sized by it.
//!
//! abacusutils (`abacusnbody/data/asdf.py`, `BloscCompressor`) writes `blsc` blocks of
//! another form: the data cut into pieces of 4 MiB (`compression_block_size`), each stored
//! as `[u32 big-endian n][a Blosc1 chunk of n bytes]`. Read only. The two are told apart by
//! their own sizes, never by guessing: the block is one chunk when its first 16 bytes are a
//! Blosc1 header (version 1 or 2, a type size) whose compressed size fits the stored bytes and
//! whose decoded size is the block's; otherwise it is abacusutils' form when, piece by piece,
//! each length is followed by a Blosc1 header stating that same length as its compressed
//! size, the pieces end exactly at the stored end, and their decoded sizes add up to the
//! block's. A block that is neither is an error saying so (with the one-chunk reading's).

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

/// Whether the first bytes of a block (at least its first 16) are a Blosc1 header that can
/// be the whole block: version 1 or 2, a type size, a compressed size between 16 and the
/// `stored_len` bytes stored, a decoded size of `data_size`.
fn one_chunk(head: &[u8], stored_len: u64, data_size: u64) -> bool {
    head.len() >= 16
        && matches!(head[0], 1 | 2)
        && head[3] > 0
        && (16..=stored_len).contains(&u64::from(le32(head, 12)))
        && u64::from(le32(head, 4)) == data_size
}

/// The big-endian `u32` at `at` of `b`, when `b` holds it.
fn be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// The pieces of abacusutils' form, when `stored` is one: each piece's Blosc1 chunk (its
/// byte range) and decoded size, checked as the module says; `Err` says why not.
fn abacus_pieces(
    stored: &[u8],
    data_size: u64,
) -> Result<Vec<(std::ops::Range<usize>, u64)>, String> {
    let mut pieces = Vec::new();
    let (mut at, mut total) = (0usize, 0u64);
    while at < stored.len() {
        let n = be32(stored, at)
            .ok_or_else(|| format!("{} bytes at {at} hold no piece length", stored.len() - at))?
            as usize;
        let start = at + 4;
        let chunk = start
            .checked_add(n)
            .and_then(|end| stored.get(start..end))
            .ok_or_else(|| {
                format!(
                    "a piece of {n} bytes at {start} ends past the {} stored",
                    stored.len()
                )
            })?;
        if chunk.len() < 16 || !matches!(chunk[0], 1 | 2) || chunk[3] == 0 {
            return Err(format!("the piece at {start} is not a Blosc1 chunk"));
        }
        if le32(chunk, 12) as usize != n {
            return Err(format!(
                "the piece at {start} is {n} bytes, its Blosc1 header says {}",
                le32(chunk, 12)
            ));
        }
        let nbytes = u64::from(le32(chunk, 4));
        total = total.saturating_add(nbytes);
        if total > data_size {
            return Err(format!(
                "the pieces decode to more than the block's {data_size} bytes"
            ));
        }
        pieces.push((start..start + n, nbytes));
        at = start + n;
    }
    if total != data_size {
        return Err(format!(
            "the pieces decode to {total} bytes, the block's are {data_size}"
        ));
    }
    Ok(pieces)
}

/// Whether a `blsc` block whose first bytes are `head` is one Blosc1 chunk, by the module's
/// rule (the block layer tells the forms apart from the first 16 bytes).
pub(crate) fn is_one_chunk(head: &[u8], stored_len: u64, data_size: u64) -> bool {
    one_chunk(head, stored_len, data_size)
}

/// abacusutils' pieces of `stored` (each Blosc1 chunk's byte range and decoded size), checked
/// as the module says; `None` when `stored` is not that form.
pub(crate) fn abacus_piece_ranges(
    stored: &[u8],
    data_size: u64,
) -> Option<Vec<(std::ops::Range<usize>, u64)>> {
    abacus_pieces(stored, data_size).ok()
}

/// How a `blsc` block is stored: one chunk, or abacusutils' pieces.
enum Form {
    One,
    Abacus(Vec<(std::ops::Range<usize>, u64)>),
}

/// Which form `stored` has (see the module documentation); an error when neither holds.
fn form(stored: &[u8], data_size: u64) -> Result<Form, CodecError> {
    if one_chunk(stored, stored.len() as u64, data_size) {
        return Ok(Form::One);
    }
    match abacus_pieces(stored, data_size) {
        Ok(pieces) => Ok(Form::Abacus(pieces)),
        // a first byte that cannot start a piece of 4 MiB (its length's high byte): the one
        // chunk's own error is the one to say
        Err(_) if stored.first().is_some_and(|&b| b != 0) => {
            imp::check(stored, data_size)?;
            Ok(Form::One)
        }
        Err(why) => Err(CodecError::Corrupt {
            codec: CODEC,
            message: format!(
                "neither one Blosc1 chunk nor abacusutils' length-prefixed chunks: {why}"
            ),
        }),
    }
}

/// Decode one chunk into exactly `data_size` bytes.
pub(super) fn decode(stored: &[u8], data_size: u64) -> Result<Vec<u8>, CodecError> {
    if let Form::Abacus(_) = form(stored, data_size)? {
        let mut out = crate::mem::zeroed_bytes(super::to_usize(data_size)?)
            .ok_or(CodecError::TooLargeForPlatform { size: data_size })?;
        decode_into(stored, &mut out)?;
        return Ok(out);
    }
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

/// Decode one chunk (or abacusutils' pieces) into `out`, which must be its decoded size.
pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    match form(stored, out.len() as u64)? {
        Form::One => imp::decode_into(stored, out),
        Form::Abacus(pieces) => {
            let mut at = 0usize;
            let size = out.len() as u64;
            for (range, nbytes) in pieces {
                // the sizes add up to out's length: checked by `abacus_pieces`
                let n = nbytes as usize;
                let dest = out.get_mut(at..at + n).ok_or(CodecError::SizeMismatch {
                    expected: size,
                    actual: (at + n) as u64,
                })?;
                imp::decode_into(&stored[range.clone()], dest).map_err(|e| {
                    CodecError::Corrupt {
                        codec: CODEC,
                        message: format!("abacusutils piece at {}: {e}", range.start - 4),
                    }
                })?;
                at += n;
            }
            Ok(())
        }
    }
}

/// Encode `data` as one chunk: blosclz with byte shuffle of 8-byte items, level `level`
/// (0 to 9, default 9), as python-blosc's `blosc.compress` defaults.
pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
    imp::encode(data, level)
}

/// The streaming decoder of a `blsc` block whose stored bytes are read by position: one
/// chunk ([`Blocks`]) or abacusutils' pieces ([`AbacusPieces`]), told apart as the module
/// says from the first 20 bytes: pieces when they are not one chunk's header but a length
/// and a Blosc1 header stating it (each later piece checked as it comes, the total by the
/// stream's length check).
pub(super) fn stream<S: StoredAt>(mut stored: S, data_size: u64) -> Stream<S> {
    let len = stored.stored_len();
    let mut head = [0u8; 20];
    let n = len.min(20) as usize;
    let read = stored.read_stored_at(0, &mut head[..n]).is_ok();
    let head = &head[..n];
    // the first piece of abacusutils' form: a length, then a Blosc1 header stating it
    let first_piece =
        n == 20 && matches!(head[4], 1 | 2) && head[7] > 0 && be32(head, 0) == Some(le32(head, 16));
    // no stored bytes: no piece (abacusutils' empty array), whatever the block declares
    let one = read && len > 0 && (one_chunk(head, len, data_size) || !first_piece);
    if one {
        Stream::One(Blocks::new(stored))
    } else {
        Stream::Abacus(AbacusPieces {
            stored,
            at: 0,
            left: data_size,
        })
    }
}

/// A `blsc` block's streaming decoder, of either form ([`stream`]).
pub(super) enum Stream<S> {
    /// One Blosc1 chunk.
    One(Blocks<S>),
    /// abacusutils' pieces.
    Abacus(AbacusPieces<S>),
}

impl<S: StoredAt> Pieces for Stream<S> {
    fn next_piece(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        match self {
            Stream::One(b) => b.next_piece(out),
            Stream::Abacus(a) => a.next_piece(out),
        }
    }
}

/// abacusutils' pieces read one at a time: its length, its Blosc1 chunk (checked to state
/// that length and a decoded size within what the block has left), decoded whole (4 MiB).
pub(super) struct AbacusPieces<S> {
    stored: S,
    /// Stored offset of the next piece.
    at: u64,
    /// Decoded bytes the block has left.
    left: u64,
}

impl<S: StoredAt> Pieces for AbacusPieces<S> {
    fn next_piece(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        let len = self.stored.stored_len();
        if self.at >= len {
            return Ok(false);
        }
        let mut head = [0u8; 20];
        if len - self.at < 20 {
            return Err(blsc_err(format!(
                "{} bytes at {} hold no length-prefixed Blosc1 chunk",
                len - self.at,
                self.at
            )));
        }
        self.stored.read_stored_at(self.at, &mut head)?;
        let n = u64::from(u32::from_be_bytes([head[0], head[1], head[2], head[3]]));
        let chunk = &head[4..];
        if !matches!(chunk[0], 1 | 2) || chunk[3] == 0 || u64::from(le32(chunk, 12)) != n {
            return Err(blsc_err(format!(
                "the piece at {} is not a Blosc1 chunk of its stated {n} bytes",
                self.at
            )));
        }
        let nbytes = u64::from(le32(chunk, 4));
        if n > len - self.at - 4 || nbytes > self.left {
            return Err(blsc_err(format!(
                "the piece at {} ({n} bytes, {nbytes} decoded) does not fit the block",
                self.at
            )));
        }
        let mut stored = vec![0u8; n as usize];
        self.stored.read_stored_at(self.at + 4, &mut stored)?;
        out.resize(nbytes as usize, 0);
        imp::decode_into(&stored, out)
            .map_err(|e| blsc_err(format!("abacusutils piece at {}: {e}", self.at)))?;
        self.at += 4 + n;
        self.left -= nbytes;
        Ok(true)
    }
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
