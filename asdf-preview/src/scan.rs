//! The plane of an image read in bands of rows, each band's values converted to `f64` in a
//! buffer the reader reuses: no whole-plane copy in the array's datatype or in `f64`.
//!
//! A plane in a block (uncompressed: only the band's bytes are read; compressed: the block
//! is decoded once into the file's cache and the band copied out) or in an external ASDF
//! file is read band by band through region reads. Other sources (asdf-zarr chunks, FITS
//! HDUs, inline data, legacy 0.1.0 blocks), whose region reads would decode the whole array
//! again for every band, are read once whole and their bands taken from memory.

use std::ops::Range;

use asdf_core::array::{ArraySource, ByteOrder, DType, NdArrayMeta, ScalarType};
use asdf_core::{AsdfFile, Node, SelItem, Selection, Value};

use crate::PreviewError;

/// About this many pixels a band (1 MiB of `f64`): a band and its raw bytes stay in the
/// processor's caches while they are worked on.
const BAND_PIXELS: usize = 1 << 17;

/// The plane of an image: `rows` by `cols` values (every `step`-th row and column of the
/// array's plane when it is read strided).
pub(crate) struct Plane<'a> {
    file: &'a AsdfFile,
    node: Node,
    path: String,
    /// The leading indices (a plane of an N-d array).
    lead: Vec<SelItem>,
    step: usize,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    ty: ScalarType,
    order: ByteOrder,
    mask: Mask,
    /// The whole plane (and its mask array's bytes) in memory, when it is not read in bands.
    whole: Option<Whole>,
}

enum Mask {
    None,
    /// An array of the data's shape: nonzero elements are masked.
    Array(Node, String),
    /// Elements equal to this number are masked.
    Value(f64),
}

struct Whole {
    data: Vec<u8>,
    /// The mask array's bytes and item size.
    mask: Option<(Vec<u8>, usize)>,
}

/// The scalar type of a datatype that can be drawn as numbers.
pub(crate) fn numeric(dtype: &DType) -> Option<(ScalarType, ByteOrder)> {
    match dtype {
        DType::Scalar { ty, byteorder } => match ty {
            ScalarType::Int8
            | ScalarType::Int16
            | ScalarType::Int32
            | ScalarType::Int64
            | ScalarType::UInt8
            | ScalarType::UInt16
            | ScalarType::UInt32
            | ScalarType::UInt64
            | ScalarType::Float16
            | ScalarType::Float32
            | ScalarType::Float64
            | ScalarType::Bool8 => Some((*ty, *byteorder)),
            _ => None,
        },
        _ => None,
    }
}

impl<'a> Plane<'a> {
    /// The plane `lead` of the array `node` at `path` (shape `shape` when the descriptor
    /// states it), every `step`-th row and column.
    pub(crate) fn open(
        file: &'a AsdfFile,
        node: &Node,
        path: &str,
        lead: Vec<SelItem>,
        step: usize,
        shape: Option<&[usize]>,
    ) -> Result<Plane<'a>, PreviewError> {
        let mask = match node.get("mask") {
            Some(m) if m.is_ndarray() => Mask::Array(m.clone(), format!("{path}/mask")),
            Some(m) => match m.value() {
                Value::Int(i) => i.as_i128().map_or(Mask::None, |v| Mask::Value(v as f64)),
                Value::Float(f) => Mask::Value(*f),
                _ => Mask::None,
            },
            None => Mask::None,
        };
        let step = step.max(1);
        let banded = banded_meta(file, node, path, shape);
        let mut plane = Plane {
            file,
            node: node.clone(),
            path: path.to_string(),
            lead,
            step,
            rows: 0,
            cols: 0,
            ty: ScalarType::Float64,
            order: ByteOrder::Little,
            mask,
            whole: None,
        };
        let (dtype, rows, cols) = match banded {
            Some((dtype, h, w)) => {
                cache_compressed_block(file, node, path)?;
                (dtype, h.div_ceil(step), w.div_ceil(step))
            }
            None => {
                let sel = plane.selection(None, None);
                let arr = read(file, node, path, &sel)?;
                if arr.shape.len() != 2 {
                    return Err(PreviewError::NotDrawable {
                        path: path.into(),
                        what: format!("a selection of shape {:?}", arr.shape),
                    });
                }
                let (rows, cols) = (arr.shape[0], arr.shape[1]);
                let mask = match &plane.mask {
                    Mask::Array(m, mpath) => {
                        let d = read(file, m, mpath, &sel)?;
                        if d.element_count() != rows * cols {
                            return Err(mask_mismatch(path, d.element_count(), rows * cols));
                        }
                        Some((d.data, d.dtype.itemsize().max(1)))
                    }
                    _ => None,
                };
                plane.whole = Some(Whole {
                    data: arr.data,
                    mask,
                });
                (arr.dtype, rows, cols)
            }
        };
        let (ty, order) = numeric(&dtype).ok_or_else(|| PreviewError::NotDrawable {
            path: path.into(),
            what: format!("an array of {}", dtype.name()),
        })?;
        if rows == 0 || cols == 0 {
            return Err(PreviewError::NotDrawable {
                path: path.into(),
                what: format!("an empty array (shape {:?})", [rows, cols]),
            });
        }
        if let Some(w) = &plane.whole {
            if w.data.len() != rows * cols * ty.itemsize() {
                return Err(PreviewError::NotDrawable {
                    path: path.into(),
                    what: "an array whose bytes do not match its shape".into(),
                });
            }
        }
        plane.rows = rows;
        plane.cols = cols;
        plane.ty = ty;
        plane.order = order;
        Ok(plane)
    }

    /// How many rows a band holds: about [`BAND_PIXELS`] pixels, a multiple of `factor`.
    pub(crate) fn band_rows(&self, factor: usize) -> usize {
        let f = factor.max(1);
        ((BAND_PIXELS / self.cols).max(1) / f).max(1) * f
    }

    /// The selection of plane rows `rows` (all of them for `None`) and plane columns `cols`
    /// (all of them for `None`).
    fn selection(&self, rows: Option<Range<usize>>, cols: Option<Range<usize>>) -> Selection {
        let step = (self.step > 1).then_some(self.step as i64);
        let axis = |r: Option<Range<usize>>| match r {
            Some(r) => SelItem::slice(
                Some((r.start * self.step) as i64),
                Some(((r.end - 1) * self.step + 1) as i64),
                step,
            ),
            None => SelItem::slice(None, None, step),
        };
        let mut items = self.lead.clone();
        items.push(axis(rows));
        items.push(axis(cols));
        Selection::new(items)
    }

    /// The values of plane rows `rows` (C order) into `band.values`: NaN for NaN, infinite
    /// and masked elements.
    pub(crate) fn read_band(
        &self,
        rows: Range<usize>,
        band: &mut Band,
    ) -> Result<(), PreviewError> {
        self.read(rows, None, band)
    }

    /// The value of plane row `row`, column `col` (NaN when it is bad).
    pub(crate) fn value_at(
        &self,
        row: usize,
        col: usize,
        band: &mut Band,
    ) -> Result<f64, PreviewError> {
        self.read(row..row + 1, Some(col..col + 1), band)?;
        Ok(band.values.first().copied().unwrap_or(f64::NAN))
    }

    fn read(
        &self,
        rows: Range<usize>,
        cols: Option<Range<usize>>,
        band: &mut Band,
    ) -> Result<(), PreviewError> {
        let width = cols.as_ref().map_or(self.cols, |c| c.len());
        let n = rows.len() * width;
        let size = self.ty.itemsize();
        let out = &mut band.values;
        out.clear();
        match &self.whole {
            Some(w) => {
                let (c0, c1) = cols.clone().map_or((0, self.cols), |c| (c.start, c.end));
                for r in rows.clone() {
                    let at = r * self.cols;
                    convert(
                        self.ty,
                        self.order,
                        &w.data[(at + c0) * size..(at + c1) * size],
                        out,
                    );
                    if let Some((mask, item)) = &w.mask {
                        let m = &mask[(at + c0) * item..(at + c1) * item];
                        let from = out.len() - (c1 - c0);
                        apply_mask(m, *item, &mut out[from..]);
                    }
                }
            }
            None => {
                let sel = self.selection(Some(rows), cols);
                self.read_values(&sel, n, band)?;
                let out = &mut band.values;
                if let Mask::Array(m, mpath) = &self.mask {
                    let d = read(self.file, m, mpath, &sel)?;
                    if d.element_count() != n {
                        return Err(mask_mismatch(&self.path, d.element_count(), n));
                    }
                    apply_mask(&d.data, d.dtype.itemsize().max(1), out);
                }
            }
        }
        if let Mask::Value(m) = self.mask {
            for v in band.values.iter_mut() {
                if *v == m {
                    *v = f64::NAN;
                }
            }
        }
        Ok(())
    }

    /// The `n` selected values through a region read into the band's buffer of the array's
    /// type (native byte order), then as `f64`.
    fn read_values(&self, sel: &Selection, n: usize, band: &mut Band) -> Result<(), PreviewError> {
        let err = |source| PreviewError::Read {
            path: self.path.clone(),
            source: Box::new(source),
        };
        macro_rules! typed {
            ($field:ident, $t:ty, $f:expr) => {{
                let raw = &mut band.raw.$field;
                if raw.len() < n {
                    raw.resize(n, <$t>::default());
                }
                let raw = &mut raw[..n];
                self.file
                    .read_region_into::<$t>(&self.path, sel, raw)
                    .map_err(err)?;
                let f = $f;
                band.values.extend(raw.iter().map(|v| {
                    let v: f64 = f(*v);
                    if v.is_finite() {
                        v
                    } else {
                        f64::NAN
                    }
                }));
            }};
        }
        match self.ty {
            ScalarType::Int8 => typed!(i8, i8, f64::from),
            ScalarType::UInt8 => typed!(u8, u8, f64::from),
            ScalarType::Int16 => typed!(i16, i16, f64::from),
            ScalarType::UInt16 => typed!(u16, u16, f64::from),
            ScalarType::Int32 => typed!(i32, i32, f64::from),
            ScalarType::UInt32 => typed!(u32, u32, f64::from),
            ScalarType::Int64 => typed!(i64, i64, |v: i64| v as f64),
            ScalarType::UInt64 => typed!(u64, u64, |v: u64| v as f64),
            ScalarType::Float16 => typed!(f16, half::f16, |v: half::f16| v.to_f64()),
            ScalarType::Float32 => typed!(f32, f32, f64::from),
            ScalarType::Float64 => typed!(f64, f64, |v: f64| v),
            _ => {
                // bool (and anything else numeric): through the bytes
                let arr = read(self.file, &self.node, &self.path, sel)?;
                if arr.data.len() != n * self.ty.itemsize() {
                    return Err(PreviewError::NotDrawable {
                        path: self.path.clone(),
                        what: "an array whose bytes do not match its shape".into(),
                    });
                }
                convert(self.ty, self.order, &arr.data, &mut band.values);
            }
        }
        Ok(())
    }
}

/// A band's values and the buffers it is read through, reused from band to band.
#[derive(Default)]
pub(crate) struct Band {
    pub(crate) values: Vec<f64>,
    raw: Raw,
}

/// A buffer of each datatype a region is read into.
#[derive(Default)]
struct Raw {
    i8: Vec<i8>,
    u8: Vec<u8>,
    i16: Vec<i16>,
    u16: Vec<u16>,
    i32: Vec<i32>,
    u32: Vec<u32>,
    i64: Vec<i64>,
    u64: Vec<u64>,
    f16: Vec<half::f16>,
    f32: Vec<f32>,
    f64: Vec<f64>,
}

fn mask_mismatch(path: &str, got: usize, want: usize) -> PreviewError {
    PreviewError::BadOption {
        path: path.into(),
        message: format!("a mask of {got} elements for {want} values"),
    }
}

/// A compressed block is decoded once into the file's block cache: the band reads then copy
/// from it rather than decode the block from its start again for each band.
fn cache_compressed_block(file: &AsdfFile, node: &Node, path: &str) -> Result<(), PreviewError> {
    let Ok(meta) = NdArrayMeta::from_node(node, path) else {
        return Ok(());
    };
    let ArraySource::Block(i) = meta.source else {
        return Ok(());
    };
    let count = file.block_count() as i64;
    let Ok(index) = usize::try_from(if i < 0 { count + i } else { i }) else {
        return Ok(());
    };
    let compressed = file.blocks().get(index).is_some_and(|h| {
        matches!(
            asdf_core::array::Compression::from_label(&h.compression),
            Ok(Some(_))
        )
    });
    if compressed {
        file.block_data(index)
            .map_err(|source| PreviewError::Read {
                path: path.into(),
                source: Box::new(source),
            })?;
    }
    Ok(())
}

/// The datatype and plane size of an array read in bands, or `None` for one read whole.
fn banded_meta(
    file: &AsdfFile,
    node: &Node,
    path: &str,
    shape: Option<&[usize]>,
) -> Option<(DType, usize, usize)> {
    let shape = shape?;
    if !node.is_ndarray() || asdf_core::file::is_zarr(node) || file.layout().is_legacy() {
        return None;
    }
    let meta = NdArrayMeta::from_node(node, path).ok()?;
    match &meta.source {
        ArraySource::Block(_) => {}
        ArraySource::Uri(uri) if !uri.starts_with("fits:") => {}
        _ => return None,
    }
    let dtype = meta.dtype.clone().unwrap_or(DType::Scalar {
        ty: ScalarType::Float64,
        byteorder: meta.byteorder,
    });
    let n = shape.len();
    (n >= 2).then(|| (dtype, shape[n - 2], shape[n - 1]))
}

pub(crate) fn read(
    file: &AsdfFile,
    node: &Node,
    path: &str,
    sel: &Selection,
) -> Result<asdf_core::array::DynArray, PreviewError> {
    file.dyn_region_of(node, path, sel)
        .map_err(|source| PreviewError::Read {
            path: path.into(),
            source: Box::new(source),
        })
}

/// Masked (nonzero mask element of `item` bytes) values become NaN.
fn apply_mask(mask: &[u8], item: usize, out: &mut [f64]) {
    if item == 1 {
        for (v, m) in out.iter_mut().zip(mask) {
            if *m != 0 {
                *v = f64::NAN;
            }
        }
    } else {
        for (v, m) in out.iter_mut().zip(mask.chunks_exact(item)) {
            if m.iter().any(|b| *b != 0) {
                *v = f64::NAN;
            }
        }
    }
}

/// Elements of `N` bytes through `f`, infinities as NaN, appended to `out`.
#[inline]
fn each<const N: usize>(bytes: &[u8], out: &mut Vec<f64>, f: impl Fn([u8; N]) -> f64) {
    out.extend(bytes.chunks_exact(N).map(|c| {
        let mut a = [0u8; N];
        a.copy_from_slice(c);
        let v = f(a);
        if v.is_finite() {
            v
        } else {
            f64::NAN
        }
    }));
}

/// The elements of `bytes` (of type `ty` in byte order `order`) as `f64`, appended to `out`.
pub(crate) fn convert(ty: ScalarType, order: ByteOrder, bytes: &[u8], out: &mut Vec<f64>) {
    macro_rules! num {
        ($t:ty, $n:literal) => {
            match order {
                ByteOrder::Little => each::<$n>(bytes, out, |a| <$t>::from_le_bytes(a) as f64),
                ByteOrder::Big => each::<$n>(bytes, out, |a| <$t>::from_be_bytes(a) as f64),
            }
        };
    }
    match ty {
        ScalarType::Int8 => each::<1>(bytes, out, |a| f64::from(a[0] as i8)),
        ScalarType::UInt8 => each::<1>(bytes, out, |a| f64::from(a[0])),
        ScalarType::Bool8 => each::<1>(bytes, out, |a| f64::from(u8::from(a[0] != 0))),
        ScalarType::Int16 => num!(i16, 2),
        ScalarType::UInt16 => num!(u16, 2),
        ScalarType::Int32 => num!(i32, 4),
        ScalarType::UInt32 => num!(u32, 4),
        ScalarType::Int64 => num!(i64, 8),
        ScalarType::UInt64 => num!(u64, 8),
        ScalarType::Float32 => num!(f32, 4),
        ScalarType::Float64 => num!(f64, 8),
        ScalarType::Float16 => match order {
            ByteOrder::Little => each::<2>(bytes, out, |a| {
                half::f16::from_bits(u16::from_le_bytes(a)).to_f64()
            }),
            ByteOrder::Big => each::<2>(bytes, out, |a| {
                half::f16::from_bits(u16::from_be_bytes(a)).to_f64()
            }),
        },
        _ => out.extend(std::iter::repeat_n(
            f64::NAN,
            bytes.len() / ty.itemsize().max(1),
        )),
    }
}

/// `f` over `items` (parts of the work), each on a thread of its own when there are
/// several; the results in order, or the first error.
pub(crate) fn in_parallel<I: Send, T: Send>(
    items: Vec<I>,
    f: impl Fn(I) -> Result<T, PreviewError> + Sync,
) -> Result<Vec<T>, PreviewError> {
    if items.len() <= 1 {
        return items.into_iter().map(&f).collect();
    }
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .into_iter()
            .map(|item| s.spawn(move || f(item)))
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}

/// How many threads a plane of `pixels` is worked on by (one below a million pixels).
pub(crate) fn workers(pixels: usize) -> usize {
    if pixels < 1 << 20 {
        return 1;
    }
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8)
}

/// `0..n` cut into `parts` ranges whose inner bounds are multiples of `align`.
pub(crate) fn split(n: usize, parts: usize, align: usize) -> Vec<Range<usize>> {
    let align = align.max(1);
    let parts = parts.clamp(1, n.div_ceil(align).max(1));
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for k in 1..=parts {
        let end = if k == parts {
            n
        } else {
            ((n * k / parts) / align * align).max(start)
        };
        if end > start {
            out.push(start..end);
        }
        start = end;
    }
    out
}
