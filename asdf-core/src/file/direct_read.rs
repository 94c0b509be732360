//! Reading an uncompressed, contiguous, native-endian block straight into the array's own
//! allocation: one copy from the kernel, as `std::fs::read` does, with no zeroing pass and
//! with transparent huge pages requested for large arrays (as numpy does). Large reads run in
//! pieces on the rayon pool, so the first-touch page faults are spread over the cores.

use ndarray::{ArrayD, IxDyn};

use super::verify;
use crate::array::{
    ArrayError, ArraySource, DType, Dim, DynArray, Element, NdArrayMeta, ScalarType,
};
use crate::checksum::Md5;
use crate::codec::{self, Compression};
use crate::layout::{BlockHeader, LayoutError, ReadAt};
use crate::yaml::Node;
use crate::{Error, Progress, Result};

/// Where the elements lie in the block, when they can be read directly.
pub(super) struct Plan {
    /// Byte offset inside the block's data.
    pub byte_offset: u64,
    /// Number of elements.
    pub len: usize,
    /// Shape.
    pub shape: Vec<usize>,
}

/// The plan for reading `meta`'s elements as `T` straight from a block of `block_len`
/// bytes, or `None` when a general read is needed (other type or byte order, strides,
/// streamed shape, or out of bounds — the general path reports those errors).
pub(super) fn contiguous_plan<T: Element>(
    meta: &NdArrayMeta,
    block_len: u64,
) -> Result<Option<Plan>, ArrayError> {
    if !T::ANY_BIT_PATTERN {
        return Ok(None);
    }
    let dtype = meta
        .dtype
        .clone()
        .unwrap_or_else(|| DType::scalar(ScalarType::Float64, meta.byteorder));
    let DType::Scalar { ty, byteorder } = dtype else {
        return Ok(None);
    };
    if ty != T::SCALAR || (ty.has_byteorder() && !byteorder.is_native()) {
        return Ok(None);
    }
    let Some(dims) = &meta.shape else {
        return Ok(None);
    };
    let mut shape = Vec::with_capacity(dims.len());
    for d in dims {
        match d {
            Dim::Fixed(n) => shape.push(usize::try_from(*n).ok()),
            Dim::Streamed => return Ok(None),
        }
    }
    let Some(shape) = shape.into_iter().collect::<Option<Vec<usize>>>() else {
        return Ok(None);
    };
    let Some(len) = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)) else {
        return Ok(None);
    };
    let size = std::mem::size_of::<T>();
    if let Some(strides) = &meta.strides {
        // Only C-contiguous strides qualify.
        let mut expect = size as i64;
        for (s, d) in strides.iter().zip(&shape).rev() {
            if *d > 1 && *s != expect {
                return Ok(None);
            }
            expect = expect.saturating_mul(*d as i64);
        }
    }
    let Some(bytes) = len.checked_mul(size) else {
        return Ok(None);
    };
    let end = meta.offset.checked_add(bytes as u64);
    if end.is_none_or(|e| e > block_len) {
        return Ok(None);
    }
    Ok(Some(Plan {
        byte_offset: meta.offset,
        len,
        shape,
    }))
}

/// A `Vec<T>` of `len` zero elements, allocated zeroed (fresh pages for large sizes, so no
/// memset pass, huge pages asked for: `asdf_common::mem`), or `None` when the allocation
/// fails.
pub(super) fn zeroed_vec<T: Element>(len: usize) -> Option<Vec<T>> {
    T::zeroed_vec(len)
}

/// The bytes of `T` elements, for writing (a safe cast, `Element::as_bytes_mut`).
pub(super) fn as_bytes_mut<T: Element>(out: &mut [T]) -> &mut [u8] {
    // The callers read only types valid for any bit pattern (`T::ANY_BIT_PATTERN`, checked
    // before they start); `bool` has no byte view to write into.
    T::as_bytes_mut(out).expect("byte access needs a type valid for any bit pattern")
}

/// The bytes of `T` elements, for reading (hashing).
pub(super) fn as_bytes<T: Element>(data: &[T]) -> &[u8] {
    T::as_bytes(data)
}

/// Reads the bytes of `out`'s elements from `offset`.
///
/// Large reads run in pieces on the rayon pool. For a fresh allocation most of the time goes
/// into the page faults of the first touch (the kernel zeroes each page, and in a virtual
/// machine the host backs it too), not into the copy; each piece's faults are taken by the
/// thread that reads it, so the zeroing runs on every core instead of one.
pub(super) fn read_elements<T: Element>(
    src: &dyn ReadAt,
    out: &mut [T],
    offset: u64,
) -> std::io::Result<()> {
    read_bytes(src, as_bytes_mut(out), offset, PARALLEL_MIN, PIECE)
}

/// Reads below this size are one request on the calling thread.
const PARALLEL_MIN: usize = 64 << 20;
/// Size of the pieces of a parallel read; pieces end on 2 MiB-aligned addresses, so no two
/// threads fault on the same huge page.
const PIECE: usize = 32 << 20;
/// Largest single request of a sequential read.
const MAX_REQUEST: usize = 256 << 20;

/// Fills `bytes` from `offset` of `src`: in parallel pieces of `piece` bytes (a power of two)
/// from `parallel_min` bytes up.
fn read_bytes(
    src: &dyn ReadAt,
    bytes: &mut [u8],
    offset: u64,
    parallel_min: usize,
    piece: usize,
) -> std::io::Result<()> {
    use rayon::prelude::*;
    if bytes.len() < parallel_min || rayon::current_num_threads() < 2 {
        let mut done = 0usize;
        for piece in bytes.chunks_mut(MAX_REQUEST) {
            src.read_exact_at(piece, at(offset, done)?)?;
            done += piece.len();
        }
        return Ok(());
    }
    // The first piece ends on the first `piece`-aligned address, the others are `piece` long.
    let head = (bytes.as_ptr() as usize).next_multiple_of(piece) - bytes.as_ptr() as usize;
    let (first, rest) = bytes.split_at_mut(head.min(bytes.len()));
    let pieces: Vec<(usize, &mut [u8])> = std::iter::once((0, first))
        .chain(
            rest.chunks_mut(piece)
                .enumerate()
                .map(|(i, c)| (head + i * piece, c)),
        )
        .filter(|(_, c)| !c.is_empty())
        .collect();
    pieces
        .into_par_iter()
        .with_max_len(1)
        .try_for_each(|(done, piece)| src.read_exact_at(piece, at(offset, done)?))
}

/// `offset + done`, or an error when it overflows.
fn at(offset: u64, done: usize) -> std::io::Result<u64> {
    offset.checked_add(done as u64).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("read at offset {offset} + {done} past the end"),
        )
    })
}

/// A source that reports the bytes read through it (`(done, total)`), at least every
/// [`PIECE`] bytes: a larger read is split into pieces of that size. Reads on several
/// threads report one at a time, so `done` never goes back.
struct Metered<'a> {
    inner: &'a dyn ReadAt,
    done: std::sync::Mutex<u64>,
    total: u64,
    progress: &'a Progress,
}

impl<'a> Metered<'a> {
    fn new(inner: &'a dyn ReadAt, total: u64, progress: &'a Progress) -> Self {
        Metered {
            inner,
            done: std::sync::Mutex::new(0),
            total,
            progress,
        }
    }
}

impl ReadAt for Metered<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let mut at_piece = 0usize;
        for piece in buf.chunks_mut(PIECE) {
            self.inner.read_exact_at(piece, at(offset, at_piece)?)?;
            at_piece += piece.len();
            // a poisoned lock (a report that panicked) only stops the reports
            if let Ok(mut done) = self.done.lock() {
                *done += piece.len() as u64;
                self.progress.report(*done, self.total);
            }
        }
        Ok(())
    }
}

/// Which blocks are read straight into an array's allocation, and the reads themselves.
impl super::AsdfFile {
    /// The block of a block-backed array that can be read straight into the array's own
    /// allocation: its index, header, codec and whether its checksum is to be verified.
    /// `None` sends the read down the general path (decode or copy into the block cache,
    /// then bind), which also reports every error this one passes over.
    fn direct_block(
        &self,
        meta: &NdArrayMeta,
        path: &str,
    ) -> Result<Option<(&BlockHeader, Option<Compression>, bool)>> {
        let ArraySource::Block(src) = meta.source else {
            return Ok(None);
        };
        let idx = self.block_index(src, path)?;
        if self.blocks[idx].get().is_some() {
            return Ok(None); // already in the cache: bound from there
        }
        let h = self.block_header(idx)?;
        if self
            .layout
            .legacy_block(idx)
            .is_some_and(|lb| lb.has_chain(h) || lb.encoding_name().is_some())
        {
            return Ok(None); // decoded by `load_block`
        }
        let compression = self.compression(h)?;
        let verify = self.options.verify_checksums && h.has_checksum();
        if compression.is_none() && self.mmap.is_some() && !verify {
            // Mapped blocks are served from the map (a view, or one copy of it).
            return Ok(None);
        }
        if h.data_size > self.options.max_block_bytes {
            return Ok(None); // the general path reports the limit
        }
        Ok(Some((h, compression, verify)))
    }

    /// Reads a contiguous, native-endian array of `T` straight into the array's own
    /// allocation (one copy from the source, as `std::fs::read` does; a compressed block
    /// that is the whole array decodes into it).
    pub(super) fn fast_owned<T: Element>(
        &self,
        node: &Node,
        path: &str,
    ) -> Result<Option<ArrayD<T>>> {
        let meta = NdArrayMeta::from_node(node, path)?;
        let Some((h, compression, verify)) = self.direct_block(&meta, path)? else {
            return Ok(None);
        };
        let Some(plan) = contiguous_plan::<T>(&meta, h.data_size)? else {
            return Ok(None);
        };
        let Some(out) =
            self.read_direct::<T>(h, compression, verify, plan.byte_offset, plan.len, None)?
        else {
            return Ok(None);
        };
        Ok(Some(
            ArrayD::from_shape_vec(IxDyn(&plan.shape), out).map_err(|e| ArrayError::BadValue {
                path: path.into(),
                key: "shape".into(),
                message: e.to_string(),
            })?,
        ))
    }

    /// The dynamic array (any datatype, any byte order: its bytes as stored) of a
    /// C-contiguous array, read straight into its own allocation like [`Self::fast_owned`]:
    /// a remote 1 GiB block is then fetched into the array's memory once, rather than into
    /// the block cache and copied out of it.
    pub(super) fn fast_dyn(
        &self,
        meta: &NdArrayMeta,
        path: &str,
        progress: Option<&Progress>,
    ) -> Result<Option<DynArray>> {
        let Some((h, compression, verify)) = self.direct_block(meta, path)? else {
            return Ok(None);
        };
        let Ok(block_len) = usize::try_from(h.data_size) else {
            return Ok(None);
        };
        // Errors of a descriptor (out of bounds, overflow) are the general path's to report.
        let Ok(l) = crate::array::bind::layout(meta, block_len, path) else {
            return Ok(None);
        };
        let Some(total) = l.count.checked_mul(l.itemsize) else {
            return Ok(None);
        };
        if !l.contiguous || total == 0 {
            return Ok(None);
        }
        let Some(data) =
            self.read_direct::<u8>(h, compression, verify, l.start, total, progress)?
        else {
            return Ok(None);
        };
        Ok(Some(DynArray {
            dtype: l.dtype,
            shape: l.shape,
            data,
        }))
    }

    /// As [`AsdfFile::dyn_array`](super::AsdfFile::dyn_array), telling `progress` how far
    /// the read has come, as `(done, total)` in bytes: of the block read from the source
    /// (every 32 MiB, from every thread that reads), or decoded (every 8 MiB for zlib, zstd,
    /// lz4f and blsc blocks; once at the end for the codecs that decode on several threads:
    /// bzp2, lz4, bls2, bsc2), ending at `(total, total)`. Arrays that are not read straight
    /// into their memory (views with strides, inline data, memory-mapped files, legacy
    /// encodings) report once, at the end. For progress bars on large arrays.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use asdf_core::{AsdfFile, Node, Progress, Writer, WriteOptions};
    /// let data: Vec<f64> = (0..1000).map(f64::from).collect();
    /// let mut w = Writer::new(WriteOptions::default());
    /// let n = w.add_array(ndarray::arr1(&data));
    /// let f = AsdfFile::from_bytes(w.write_to_vec(&Node::map(vec![("a", n)]))?)?;
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let s = seen.clone();
    /// let a = f.dyn_array_with_progress("/a", &Progress::new(move |d, t| s.lock().unwrap().push((d, t))))?;
    /// assert_eq!(a.data.len(), 8000);
    /// assert_eq!(seen.lock().unwrap().last(), Some(&(8000, 8000)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dyn_array_with_progress(&self, path: &str, progress: &Progress) -> Result<DynArray> {
        let node = self.ndarray_node(path)?.clone();
        self.dyn_array_of_with_progress(&node, path, progress)
    }

    /// As [`AsdfFile::dyn_array_of`](super::AsdfFile::dyn_array_of) (any ndarray node of
    /// this file's tree), reporting as
    /// [`dyn_array_with_progress`](super::AsdfFile::dyn_array_with_progress) does.
    pub fn dyn_array_of_with_progress(
        &self,
        node: &Node,
        path: &str,
        progress: &Progress,
    ) -> Result<DynArray> {
        let meta = NdArrayMeta::from_node(node, path)?;
        if let Some(a) = self.fast_dyn(&meta, path, Some(progress))? {
            return Ok(a);
        }
        let a = self.bound_dyn(&meta, path)?;
        let n = a.data.len() as u64;
        progress.report(n, n);
        Ok(a)
    }

    /// `len` elements of `T` at byte `byte_offset` of block `h`'s data, read (or decoded,
    /// when the block is compressed and they are the whole of it) straight into a fresh
    /// allocation, with the block's checksum verified on the way when `verify`. `None` when
    /// the general path must do it (a compressed block of which the array is a part).
    fn read_direct<T: Element>(
        &self,
        h: &BlockHeader,
        compression: Option<Compression>,
        verify: bool,
        byte_offset: u64,
        len: usize,
        progress: Option<&Progress>,
    ) -> Result<Option<Vec<T>>> {
        let elements =
            |n: usize| zeroed_vec::<T>(n).ok_or_else(|| self.limit("array elements", n as u64));
        // With a progress report, reads go through a meter (the bytes of the block read so
        // far, against all that is to be read: the whole stored block when it is hashed, the
        // array's bytes when not).
        let body = (len as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        let to_read = if verify { h.used_size } else { body };
        let metered = progress.map(|p| Metered::new(&*self.source, to_read, p));
        let source: &dyn ReadAt = match &metered {
            Some(m) => m,
            None => &*self.source,
        };
        let out: Vec<T> = match compression {
            None if verify => {
                // The whole stored block is hashed: the bytes before and after the array
                // straight from the source, the array's own bytes as they are read into its
                // allocation (one pass over them, hashed on this thread while another reads).
                let range = self.stored_range(h)?;
                let Some(tail) = h
                    .used_size
                    .checked_sub(byte_offset)
                    .and_then(|rest| rest.checked_sub(body))
                else {
                    return Ok(None); // the general path reports it
                };
                let start = range.start as u64;
                let io = |at: u64| move |e: std::io::Error| LayoutError::io(at, &e);
                let mut out = elements(len)?;
                let mut hasher = Md5::new();
                verify::hash_range(source, start, byte_offset, &mut hasher, &mut |_| ())
                    .map_err(io(start))?;
                let at = start + byte_offset;
                let bytes = as_bytes_mut(&mut out);
                verify::read_hashing(source, bytes, at, &mut hasher).map_err(io(at))?;
                verify::hash_range(source, at + body, tail, &mut hasher, &mut |_| ())
                    .map_err(io(at + body))?;
                self.expect_md5(h, hasher.finalize(), None)?;
                out
            }
            None => {
                let start = h
                    .data_offset()
                    .checked_add(byte_offset)
                    .ok_or_else(|| self.limit("array offset", byte_offset))?;
                let mut out = elements(len)?;
                read_elements(source, &mut out, start)
                    .map_err(|e| Error::io(self.path.as_deref(), e))?;
                out
            }
            Some(c) => {
                // Decode straight into the array's allocation when the array is the whole
                // block; otherwise the general path (decode once, cache, bind).
                let whole = (len as u64).checked_mul(std::mem::size_of::<T>() as u64);
                if byte_offset != 0 || whole != Some(h.data_size) {
                    return Ok(None);
                }
                let stored = self.stored_bytes(h)?;
                let mut out = elements(len)?;
                // The stored bytes are hashed on another thread while they are decoded.
                let (stored_md5, decoded) = rayon::join(
                    || verify.then(|| Md5::digest(stored.as_slice())),
                    || {
                        let bytes = as_bytes_mut(&mut out);
                        match progress {
                            None => codec::decode_into(c, stored.as_slice(), bytes),
                            Some(p) => {
                                let total = bytes.len() as u64;
                                codec::decode_into_reporting(
                                    c,
                                    stored.as_slice(),
                                    bytes,
                                    &mut |done| p.report(done, total),
                                )
                            }
                        }
                    },
                );
                decoded.map_err(|source| Error::Codec {
                    block: h.index,
                    offset: h.offset,
                    source,
                })?;
                if let Some(md5) = stored_md5 {
                    self.expect_md5(h, md5, Some(as_bytes(&out)))?;
                }
                out
            }
        };
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::{ArraySource, ByteOrder};

    fn meta(shape: &[u64], strides: Option<Vec<i64>>, byteorder: ByteOrder) -> NdArrayMeta {
        NdArrayMeta {
            source: ArraySource::Block(0),
            dtype: Some(DType::scalar(ScalarType::Float64, byteorder)),
            byteorder,
            shape: Some(shape.iter().map(|&d| Dim::Fixed(d)).collect()),
            offset: 8,
            strides,
            mask: None,
        }
    }

    #[test]
    fn plans_only_contiguous_native_reads_in_bounds() {
        let native = ByteOrder::native();
        let p = contiguous_plan::<f64>(&meta(&[2, 3], None, native), 56)
            .unwrap()
            .unwrap();
        assert_eq!((p.byte_offset, p.len, p.shape), (8, 6, vec![2, 3]));
        // C-contiguous strides written out are fine; transposed ones are not.
        assert!(
            contiguous_plan::<f64>(&meta(&[2, 3], Some(vec![24, 8]), native), 56)
                .unwrap()
                .is_some()
        );
        assert!(
            contiguous_plan::<f64>(&meta(&[2, 3], Some(vec![8, 16]), native), 56)
                .unwrap()
                .is_none()
        );
        // Block too short, wrong type, foreign byte order: the general path decides.
        assert!(contiguous_plan::<f64>(&meta(&[2, 3], None, native), 55)
            .unwrap()
            .is_none());
        assert!(contiguous_plan::<f32>(&meta(&[2, 3], None, native), 56)
            .unwrap()
            .is_none());
        let foreign = match native {
            ByteOrder::Little => ByteOrder::Big,
            ByteOrder::Big => ByteOrder::Little,
        };
        assert!(contiguous_plan::<f64>(&meta(&[2, 3], None, foreign), 56)
            .unwrap()
            .is_none());
    }

    #[test]
    fn reads_elements_from_an_offset() {
        let src: Vec<u8> = (0u8..32).collect();
        let mut out = zeroed_vec::<u16>(4).unwrap();
        read_elements(&src, &mut out, 2).unwrap();
        assert_eq!(
            out,
            vec![
                u16::from_ne_bytes([2, 3]),
                u16::from_ne_bytes([4, 5]),
                u16::from_ne_bytes([6, 7]),
                u16::from_ne_bytes([8, 9])
            ]
        );
        let big = zeroed_vec::<f64>(1 << 20).unwrap();
        assert!(big.iter().all(|&v| v == 0.0));
    }

    #[test]
    fn parallel_pieces_cover_the_whole_read() {
        // Two threads even on a one-core machine, so the pieces really run in parallel.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(check_parallel_pieces);
    }

    fn check_parallel_pieces() {
        let src: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        for (offset, len, piece) in [(3u64, 99_000usize, 4096usize), (0, 4096, 4096), (7, 5, 1)] {
            let mut out = vec![0u8; len];
            read_bytes(&src, &mut out, offset, 0, piece).unwrap();
            let start = offset as usize;
            assert_eq!(out, src[start..start + len], "offset {offset} len {len}");
        }
        // Past the end: an error from whichever piece runs out.
        let mut out = vec![0u8; 99_999];
        let err = read_bytes(&src, &mut out, 2, 0, 4096).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
        let err = read_bytes(&src, &mut out[..10], u64::MAX - 3, 0, 4).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
    }
}
