//! Arrays whose bytes are produced piece by piece while the file is written
//! ([`Writer::add_array_pieces`](super::Writer::add_array_pieces)), for data larger than
//! memory.
//!
//! The block header is written first with zero sizes and checksum; the pieces are pulled
//! from the caller's [`ArrayPieces`] on a prefetch thread (at most [`PREFETCH`] ahead), fed to
//! a streaming encoder of the block's codec, written, and hashed (MD5 of the stored bytes)
//! on the way; the header's sizes and checksum are then patched in by seeking back. Memory
//! stays bounded by a few pieces (plus the encoder's window) whatever the block's size,
//! except for the Blosc codecs (`blsc`, `bsc2`, `bls2`), whose formats are not streams: their
//! pieces are gathered and encoded whole.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};

use crate::checksum::Md5;

use super::platform::Writeback;
use super::WriteError;
use crate::array::{ArrayOptions, DType};
use crate::codec::{self, Compression, LZ4_CHUNK_INPUT};

/// Pieces the prefetch thread may have ready ahead of the encoder.
pub(crate) const PREFETCH: usize = 2;

/// The bytes of an array, piece by piece, in C order and in the declared datatype's byte
/// order; see [`Writer::add_array_pieces`](super::Writer::add_array_pieces).
///
/// Pieces may have any length (empty ones are skipped); together they must hold exactly the
/// array's bytes. A closure `FnMut() -> io::Result<Option<Vec<u8>>>` is one.
pub trait ArrayPieces: Send {
    /// The next piece, or `None` after the last. An error ends the write with
    /// [`WriteError::Io`].
    fn next_piece(&mut self) -> io::Result<Option<Vec<u8>>>;
}

impl<F> ArrayPieces for F
where
    F: FnMut() -> io::Result<Option<Vec<u8>>> + Send,
{
    fn next_piece(&mut self) -> io::Result<Option<Vec<u8>>> {
        self()
    }
}

/// An array registered by pieces.
pub(crate) struct PieceSpec {
    pub dtype: DType,
    pub shape: Vec<usize>,
    /// Bytes the pieces must add up to.
    pub len: u64,
    pub opts: ArrayOptions,
    /// Taken by the (one) write that consumes it.
    pub source: Mutex<Option<Box<dyn ArrayPieces>>>,
}

/// Writes what it is given to the sink, counts it, hashes it and starts the writeback.
struct Counted<'s, 'f, W: Write> {
    w: &'s mut W,
    wb: &'s mut Writeback<'f>,
    at: u64,
    used: u64,
    hasher: Option<Md5>,
}

impl<W: Write> Write for Counted<'_, '_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.w.write(buf)?;
        let done = buf.get(..n).unwrap_or_default();
        if let Some(h) = &mut self.hasher {
            h.update(done);
        }
        self.used += n as u64;
        self.at += n as u64;
        self.wb.written(self.at);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// A streaming encoder of one codec over the sink.
enum Encoder<'c, 's, 'f, W: Write> {
    Raw(&'c mut Counted<'s, 'f, W>),
    Zlib(flate2::write::ZlibEncoder<&'c mut Counted<'s, 'f, W>>),
    Bzp2(bzip2::write::BzEncoder<&'c mut Counted<'s, 'f, W>>),
    Zstd(zstd::stream::write::Encoder<'static, &'c mut Counted<'s, 'f, W>>),
    Lz4f(lz4_flex::frame::FrameEncoder<&'c mut Counted<'s, 'f, W>>),
    /// ASDF's chunked lz4: input gathered into chunks of [`LZ4_CHUNK_INPUT`].
    Lz4(&'c mut Counted<'s, 'f, W>, Vec<u8>),
    /// Not a stream: everything gathered, then encoded whole.
    Whole(&'c mut Counted<'s, 'f, W>, Compression, Vec<u8>),
}

fn encode_err(c: Compression, e: impl std::fmt::Display) -> WriteError {
    WriteError::Codec {
        block: 0,
        codec: c,
        source: codec::CodecError::Encode {
            codec: c.name(),
            message: e.to_string(),
        },
    }
}

impl<'c, 's, 'f, W: Write> Encoder<'c, 's, 'f, W> {
    fn new(
        sink: &'c mut Counted<'s, 'f, W>,
        c: Option<Compression>,
        level: Option<i32>,
        len: u64,
    ) -> Result<Self, WriteError> {
        Ok(match c {
            None => Encoder::Raw(sink),
            Some(Compression::Zlib) => {
                let level = level.map_or(6, |l| l.clamp(0, 9) as u32);
                Encoder::Zlib(flate2::write::ZlibEncoder::new(
                    sink,
                    flate2::Compression::new(level),
                ))
            }
            Some(Compression::Bzp2) => {
                let level = level.map_or(9, |l| l.clamp(1, 9) as u32);
                Encoder::Bzp2(bzip2::write::BzEncoder::new(
                    sink,
                    bzip2::Compression::new(level),
                ))
            }
            Some(c @ Compression::Zstd) => {
                let mut e = zstd::stream::write::Encoder::new(sink, level.unwrap_or(3))
                    .map_err(|e| encode_err(c, e))?;
                // the frame states its content size, as a one-shot compression does
                e.set_pledged_src_size(Some(len))
                    .map_err(|e| encode_err(c, e))?;
                e.include_contentsize(true).map_err(|e| encode_err(c, e))?;
                Encoder::Zstd(e)
            }
            Some(Compression::Lz4f) => {
                let info = lz4_flex::frame::FrameInfo::new().content_size(Some(len));
                Encoder::Lz4f(lz4_flex::frame::FrameEncoder::with_frame_info(info, sink))
            }
            Some(Compression::Lz4) => Encoder::Lz4(sink, Vec::new()),
            Some(c) => Encoder::Whole(sink, c, Vec::new()),
        })
    }

    fn write(&mut self, piece: &[u8]) -> io::Result<()> {
        match self {
            Encoder::Raw(w) => w.write_all(piece),
            Encoder::Zlib(e) => e.write_all(piece),
            Encoder::Bzp2(e) => e.write_all(piece),
            Encoder::Zstd(e) => e.write_all(piece),
            Encoder::Lz4f(e) => e.write_all(piece),
            Encoder::Lz4(w, buf) => {
                let mut rest = piece;
                while !rest.is_empty() {
                    let take = (LZ4_CHUNK_INPUT - buf.len()).min(rest.len());
                    let (head, tail) = rest.split_at(take);
                    buf.extend_from_slice(head);
                    rest = tail;
                    if buf.len() == LZ4_CHUNK_INPUT {
                        w.write_all(&codec::lz4_encode_chunk(buf))?;
                        buf.clear();
                    }
                }
                Ok(())
            }
            Encoder::Whole(_, _, buf) => {
                buf.extend_from_slice(piece);
                Ok(())
            }
        }
    }

    fn finish(self, level: Option<i32>, typesize: usize) -> Result<(), WriteError> {
        match self {
            Encoder::Raw(_) => {}
            Encoder::Zlib(e) => {
                e.finish()?;
            }
            Encoder::Bzp2(e) => {
                e.finish()?;
            }
            Encoder::Zstd(e) => {
                e.finish()?;
            }
            Encoder::Lz4f(e) => {
                e.finish().map_err(|e| encode_err(Compression::Lz4f, e))?;
            }
            Encoder::Lz4(w, buf) => {
                if !buf.is_empty() {
                    w.write_all(&codec::lz4_encode_chunk(&buf))?;
                }
            }
            Encoder::Whole(w, c, buf) => {
                let e = codec::encode_items(c, &buf, level, typesize).map_err(|source| {
                    WriteError::Codec {
                        block: 0,
                        codec: c,
                        source,
                    }
                })?;
                w.write_all(&e)?;
            }
        }
        Ok(())
    }
}

/// How a block of pieces was stored.
pub(crate) struct Stored {
    pub used: u64,
    pub checksum: [u8; 16],
}

/// Writes the block data of `spec` (from sink position `at`, where the sink is): pulls its
/// pieces on a prefetch thread, encodes them with `compression`, writes and hashes them.
pub(crate) fn write_pieces<W: Write>(
    w: &mut W,
    wb: &mut Writeback<'_>,
    spec: &PieceSpec,
    compression: Option<Compression>,
    level: Option<i32>,
    at: u64,
    checksums: bool,
) -> Result<Stored, WriteError> {
    let mut source = spec
        .source
        .lock()
        .map_err(|_| io::Error::other("an array's pieces were lost by a failed write"))?
        .take()
        .ok_or_else(|| WriteError::BadTree {
            path: crate::yaml::TreePath::root(),
            message: "an array added by pieces can be written once only".into(),
        })?;
    let stop = AtomicBool::new(false);
    let typesize = spec.dtype.itemsize().max(1);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(PREFETCH);
        let stop = &stop;
        let producer = std::thread::Builder::new()
            .name("asdf-pieces".into())
            .spawn_scoped(s, move || {
                while !stop.load(Ordering::Relaxed) {
                    let item = match source.next_piece() {
                        Ok(None) => return,
                        Ok(Some(p)) if p.is_empty() => continue,
                        other => other.map(|p| p.unwrap_or_default()),
                    };
                    let failed = item.is_err();
                    if tx.send(item).is_err() || failed {
                        return;
                    }
                }
            })?;
        let mut sink = Counted {
            w,
            wb,
            at,
            used: 0,
            hasher: checksums.then(Md5::new),
        };
        let result = (|| -> Result<(), WriteError> {
            let mut enc = Encoder::new(&mut sink, compression, level, spec.len)?;
            let mut total = 0u64;
            for item in &rx {
                let piece = item?;
                total = total.saturating_add(piece.len() as u64);
                if total > spec.len {
                    return Err(too_many(spec.len, total));
                }
                enc.write(&piece)?;
            }
            if total != spec.len {
                return Err(too_many(spec.len, total));
            }
            enc.finish(level, typesize)
        })();
        // on failure the producer stops at its next piece (or its next send fails)
        stop.store(result.is_err(), Ordering::Relaxed);
        drop(rx);
        let joined = producer.join();
        result?;
        joined.map_err(|_| io::Error::other("the thread reading an array's pieces failed"))?;
        Ok(Stored {
            used: sink.used,
            checksum: sink.hasher.map_or([0; 16], |h| h.finalize()),
        })
    })
}

fn too_many(declared: u64, got: u64) -> WriteError {
    WriteError::BadTree {
        path: crate::yaml::TreePath::root(),
        message: format!("an array declared as {declared} bytes had pieces of {got} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use crate::array::{ArrayOptions, ByteOrder, DType, ScalarType};
    use crate::codec::Compression;
    use crate::write::{CompressionChoice, WriteError, WriteOptions, Writer};
    use crate::{AsdfFile, Node, Value};

    fn f64le() -> DType {
        DType::scalar(ScalarType::Float64, ByteOrder::Little)
    }

    /// `rows` rows of `cols` float64 values, `i * 0.5` for element `i`, one row per piece.
    fn rows(rows: usize, cols: usize) -> impl FnMut() -> std::io::Result<Option<Vec<u8>>> {
        let mut r = 0usize;
        move || {
            if r == rows {
                return Ok(None);
            }
            let piece = (r * cols..(r + 1) * cols)
                .flat_map(|i| (i as f64 * 0.5).to_le_bytes())
                .collect();
            r += 1;
            Ok(Some(piece))
        }
    }

    fn opts(c: Option<Compression>) -> ArrayOptions {
        ArrayOptions {
            compression: Some(c.map_or(CompressionChoice::None, CompressionChoice::Codec)),
            storage: None,
        }
    }

    #[test]
    fn every_codec_reads_back_with_its_checksum() {
        // (the Blosc codecs only with the feature that has them)
        let codecs = std::iter::once(None).chain(
            Compression::ALL
                .into_iter()
                .filter(|c| {
                    cfg!(feature = "blosc2")
                        || !matches!(c, Compression::Blsc | Compression::Bls2 | Compression::Bsc2)
                })
                .map(Some),
        );
        for codec in codecs {
            // lz4 over more than one of its 4 MiB chunks; the others small (a debug build)
            let (r, c) = match codec {
                Some(Compression::Lz4) => (70, 10_000),
                _ => (30, 1000),
            };
            let want: Vec<f64> = (0..r * c).map(|i| i as f64 * 0.5).collect();
            let mut w = Writer::new(WriteOptions::default());
            let n = w.add_array_pieces(f64le(), &[r, c], opts(codec), rows(r, c));
            let root = Node::new(Value::Map(vec![(Node::str("x"), n)]));
            let bytes = w.write_to_vec(&root).unwrap();
            let f = AsdfFile::from_bytes(bytes).unwrap();
            f.verify_checksums().unwrap();
            let h = &f.blocks()[0];
            assert_eq!(h.data_size, (r * c * 8) as u64, "{codec:?}");
            assert_eq!(h.compression_label(), codec.map(|c| c.label()), "{codec:?}");
            let a = f.array::<f64>("/x").unwrap();
            assert_eq!(a.shape(), &[r, c]);
            assert!(a.iter().eq(want.iter()), "{codec:?}");
        }
    }

    #[test]
    fn pieces_beside_ordinary_arrays_with_padding_and_no_checksums() {
        let small = ndarray::arr1(&[1i32, 2, 3]);
        let mut w = Writer::new(WriteOptions::default().pad_blocks(0.5).checksums(false));
        let a = w.add_array(&small);
        let b = w.add_array_pieces(f64le(), &[3, 5], opts(Some(Compression::Zlib)), rows(3, 5));
        let root = Node::new(Value::Map(vec![(Node::str("a"), a), (Node::str("b"), b)]));
        let f = AsdfFile::from_bytes(w.write_to_vec(&root).unwrap()).unwrap();
        assert_eq!(f.blocks()[1].checksum, [0; 16]);
        assert!(f.blocks()[1].allocated_size > f.blocks()[1].used_size);
        assert_eq!(f.array::<i32>("/a").unwrap(), small.into_dyn());
        assert_eq!(f.array::<f64>("/b").unwrap()[[2, 4]], 7.0);
    }

    #[test]
    fn wrong_sizes_errors_and_a_second_write_fail() {
        let write =
            |shape: &[usize], src: Box<dyn FnMut() -> std::io::Result<Option<Vec<u8>>> + Send>| {
                let mut w = Writer::new(WriteOptions::default());
                let n = w.add_array_pieces(f64le(), shape, opts(None), src);
                let root = Node::new(Value::Map(vec![(Node::str("x"), n)]));
                let first = w.write_to_vec(&root);
                (first, w.write_to_vec(&root))
            };
        // too few, too many
        assert!(matches!(
            write(&[3, 4], Box::new(rows(2, 4))).0,
            Err(WriteError::BadTree { .. })
        ));
        assert!(matches!(
            write(&[1, 4], Box::new(rows(2, 4))).0,
            Err(WriteError::BadTree { .. })
        ));
        // the source's error
        let failing = Box::new(|| Err(std::io::Error::other("disk gone")));
        assert!(matches!(write(&[1, 4], failing).0, Err(WriteError::Io(_))));
        // written once only
        let (first, second) = write(&[2, 4], Box::new(rows(2, 4)));
        assert!(first.is_ok());
        assert!(matches!(second, Err(WriteError::BadTree { .. })));
        // a byte size that overflows
        let huge = write(&[usize::MAX, 4], Box::new(rows(0, 4))).0;
        assert!(matches!(huge, Err(WriteError::TooLarge { .. })));
    }
}
