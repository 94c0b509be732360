//! Checksums in one pass: the stored bytes of a block are hashed while they are read, by a
//! second thread, so verifying costs the MD5 and nothing visible beside it.
//!
//! - [`read_hashing`] reads a range into its final place (an array's own allocation, or a
//!   block buffer) in pieces; a reader thread fills the pieces in order and the calling
//!   thread hashes each as soon as it is filled. No second copy is made.
//! - [`hash_range`] hashes a range straight from the source with a few small rotating
//!   buffers (memory independent of the block's size), reading the next piece while the
//!   current one is hashed; [`verify_checksums`](super::AsdfFile::verify_checksums) uses it.

use std::io;
use std::sync::mpsc;

use crate::checksum::Md5;
use crate::layout::ReadAt;

/// Size of the pieces read and hashed in turn.
const PIECE: usize = 2 << 20;
/// Buffers in flight for [`hash_range`]: one being hashed, the others being read.
const BUFFERS: usize = 3;
/// Below this size a range is read and hashed on the calling thread alone.
const PIPELINE_MIN: u64 = 4 << 20;

/// `offset + done`, or an error when it overflows.
fn at(offset: u64, done: u64) -> io::Result<u64> {
    offset.checked_add(done).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("read at offset {offset} + {done} past the end"),
        )
    })
}

/// Fills `out` from `offset` of `src` and feeds the same bytes, in order, to `hasher`.
pub(super) fn read_hashing(
    src: &dyn ReadAt,
    out: &mut [u8],
    offset: u64,
    hasher: &mut Md5,
) -> io::Result<()> {
    if (out.len() as u64) < PIPELINE_MIN {
        src.read_exact_at(out, offset)?;
        hasher.update(&*out);
        return Ok(());
    }
    let (tx, rx) = mpsc::channel::<io::Result<&[u8]>>();
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut done = 0u64;
            for piece in out.chunks_mut(PIECE) {
                let r = at(offset, done).and_then(|o| src.read_exact_at(piece, o));
                done += piece.len() as u64;
                let failed = r.is_err();
                // The receiver only hangs up on an error of its own, which ends the read anyway.
                if tx.send(r.map(|()| &*piece)).is_err() || failed {
                    return;
                }
            }
        });
        for piece in rx {
            hasher.update(piece?);
        }
        Ok(())
    })
}

/// Feeds `len` bytes from `offset` of `src` to `hasher`, reading the next piece on another
/// thread while the current one is hashed; `hashed` is told the size of each piece hashed. At most `BUFFERS` pieces of 2 MiB are held.
pub(super) fn hash_range(
    src: &dyn ReadAt,
    offset: u64,
    len: u64,
    hasher: &mut Md5,
    hashed: &mut dyn FnMut(u64),
) -> io::Result<()> {
    if len < PIPELINE_MIN {
        let mut buf = vec![0u8; len as usize];
        src.read_exact_at(&mut buf, offset)?;
        hasher.update(&buf);
        hashed(len);
        return Ok(());
    }
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
    let (full_tx, full_rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(BUFFERS);
    for _ in 0..BUFFERS {
        // A send fails only when the receiver is gone, and it is alive here.
        let _ = free_tx.send(vec![0u8; PIECE]);
    }
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut done = 0u64;
            while done < len {
                let Ok(mut buf) = free_rx.recv() else {
                    return; // the hasher stopped
                };
                let n = (len - done).min(PIECE as u64) as usize;
                buf.truncate(n);
                let r = at(offset, done).and_then(|o| src.read_exact_at(&mut buf, o));
                done += n as u64;
                let failed = r.is_err();
                if full_tx.send(r.map(|()| buf)).is_err() || failed {
                    return;
                }
            }
        });
        for buf in full_rx {
            let buf = buf?;
            hasher.update(&buf);
            hashed(buf.len() as u64);
            // The reader may already be done; then the buffer is simply dropped.
            let _ = free_tx.send(buf);
        }
        Ok(())
    })
}

/// A reader of `len` bytes from `offset` of a [`ReadAt`] (for decoding a block as a stream).
pub(super) struct RangeReader<'a> {
    pub src: &'a dyn ReadAt,
    pub pos: u64,
    pub end: u64,
}

impl io::Read for RangeReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.end.saturating_sub(self.pos).min(buf.len() as u64) as usize;
        if n == 0 {
            return Ok(0);
        }
        self.src.read_exact_at(&mut buf[..n], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize) -> Vec<u8> {
        (0..n as u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 11) as u8)
            .collect()
    }

    #[test]
    fn reading_while_hashing_gives_the_bytes_and_their_md5() {
        let src = data(PIECE * 5 + 12345);
        for (offset, len) in [(0usize, 100usize), (7, src.len() - 7), (3, PIECE * 3)] {
            let mut out = vec![0u8; len];
            let mut h = Md5::new();
            read_hashing(&src, &mut out, offset as u64, &mut h).unwrap();
            assert_eq!(out, src[offset..offset + len]);
            assert_eq!(h.finalize(), Md5::digest(&src[offset..offset + len]));
            let mut h = Md5::new();
            let mut seen = 0u64;
            hash_range(&src, offset as u64, len as u64, &mut h, &mut |n| seen += n).unwrap();
            assert_eq!(seen, len as u64);
            assert_eq!(h.finalize(), Md5::digest(&src[offset..offset + len]));
        }
        // Past the end: an error, not a hang or a panic.
        let mut out = vec![0u8; PIECE * 3];
        let mut h = Md5::new();
        let e = read_hashing(&src, &mut out, (PIECE * 3) as u64, &mut h).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        let e = hash_range(
            &src,
            (PIECE * 3) as u64,
            (PIECE * 3) as u64,
            &mut Md5::new(),
            &mut |_| (),
        );
        assert_eq!(e.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        let e = hash_range(
            &src,
            u64::MAX - 5,
            (PIECE * 3) as u64,
            &mut Md5::new(),
            &mut |_| (),
        );
        // past the end: an end-of-file error, not a wrapped offset read from elsewhere
        assert_eq!(e.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
    }
}
