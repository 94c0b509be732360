//! What every streaming decoder is built on, below both the codecs and `stream`'s entry
//! points: positional access to stored bytes ([`StoredAt`]), [`Pieced`] (the [`Read`] of a
//! decoder that yields whole pieces), and the error they report.

use std::io::{self, Read};

use super::Compression;

/// Positional access to a block's stored bytes (its `used_size` bytes), for
/// [`decoder_at`](super::stream::decoder_at).
pub trait StoredAt: Send {
    /// The number of stored bytes.
    fn stored_len(&self) -> u64;
    /// Fills `buf` from byte `offset` of the stored bytes; an error if they end first.
    fn read_stored_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
}

impl StoredAt for &[u8] {
    fn stored_len(&self) -> u64 {
        self.len() as u64
    }
    fn read_stored_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|o| self.get(o..)?.get(..buf.len()))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{} bytes at {offset} past the stored bytes", buf.len()),
                )
            })?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// A decoder that yields its output a whole piece at a time (an `lz4` chunk, a Blosc
/// block): [`Pieced`] makes it a [`Read`].
pub(super) trait Pieces {
    /// Decodes the next piece into `out`, replacing what it holds (its allocation is
    /// reused); false after the last piece.
    fn next_piece(&mut self, out: &mut Vec<u8>) -> io::Result<bool>;
}

/// The [`Read`] of a [`Pieces`]: hands out the current piece, then decodes the next.
pub(super) struct Pieced<P> {
    pieces: P,
    out: Vec<u8>,
    at: usize,
}

impl<P> Pieced<P> {
    pub(super) fn new(pieces: P) -> Self {
        Pieced {
            pieces,
            out: Vec::new(),
            at: 0,
        }
    }
}

impl<P: Pieces> Read for Pieced<P> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at >= self.out.len() {
            // nothing of a piece that fails is handed out (nor read again)
            self.at = usize::MAX;
            if !self.pieces.next_piece(&mut self.out)? {
                return Ok(0);
            }
            self.at = 0;
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

/// An [`io::ErrorKind::InvalidData`] error naming the codec.
pub(super) fn invalid(c: Compression, message: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {message}", c.name()),
    )
}
