//! Region reads: part of an array, reading only the bytes that hold it.
//!
//! The selection is resolved against the array's shape (every bound checked, nothing read
//! or allocated before), turned into a view of the block — a start byte, strides and shape,
//! as numpy slices a view — and the view's rows become ranges of the block's decoded bytes,
//! which the block layer ([`super::blocks`]) reads: only those ranges of an uncompressed
//! block, only the pieces that hold them of `lz4` and `bsc2` blocks, a stream decoded no
//! further than the last byte for the other codecs. The bytes are then gathered into C
//! order. Inline data, `fits:` sources and ASDF 0.1.0 encoded blocks are read whole and
//! sliced in memory.

use std::ops::Range;

use ndarray::ArrayD;

use super::AsdfFile;
use crate::array::bind::{self, Layout};
use crate::array::{self, ArraySource, AxisRange, DType, DynArray, Element, NdArrayMeta};
use crate::array::{Selection, SelectionError};
use crate::convert::{MaskValue, Masked};
use crate::error::{Error, Result};
use crate::yaml::{Node, Value};

/// Above this many rows, a selection is read as the one range that spans it (and gathered
/// in memory) rather than row by row.
const MAX_ROWS: usize = 1 << 20;

impl AsdfFile {
    /// Where a region of `count` elements of `item` bytes is read: the caller's buffer,
    /// which must hold exactly that, or a zeroed one put in `owned` (its size checked against
    /// the file's limit first).
    pub(crate) fn region_out<'b>(
        &self,
        into: Option<&'b mut [u8]>,
        owned: &'b mut Vec<u8>,
        path: &str,
        count: u64,
        item: usize,
    ) -> Result<&'b mut [u8]> {
        let total = count.saturating_mul(item as u64);
        match into {
            Some(buf) if buf.len() as u64 != total => Err(sel_err(
                path,
                SelectionError::BufferSize {
                    given: buf.len() / item.max(1),
                    needed: usize::try_from(count).unwrap_or(usize::MAX),
                },
            )),
            Some(buf) => Ok(buf),
            None => {
                self.check_size("selected bytes", total)?;
                *owned = crate::mem::zeroed_bytes(total as usize).ok_or(Error::Limit {
                    what: "selected bytes",
                    limit: usize::MAX as u64,
                    found: total,
                })?;
                Ok(owned)
            }
        }
    }
}

fn sel_err(path: &str, source: SelectionError) -> Error {
    Error::Selection {
        path: path.into(),
        source,
    }
}

/// The view a selection makes of an array laid out by `l`: its shape, the byte of its
/// first element and its byte strides.
struct View {
    shape: Vec<usize>,
    start: i128,
    strides: Vec<i128>,
    itemsize: usize,
    count: usize,
}

fn view_of(l: &Layout, axes: &[AxisRange]) -> View {
    let mut start = i128::from(l.start);
    let mut shape = Vec::new();
    let mut strides = Vec::new();
    let empty = axes.iter().any(|a| a.count == 0);
    for (a, &s) in axes.iter().zip(&l.strides) {
        if !empty {
            start += a.start as i128 * i128::from(s);
        }
        if a.keep {
            shape.push(a.count);
            strides.push(i128::from(s) * a.step as i128);
        }
    }
    let count = if empty { 0 } else { shape.iter().product() };
    View {
        shape,
        start,
        strides,
        itemsize: l.itemsize,
        count,
    }
}

/// The rows of a view: for each position of the outer axes (C order), the range of decoded
/// bytes spanning its last axis. `None` when there are more than [`MAX_ROWS`].
fn rows(v: &View) -> Option<(Vec<Range<u64>>, usize, i128)> {
    let nd = v.shape.len();
    let (n, s) = match nd {
        0 => (1usize, v.itemsize as i128),
        _ => (v.shape[nd - 1], v.strides[nd - 1]),
    };
    let outer: usize = v.shape[..nd.saturating_sub(1)].iter().product();
    if outer > MAX_ROWS {
        return None;
    }
    let span = |base: i128| {
        let last = base + (n as i128 - 1) * s;
        let lo = base.min(last);
        let hi = base.max(last) + v.itemsize as i128;
        lo as u64..hi as u64
    };
    let mut out = Vec::with_capacity(outer);
    let outer_shape = &v.shape[..nd.saturating_sub(1)];
    let outer_strides = &v.strides[..nd.saturating_sub(1)];
    let mut idx = vec![0usize; outer_shape.len()];
    let mut base = v.start;
    loop {
        out.push(span(base));
        let mut k = outer_shape.len();
        loop {
            if k == 0 {
                return Some((out, n, s));
            }
            k -= 1;
            idx[k] += 1;
            base += outer_strides[k];
            if idx[k] < outer_shape[k] {
                break;
            }
            base -= outer_strides[k] * outer_shape[k] as i128;
            idx[k] = 0;
        }
    }
}

/// Puts the elements of each row (their span's bytes, one after the other in `spans`)
/// into `out` in C order: `n` elements `s` bytes apart.
fn gather_rows(spans: &[u8], rows: usize, n: usize, s: i128, item: usize, out: &mut [u8]) {
    let row_bytes = n * item;
    let span_len = if n == 0 {
        0
    } else {
        ((n as i128 - 1) * s.abs()) as usize + item
    };
    for r in 0..rows {
        let src = &spans[r * span_len..(r + 1) * span_len];
        let dst = &mut out[r * row_bytes..(r + 1) * row_bytes];
        if s == item as i128 {
            dst.copy_from_slice(src);
            continue;
        }
        let step = s.unsigned_abs() as usize;
        for k in 0..n {
            let at = if s >= 0 { k * step } else { (n - 1 - k) * step };
            dst[k * item..(k + 1) * item].copy_from_slice(&src[at..at + item]);
        }
    }
}

impl AsdfFile {
    /// Part of the array at `path` in its dynamic form (any datatype), reading only the
    /// bytes that hold it: as [`AsdfFile::dyn_array`] then sliced with numpy's meaning.
    ///
    /// ```no_run
    /// use asdf_core::{AsdfFile, Selection};
    /// let file = AsdfFile::open("image.asdf")?;
    /// let sel: Selection = "100:356, 2000:2256".parse().expect("a selection");
    /// let cutout = file.dyn_region("/sci", &sel)?;
    /// assert_eq!(cutout.shape, vec![256, 256]);
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    ///
    /// With [`OpenOptions::verify_checksums`](super::OpenOptions::verify_checksums) the
    /// array's whole block is read and verified once (a checksum covers a whole block),
    /// then cached, and the region taken from it. Errors: a selection that does not fit the
    /// array is an [`Error::Selection`] naming the path, the axis and the bound; nothing is
    /// read or allocated before it is checked.
    pub fn dyn_region(&self, path: &str, sel: &Selection) -> Result<DynArray> {
        if let Some(z) = self.zarr_at(path)? {
            return self.zarr_dyn(&z, path, sel); // only the chunks the selection touches
        }
        let node = self.ndarray_node(path)?.clone();
        self.dyn_region_of(&node, path, sel)
    }

    /// As [`AsdfFile::dyn_region`] for any ndarray node of this file's tree (`path` is
    /// used in errors).
    pub fn dyn_region_of(&self, node: &Node, path: &str, sel: &Selection) -> Result<DynArray> {
        if super::is_zarr(node) {
            return self.zarr_dyn(node, path, sel);
        }
        let meta = NdArrayMeta::from_node(node, path)?;
        let (dtype, shape, data) = self.region_bytes(&meta, path, sel, None)?;
        Ok(DynArray { dtype, shape, data })
    }

    /// Part of the array at `path` as an owned `ndarray` array of `T` (byte order
    /// converted), reading only the bytes that hold it: as [`AsdfFile::array`] then sliced.
    ///
    /// ```no_run
    /// use asdf_core::{AsdfFile, SelItem, Selection};
    /// let file = AsdfFile::open("cube.asdf")?;
    /// // plane 3, every other row, columns 10..20: numpy's cube[3, ::2, 10:20]
    /// let sel = Selection::from([SelItem::index(3), SelItem::slice(None, None, Some(2)), SelItem::range(10..20)]);
    /// let part = file.region::<f64>("/cube", &sel)?;
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    pub fn region<T: Element>(&self, path: &str, sel: &Selection) -> Result<ArrayD<T>> {
        self.dyn_region(path, sel)?
            .to_array::<T>()
            .map_err(|source| Error::Convert {
                path: path.into(),
                source,
            })
    }

    /// Reads part of the array at `path` into `out` (C order), which must hold exactly the
    /// selected elements; returns the selection's shape. `T` must be the array's datatype
    /// (as for [`AsdfFile::try_view`]); the bytes are read into `out` and put in native
    /// order there: the library allocates only the buffers of the byte ranges it fetches (or
    /// decodes), never the result.
    ///
    /// ```no_run
    /// use asdf_core::{AsdfFile, Selection};
    /// let file = AsdfFile::open("image.asdf")?;
    /// let mut tile = vec![0f32; 64 * 64];
    /// let shape = file.read_region_into("/sci", &"0:64, 0:64".parse().expect("a selection"), &mut tile)?;
    /// assert_eq!(shape, vec![64, 64]);
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    pub fn read_region_into<T: Element>(
        &self,
        path: &str,
        sel: &Selection,
        out: &mut [T],
    ) -> Result<Vec<usize>> {
        if let Some(z) = self.zarr_at(path)? {
            return self.zarr_read_region_into(&z, path, sel, out);
        }
        let node = self.ndarray_node(path)?;
        let meta = NdArrayMeta::from_node(node, path)?;
        let mismatch = |found: &DType| {
            Error::Array(array::ArrayError::DTypeMismatch {
                expected: T::SCALAR.name(),
                found: found.name(),
            })
        };
        let dtype = meta.dtype.clone().unwrap_or(DType::Scalar {
            ty: array::ScalarType::Float64,
            byteorder: meta.byteorder,
        });
        let order = match &dtype {
            DType::Scalar { ty, byteorder } if *ty == T::SCALAR => *byteorder,
            other => return Err(mismatch(other)),
        };
        // `None` for bool: stored bytes other than 0 and 1 are not `bool`s; go through the
        // checks. Otherwise the caller's `[T]` as bytes (a safe cast, `Element::as_bytes_mut`).
        let Some(bytes) = T::as_bytes_mut(out) else {
            let a = self.region::<T>(path, sel)?;
            if a.len() != out.len() {
                return Err(sel_err(
                    path,
                    SelectionError::BufferSize {
                        given: out.len(),
                        needed: a.len(),
                    },
                ));
            }
            for (o, v) in out.iter_mut().zip(a.iter()) {
                *o = *v;
            }
            return Ok(a.shape().to_vec());
        };
        let (_, shape, _) = self.region_bytes(&meta, path, sel, Some(bytes))?;
        let size = std::mem::size_of::<T>();
        if T::SCALAR.has_byteorder() && !order.is_native() && size > 1 {
            let complex = matches!(
                T::SCALAR,
                array::ScalarType::Complex64 | array::ScalarType::Complex128
            );
            let unit = if complex { size / 2 } else { size };
            for v in bytes.chunks_exact_mut(unit) {
                v.reverse();
            }
        }
        Ok(shape)
    }

    /// Part of the masked array at `path` (numpy's masked array: the data and its mask,
    /// each read only where selected; a numeric `mask` value compares the selected data).
    pub fn masked_region<T: Element + MaskValue>(
        &self,
        path: &str,
        sel: &Selection,
    ) -> Result<Masked<T>> {
        let node = self.ndarray_node(path)?.clone();
        let data = self.region::<T>(path, sel)?;
        let mask = match node.get("mask") {
            Some(m) if m.is_ndarray() => {
                let mpath = format!("{path}/mask");
                let d = self.dyn_region_of(m, &mpath, sel)?;
                let m = crate::convert::nonzero_kind(&d).map_err(|k| {
                    Error::Typed(crate::convert::ConvertError::new(mpath.clone(), k))
                })?;
                if m.shape() != data.shape() {
                    return Err(Error::Array(array::ArrayError::BadValue {
                        path: path.into(),
                        key: "mask".into(),
                        message: format!(
                            "a mask of shape {:?} for data of shape {:?}",
                            m.shape(),
                            data.shape()
                        ),
                    }));
                }
                m
            }
            Some(m) => {
                let value = match m.value() {
                    Value::Int(i) => i.as_i128().map(|v| v as f64),
                    Value::Float(f) => Some(*f),
                    _ => None,
                };
                let value = value.ok_or_else(|| {
                    Error::Array(array::ArrayError::BadValue {
                        path: path.into(),
                        key: "mask".into(),
                        message: "not an array or a number".into(),
                    })
                })?;
                data.mapv(|v| v.is_masked_by(value))
            }
            None => ArrayD::from_elem(data.raw_dim(), false),
        };
        Masked::new(data, mask)
            .ok_or_else(|| Error::Internal("a masked region's shapes differ".into()))
    }

    /// The selected elements' bytes in C order (in the datatype's byte order), into `into`
    /// when given (which must be their exact size), else a new buffer.
    fn region_bytes(
        &self,
        meta: &NdArrayMeta,
        path: &str,
        sel: &Selection,
        into: Option<&mut [u8]>,
    ) -> Result<(DType, Vec<usize>, Vec<u8>)> {
        match &meta.source {
            ArraySource::Block(src) => {
                let idx = self.block_index(*src, path)?;
                self.block_region(idx, meta, path, sel, into)
            }
            ArraySource::Uri(uri) if !uri.starts_with("fits:") => {
                let ext = self.external_block_file(uri, path)?;
                ext.block_region(0, meta, path, sel, into)
                    .map_err(|e| match e {
                        e @ Error::Selection { .. } => e,
                        e => ext.as_external(e),
                    })
            }
            _ => {
                let whole = self.bound_dyn(meta, path)?;
                slice_in_memory(&whole, path, sel, into)
            }
        }
    }

    fn block_region(
        &self,
        idx: usize,
        meta: &NdArrayMeta,
        path: &str,
        sel: &Selection,
        into: Option<&mut [u8]>,
    ) -> Result<(DType, Vec<usize>, Vec<u8>)> {
        let h = self.block_header(idx)?;
        let legacy = self
            .layout
            .legacy_block(h.index)
            .is_some_and(|lb| lb.has_chain(h) || lb.encoding_name().is_some());
        if legacy {
            let whole = array::from_block(meta, self.block_data(idx)?, path)?;
            return slice_in_memory(&whole, path, sel, into);
        }
        let block_len = usize::try_from(h.data_size).map_err(|_| Error::Limit {
            what: "decoded block size",
            limit: usize::MAX as u64,
            found: h.data_size,
        })?;
        let l = bind::layout(meta, block_len, path)?;
        let axes = sel.resolve(&l.shape).map_err(|e| sel_err(path, e))?;
        let v = view_of(&l, &axes);
        let total = v.count as u64 * v.itemsize as u64;
        let mut owned = Vec::new();
        let out = self.region_out(into, &mut owned, path, v.count as u64, v.itemsize)?;
        if v.count > 0 {
            match rows(&v) {
                Some((spans, n, s)) => {
                    let span_total: u64 = spans.iter().map(|r| r.end - r.start).sum();
                    if span_total == total {
                        // dense rows: straight into the result
                        self.read_spans(idx, &spans, out)?;
                        if s < 0 && n > 1 {
                            for row in out.chunks_exact_mut(n * v.itemsize) {
                                reverse_items(row, v.itemsize);
                            }
                        }
                    } else {
                        self.check_size("bytes spanned by the selection", span_total)?;
                        let mut buf = vec![0u8; span_total as usize];
                        self.read_spans(idx, &spans, &mut buf)?;
                        gather_rows(&buf, spans.len(), n, s, v.itemsize, out);
                    }
                }
                None => {
                    // very many short rows: the one range spanning the view
                    let sub = sub_layout(&l, &v);
                    let window = sub.lo..sub.hi;
                    self.check_size("bytes spanned by the selection", sub.hi - sub.lo)?;
                    let mut buf = vec![0u8; (sub.hi - sub.lo) as usize];
                    self.read_spans(idx, std::slice::from_ref(&window), &mut buf)?;
                    let shifted = Layout {
                        start: sub.start - sub.lo,
                        lo: 0,
                        hi: sub.hi - sub.lo,
                        ..sub
                    };
                    let data = bind::gather(&buf, &shifted, path)?;
                    out.copy_from_slice(&data);
                }
            }
        }
        Ok((l.dtype, v.shape, owned))
    }
}

/// The bind layer's layout of a view (for its general gather).
fn sub_layout(l: &Layout, v: &View) -> Layout {
    let mut lo = v.start;
    let mut hi = v.start + v.itemsize as i128;
    for (&n, &s) in v.shape.iter().zip(&v.strides) {
        let reach = (n as i128 - 1) * s;
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    Layout {
        dtype: l.dtype.clone(),
        shape: v.shape.clone(),
        strides: v.strides.iter().map(|&s| s as i64).collect(),
        start: v.start as u64,
        itemsize: v.itemsize,
        count: v.count,
        lo: lo as u64,
        hi: hi as u64,
        contiguous: false,
    }
}

/// Reverses the order of the `item`-byte elements of `row`.
fn reverse_items(row: &mut [u8], item: usize) {
    let n = row.len() / item.max(1);
    for k in 0..n / 2 {
        let (a, b) = row.split_at_mut((n - 1 - k) * item);
        a[k * item..(k + 1) * item].swap_with_slice(&mut b[..item]);
    }
}

/// A selection of an array already in memory (inline data, `fits:` sources, legacy
/// encodings).
fn slice_in_memory(
    whole: &DynArray,
    path: &str,
    sel: &Selection,
    into: Option<&mut [u8]>,
) -> Result<(DType, Vec<usize>, Vec<u8>)> {
    let item = whole.dtype.itemsize() as u64;
    let shape64: Vec<u64> = whole.shape.iter().map(|&d| d as u64).collect();
    let mut strides = vec![0i64; shape64.len()];
    let mut acc = item as i64;
    for k in (0..shape64.len()).rev() {
        strides[k] = acc;
        acc = acc.saturating_mul(shape64[k].max(1) as i64);
    }
    let l = Layout {
        dtype: whole.dtype.clone(),
        shape: whole.shape.clone(),
        strides,
        start: 0,
        itemsize: item as usize,
        count: whole.element_count(),
        lo: 0,
        hi: whole.data.len() as u64,
        contiguous: true,
    };
    let axes = sel.resolve(&l.shape).map_err(|e| sel_err(path, e))?;
    let v = view_of(&l, &axes);
    let data = if v.count == 0 {
        Vec::new()
    } else {
        bind::gather(&whole.data, &sub_layout(&l, &v), path)?
    };
    match into {
        Some(buf) => {
            if buf.len() != data.len() {
                return Err(sel_err(
                    path,
                    SelectionError::BufferSize {
                        given: buf.len() / (item as usize).max(1),
                        needed: v.count,
                    },
                ));
            }
            buf.copy_from_slice(&data);
            Ok((l.dtype, v.shape, Vec::new()))
        }
        None => Ok((l.dtype, v.shape, data)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::CompressionChoice;
    use crate::codec::Compression;
    use crate::write::{WriteOptions, Writer};
    use ndarray::Array2;

    fn file_with(c: Option<Compression>, a: &Array2<f32>) -> AsdfFile {
        let choice = match c {
            None => CompressionChoice::None,
            Some(c) => CompressionChoice::Codec(c),
        };
        let mut w = Writer::new(WriteOptions::default().compression(choice));
        let node = w.add_array(a);
        let root = crate::tree!({ "sci": node });
        AsdfFile::from_bytes(w.write_to_vec(&root).expect("written")).expect("opened")
    }

    /// numpy's `a[r0:r1:rs, c0:c1:cs]` through ndarray's own slicing.
    fn expected(a: &Array2<f32>, r: (i64, i64, i64), c: (i64, i64, i64)) -> ArrayD<f32> {
        let e = |(s, t, st): (i64, i64, i64)| {
            ndarray::Slice::new(s as isize, Some(t as isize), st as isize)
        };
        a.slice(ndarray::s![e(r), e(c)]).to_owned().into_dyn()
    }

    #[test]
    fn regions_equal_whole_arrays_sliced_for_each_codec() {
        let a = Array2::from_shape_fn((1100, 1300), |(i, j)| (i * 1300 + j) as f32);
        for c in [
            None,
            Some(Compression::Zlib),
            Some(Compression::Lz4),
            Some(Compression::Zstd),
            Some(Compression::Bzp2),
            Some(Compression::Lz4f),
            Some(Compression::Bls2),
            Some(Compression::Bsc2),
        ] {
            // (the Blosc codecs only with the feature that has them)
            if !cfg!(feature = "blosc2") && matches!(c, Some(Compression::Bls2 | Compression::Bsc2))
            {
                continue;
            }
            let f = file_with(c, &a);
            for (text, r, cc) in [
                ("100:228, 1000:1256", (100, 228, 1), (1000, 1256, 1)),
                ("1090:1100, 0:1300", (1090, 1100, 1), (0, 1300, 1)),
                ("5:900:7, 3:1200:11", (5, 900, 7), (3, 1200, 11)),
            ] {
                let sel: Selection = text.parse().unwrap();
                let got = f.region::<f32>("/sci", &sel).unwrap();
                assert_eq!(got, expected(&a, r, cc), "{c:?} {text}");
                let mut buf = vec![0f32; got.len()];
                f.read_region_into("/sci", &sel, &mut buf).unwrap();
                assert_eq!(
                    buf,
                    got.iter().copied().collect::<Vec<_>>(),
                    "{c:?} {text} into"
                );
            }
            // negative steps (numpy a[::-3, 7]) and an index
            let sel: Selection = "::-3, 7".parse().unwrap();
            let got = f.region::<f32>("/sci", &sel).unwrap();
            let want: Vec<f32> = (0..1100).rev().step_by(3).map(|i| a[[i, 7]]).collect();
            assert_eq!(got.iter().copied().collect::<Vec<_>>(), want, "{c:?}");
            let sel: Selection = "-1, ::-1".parse().unwrap();
            let got = f.region::<f32>("/sci", &sel).unwrap();
            let want: Vec<f32> = (0..1300).rev().map(|j| a[[1099, j]]).collect();
            assert_eq!(got.iter().copied().collect::<Vec<_>>(), want, "{c:?}");
        }
    }

    #[test]
    fn bad_selections_name_the_path_axis_and_bound() {
        let a = Array2::<f32>::zeros((4, 5));
        let f = file_with(None, &a);
        let e = f
            .region::<f32>("/sci", &"1, 5".parse().unwrap())
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "/sci: index 5 is out of bounds for axis 1 with size 5"
        );
        let mut small = vec![0f32; 3];
        let e = f
            .read_region_into("/sci", &"0:2, 0:2".parse().unwrap(), &mut small)
            .unwrap_err();
        assert!(matches!(
            e,
            Error::Selection {
                source: SelectionError::BufferSize {
                    given: 3,
                    needed: 4
                },
                ..
            }
        ));
    }
}
