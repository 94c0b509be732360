//! Binding block bytes to arrays: offset, strides, streamed rows, bounds validation,
//! copying ([`from_block`]) and zero-copy views ([`view`]).

use ndarray::{ArrayViewD, IxDyn, ShapeBuilder};

use super::element::Element;
use super::{ArrayError, ArraySource, DType, Dim, DynArray, NdArrayMeta, ScalarType};

/// Largest result, in bytes, that an array may expand to beyond the size of its block
/// (possible only with zero or overlapping strides). Arrays that fit in their block are
/// never limited.
pub const MAX_EXPANDED_BYTES: u64 = 1 << 32;

/// A validated view of a block: every addressed byte lies in `[lo, hi)` within the block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    pub dtype: DType,
    pub shape: Vec<usize>,
    /// Byte strides (as given, or C-contiguous).
    pub strides: Vec<i64>,
    /// Byte position of element `[0, 0, ...]`.
    pub start: u64,
    pub itemsize: usize,
    pub count: usize,
    /// Lowest addressed byte (equals `start` unless strides are negative).
    pub lo: u64,
    /// One past the highest addressed byte.
    pub hi: u64,
    /// Whether the elements are C-contiguous from `start`.
    pub contiguous: bool,
}

fn overflow(path: &str) -> ArrayError {
    ArrayError::ShapeOverflow { path: path.into() }
}

/// C-order strides for `shape` with `itemsize`-byte elements.
fn c_strides(shape: &[u64], itemsize: u64, path: &str) -> Result<Vec<i64>, ArrayError> {
    let mut strides = vec![0i64; shape.len()];
    let mut acc: u64 = itemsize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = i64::try_from(acc).map_err(|_| overflow(path))?;
        acc = acc.saturating_mul(d.max(1));
    }
    Ok(strides)
}

/// Byte extent `[min, max_end)` of the elements relative to element 0, as i128.
fn extent(
    shape: &[u64],
    strides: &[i64],
    itemsize: u64,
    path: &str,
) -> Result<(i128, i128), ArrayError> {
    let mut lo: i128 = 0;
    let mut hi: i128 = i128::from(itemsize);
    for (&d, &s) in shape.iter().zip(strides) {
        if d == 0 {
            continue;
        }
        let span = i128::from(s)
            .checked_mul(i128::from(d - 1))
            .ok_or_else(|| overflow(path))?;
        if span < 0 {
            lo = lo.checked_add(span).ok_or_else(|| overflow(path))?;
        } else {
            hi = hi.checked_add(span).ok_or_else(|| overflow(path))?;
        }
    }
    Ok((lo, hi))
}

/// Validates `meta` against a block of `block_len` bytes.
pub(crate) fn layout(
    meta: &NdArrayMeta,
    block_len: usize,
    path: &str,
) -> Result<Layout, ArrayError> {
    if let ArraySource::Inline(_) = meta.source {
        return Err(ArrayError::WrongSource {
            path: path.into(),
            message: "inline data has no block".into(),
        });
    }
    let dtype = meta.dtype.clone().unwrap_or(DType::Scalar {
        ty: ScalarType::Float64,
        byteorder: meta.byteorder,
    });
    let dims = meta.shape.as_ref().ok_or_else(|| ArrayError::MissingKey {
        path: path.into(),
        key: "shape".into(),
    })?;
    let itemsize_usize = dtype.itemsize();
    let itemsize = u64::try_from(itemsize_usize).map_err(|_| overflow(path))?;
    let block_len64 = u64::try_from(block_len).map_err(|_| overflow(path))?;
    let offset = meta.offset;
    if let Some(strides) = &meta.strides {
        if strides.len() != dims.len() {
            return Err(ArrayError::BadValue {
                path: path.into(),
                key: "strides".into(),
                message: format!("{} strides for {} dimensions", strides.len(), dims.len()),
            });
        }
    }

    // Fixed shape, with a streamed first dimension resolved to whole rows.
    let mut shape: Vec<u64> = Vec::with_capacity(dims.len());
    for d in dims.iter().skip(1) {
        match d {
            Dim::Fixed(n) => shape.push(*n),
            Dim::Streamed => {
                return Err(ArrayError::BadValue {
                    path: path.into(),
                    key: "shape".into(),
                    message: "'*' may only be the first entry".into(),
                })
            }
        }
    }
    match dims.first() {
        None => {}
        Some(Dim::Fixed(n)) => shape.insert(0, *n),
        Some(Dim::Streamed) => {
            let rows = streamed_rows(meta, &shape, itemsize, block_len64, path)?;
            shape.insert(0, rows);
        }
    }

    let strides = match &meta.strides {
        Some(s) => s.clone(),
        None => c_strides(&shape, itemsize, path)?,
    };
    let count64 = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| overflow(path))?;
    let total = count64
        .checked_mul(itemsize)
        .ok_or_else(|| overflow(path))?;
    let count = usize::try_from(count64).map_err(|_| overflow(path))?;
    usize::try_from(total).map_err(|_| overflow(path))?;
    let shape_usize: Vec<usize> = shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| overflow(path)))
        .collect::<Result<_, _>>()?;

    if count == 0 {
        if offset > block_len64 {
            return Err(ArrayError::OutOfBounds {
                path: path.into(),
                needed_end: offset,
                block_len: block_len64,
            });
        }
        return Ok(Layout {
            dtype,
            shape: shape_usize,
            strides,
            start: offset,
            itemsize: itemsize_usize,
            count,
            lo: offset,
            hi: offset,
            contiguous: true,
        });
    }

    let (rel_lo, rel_hi) = extent(&shape, &strides, itemsize, path)?;
    let lo = i128::from(offset)
        .checked_add(rel_lo)
        .ok_or_else(|| overflow(path))?;
    let hi = i128::from(offset)
        .checked_add(rel_hi)
        .ok_or_else(|| overflow(path))?;
    if lo < 0 {
        return Err(ArrayError::BeforeStart {
            path: path.into(),
            start: i64::try_from(lo).unwrap_or(i64::MIN),
        });
    }
    if hi > i128::from(block_len64) {
        return Err(ArrayError::OutOfBounds {
            path: path.into(),
            needed_end: u64::try_from(hi).unwrap_or(u64::MAX),
            block_len: block_len64,
        });
    }
    if total > block_len64 && total > MAX_EXPANDED_BYTES {
        return Err(ArrayError::TooLarge {
            path: path.into(),
            bytes: u128::from(total),
            limit: MAX_EXPANDED_BYTES,
        });
    }
    let c = c_strides(&shape, itemsize, path)?;
    let contiguous = shape
        .iter()
        .zip(&strides)
        .zip(&c)
        .all(|((&d, s), c)| d <= 1 || s == c);
    Ok(Layout {
        dtype,
        shape: shape_usize,
        strides,
        start: offset,
        itemsize: itemsize_usize,
        count,
        // lo, hi are within [0, block_len] here
        lo: u64::try_from(lo).map_err(|_| overflow(path))?,
        hi: u64::try_from(hi).map_err(|_| overflow(path))?,
        contiguous,
    })
}

/// Number of whole rows of a `*` first dimension that fit in the block after `offset`.
fn streamed_rows(
    meta: &NdArrayMeta,
    rest: &[u64],
    itemsize: u64,
    block_len: u64,
    path: &str,
) -> Result<u64, ArrayError> {
    let available = block_len
        .checked_sub(meta.offset)
        .ok_or(ArrayError::OutOfBounds {
            path: path.into(),
            needed_end: meta.offset,
            block_len,
        })?;
    let row_count = rest
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| overflow(path))?;
    match &meta.strides {
        None => {
            let row_bytes = row_count
                .checked_mul(itemsize)
                .ok_or_else(|| overflow(path))?;
            Ok(available.checked_div(row_bytes).unwrap_or(0))
        }
        Some(strides) => {
            let (first, sub) = strides.split_first().ok_or_else(|| overflow(path))?;
            let s0 = u64::try_from(*first)
                .ok()
                .filter(|&s| s > 0)
                .ok_or_else(|| ArrayError::BadValue {
                    path: path.into(),
                    key: "strides".into(),
                    message: "a streamed array needs a positive first stride".into(),
                })?;
            if row_count == 0 {
                return Ok(available / s0);
            }
            let (rel_lo, rel_hi) = extent(rest, sub, itemsize, path)?;
            if i128::from(meta.offset) + rel_lo < 0 {
                return Err(ArrayError::BeforeStart {
                    path: path.into(),
                    start: i64::try_from(i128::from(meta.offset) + rel_lo).unwrap_or(i64::MIN),
                });
            }
            // rows n: offset + (n - 1) * s0 + rel_hi <= block_len
            let row_end = u64::try_from(rel_hi).map_err(|_| overflow(path))?;
            Ok(match available.checked_sub(row_end) {
                None => 0,
                Some(room) => room / s0 + 1,
            })
        }
    }
}

/// Copies the elements addressed by `l` out of `block`, in C order.
pub(crate) fn gather(block: &[u8], l: &Layout, path: &str) -> Result<Vec<u8>, ArrayError> {
    let internal = || ArrayError::OutOfBounds {
        path: path.into(),
        needed_end: l.hi,
        block_len: block.len() as u64,
    };
    let total = l
        .count
        .checked_mul(l.itemsize)
        .ok_or_else(|| overflow(path))?;
    if l.count == 0 {
        return Ok(Vec::new());
    }
    let start = usize::try_from(l.start).map_err(|_| internal())?;
    if l.contiguous {
        let end = start.checked_add(total).ok_or_else(internal)?;
        return Ok(block.get(start..end).ok_or_else(internal)?.to_vec());
    }
    let mut out = Vec::with_capacity(total);
    let nd = l.shape.len();
    let (outer_shape, outer_strides, inner_len, inner_stride) = match nd {
        0 => (&[][..], &[][..], 1usize, 0i64),
        _ => (
            &l.shape[..nd - 1],
            &l.strides[..nd - 1],
            l.shape[nd - 1],
            l.strides[nd - 1],
        ),
    };
    let item = l.itemsize;
    let row_contiguous = usize::try_from(inner_stride).ok() == Some(item);
    let mut idx = vec![0usize; outer_shape.len()];
    // Positions are exact modulo 2^64 with wrapping arithmetic, and every reached position
    // is a validated element position, so they are never wrong; `get` guards regardless.
    let mut base = start as i64;
    loop {
        if row_contiguous {
            let b = usize::try_from(base).map_err(|_| internal())?;
            let e = b.checked_add(inner_len * item).ok_or_else(internal)?;
            out.extend_from_slice(block.get(b..e).ok_or_else(internal)?);
        } else {
            let mut p = base;
            for _ in 0..inner_len {
                let b = usize::try_from(p).map_err(|_| internal())?;
                let e = b.checked_add(item).ok_or_else(internal)?;
                out.extend_from_slice(block.get(b..e).ok_or_else(internal)?);
                p = p.wrapping_add(inner_stride);
            }
        }
        // advance the outer index (odometer)
        let mut k = outer_shape.len();
        loop {
            if k == 0 {
                return Ok(out);
            }
            k -= 1;
            idx[k] += 1;
            base = base.wrapping_add(outer_strides[k]);
            if idx[k] < outer_shape[k] {
                break;
            }
            base = base.wrapping_sub(outer_strides[k].wrapping_mul(outer_shape[k] as i64));
            idx[k] = 0;
        }
    }
}

/// Reads an array from the bytes of its (decompressed) block.
///
/// Applies `offset`, `strides` (negative and zero ones too) and `shape`; a `*` first
/// dimension becomes the number of whole rows in the block after `offset`. Every addressed
/// byte is checked to lie inside `block` before anything is allocated. A descriptor without
/// `datatype` reads as `float64` (as python asdf does). `path` is the ndarray's tree path.
pub fn from_block(meta: &NdArrayMeta, block: &[u8], path: &str) -> Result<DynArray, ArrayError> {
    let l = layout(meta, block.len(), path)?;
    let data = gather(block, &l, path)?;
    Ok(DynArray {
        dtype: l.dtype,
        shape: l.shape,
        data,
    })
}

/// A zero-copy view of an array in its block.
///
/// Returns `Ok(None)` when a view is impossible and a copy ([`from_block`] then
/// [`DynArray::to_array`]) is needed: byte order not native, `bool` (stored bytes other than
/// 0 and 1 would be invalid), block position or strides not aligned for `T`. Errors as
/// [`from_block`] for invalid descriptors, and [`ArrayError::DTypeMismatch`] when the
/// datatype is not `T`'s.
pub fn view<'a, T: Element>(
    meta: &NdArrayMeta,
    block: &'a [u8],
    path: &str,
) -> Result<Option<ArrayViewD<'a, T>>, ArrayError> {
    let l = layout(meta, block.len(), path)?;
    let (ty, order) = match &l.dtype {
        DType::Scalar { ty, byteorder } => (*ty, *byteorder),
        DType::Record(_) => {
            return Err(ArrayError::DTypeMismatch {
                expected: T::SCALAR.name(),
                found: l.dtype.name(),
            })
        }
    };
    if ty != T::SCALAR {
        return Err(ArrayError::DTypeMismatch {
            expected: T::SCALAR.name(),
            found: l.dtype.name(),
        });
    }
    if !T::ANY_BIT_PATTERN || (ty.has_byteorder() && !order.is_native()) {
        return Ok(None);
    }
    let size = std::mem::size_of::<T>();
    if l.count == 0 {
        return Ok(ArrayViewD::from_shape(IxDyn(&l.shape), &[]).ok());
    }
    let Some(window) = block.get(..usize::try_from(l.hi).unwrap_or(usize::MAX)) else {
        return Ok(None);
    };
    // The aligned elements of the window (a safe cast, `Element::aligned_in`; `None` only for
    // bool, excluded above).
    let Some((pre, items)) = T::aligned_in(window) else {
        return Ok(None);
    };
    let pre = pre as u64;
    let lo = l.lo;
    if lo < pre || (lo - pre) % size as u64 != 0 {
        return Ok(None);
    }
    let mut elem_strides = Vec::with_capacity(l.strides.len());
    for &s in &l.strides {
        if s % size as i64 != 0 {
            return Ok(None);
        }
        elem_strides.push((s / size as i64) as isize as usize);
    }
    let first = usize::try_from((lo - pre) / size as u64).unwrap_or(usize::MAX);
    let Some(items) = items.get(first..) else {
        return Ok(None);
    };
    Ok(ArrayViewD::from_shape(IxDyn(&l.shape).strides(IxDyn(&elem_strides)), items).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::ByteOrder;

    fn meta(dtype: DType, shape: Vec<Dim>, offset: u64, strides: Option<Vec<i64>>) -> NdArrayMeta {
        NdArrayMeta {
            source: ArraySource::Block(0),
            byteorder: match &dtype {
                DType::Scalar { byteorder, .. } => *byteorder,
                DType::Record(_) => ByteOrder::Little,
            },
            dtype: Some(dtype),
            shape: Some(shape),
            offset,
            strides,
            mask: None,
        }
    }
    fn fixed(dims: &[u64]) -> Vec<Dim> {
        dims.iter().map(|&d| Dim::Fixed(d)).collect()
    }
    fn u8s() -> DType {
        DType::scalar(ScalarType::UInt8, ByteOrder::Little)
    }
    fn i16be() -> DType {
        DType::scalar(ScalarType::Int16, ByteOrder::Big)
    }

    #[test]
    fn contiguous_with_offset() {
        let block: Vec<u8> = (0..10).collect();
        let a = from_block(&meta(u8s(), fixed(&[2, 3]), 2, None), &block, "/a").unwrap();
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.data, vec![2, 3, 4, 5, 6, 7]);
        assert_eq!(a.dtype, u8s());
    }

    #[test]
    fn negative_zero_and_fortran_strides() {
        let block: Vec<u8> = (0..12).collect();
        // reversed
        let a = from_block(&meta(u8s(), fixed(&[4]), 3, Some(vec![-1])), &block, "").unwrap();
        assert_eq!(a.data, vec![3, 2, 1, 0]);
        // 2-d, both negative
        let a = from_block(
            &meta(u8s(), fixed(&[2, 3]), 11, Some(vec![-6, -2])),
            &block,
            "",
        )
        .unwrap();
        assert_eq!(a.data, vec![11, 9, 7, 5, 3, 1]);
        // zero stride broadcasts a row
        let a = from_block(
            &meta(u8s(), fixed(&[3, 2]), 4, Some(vec![0, 1])),
            &block,
            "",
        )
        .unwrap();
        assert_eq!(a.data, vec![4, 5, 4, 5, 4, 5]);
        // Fortran order
        let a = from_block(
            &meta(u8s(), fixed(&[2, 3]), 0, Some(vec![1, 2])),
            &block,
            "",
        )
        .unwrap();
        assert_eq!(a.data, vec![0, 2, 4, 1, 3, 5]);
        // multi-byte elements keep their bytes together
        let a = from_block(&meta(i16be(), fixed(&[3]), 8, Some(vec![-4])), &block, "").unwrap();
        assert_eq!(a.data, vec![8, 9, 4, 5, 0, 1]);
    }

    #[test]
    fn bounds_violations_error() {
        let block = [0u8; 16];
        assert_eq!(
            from_block(&meta(i16be(), fixed(&[9]), 0, None), &block, "/x"),
            Err(ArrayError::OutOfBounds {
                path: "/x".into(),
                needed_end: 18,
                block_len: 16
            })
        );
        assert_eq!(
            from_block(&meta(i16be(), fixed(&[4]), 10, None), &block, "/x"),
            Err(ArrayError::OutOfBounds {
                path: "/x".into(),
                needed_end: 18,
                block_len: 16
            })
        );
        assert_eq!(
            from_block(&meta(i16be(), fixed(&[4]), 4, Some(vec![-2])), &block, "/x"),
            Err(ArrayError::BeforeStart {
                path: "/x".into(),
                start: -2
            })
        );
        assert_eq!(
            from_block(&meta(u8s(), fixed(&[u64::MAX, 2]), 0, None), &block, "/x"),
            Err(ArrayError::ShapeOverflow { path: "/x".into() })
        );
        assert_eq!(
            from_block(
                &meta(u8s(), fixed(&[3]), 0, Some(vec![i64::MAX])),
                &block,
                "/x"
            ),
            Err(ArrayError::OutOfBounds {
                path: "/x".into(),
                needed_end: u64::MAX,
                block_len: 16
            })
        );
        assert!(matches!(
            from_block(&meta(u8s(), fixed(&[2]), u64::MAX, None), &block, "/x"),
            Err(ArrayError::OutOfBounds { .. })
        ));
        assert!(matches!(
            from_block(
                &meta(u8s(), fixed(&[1 << 40, 1 << 20]), 0, Some(vec![0, 0])),
                &block,
                "/x"
            ),
            Err(ArrayError::TooLarge { .. })
        ));
        let mut m = meta(u8s(), fixed(&[2]), 0, None);
        m.shape = None;
        assert_eq!(
            from_block(&m, &block, "/x"),
            Err(ArrayError::MissingKey {
                path: "/x".into(),
                key: "shape".into()
            })
        );
        m.source = ArraySource::Inline(crate::yaml::Node::new(crate::yaml::Value::Seq(vec![])));
        assert!(matches!(
            from_block(&m, &block, "/x"),
            Err(ArrayError::WrongSource { .. })
        ));
    }

    #[test]
    fn streamed_rows_are_whole_rows_after_offset() {
        let block: Vec<u8> = (0..23).collect();
        let m = meta(u8s(), vec![Dim::Streamed, Dim::Fixed(5)], 2, None);
        let a = from_block(&m, &block, "").unwrap();
        assert_eq!(a.shape, vec![4, 5]);
        assert_eq!(a.data, (2..22).collect::<Vec<u8>>());
        // with strides: rows of 2 elements every 6 bytes
        let m = meta(
            u8s(),
            vec![Dim::Streamed, Dim::Fixed(2)],
            0,
            Some(vec![6, 1]),
        );
        let a = from_block(&m, &block, "").unwrap();
        assert_eq!(a.shape, vec![4, 2]);
        assert_eq!(a.data, vec![0, 1, 6, 7, 12, 13, 18, 19]);
        // empty and short blocks give zero rows
        let m = meta(i16be(), vec![Dim::Streamed, Dim::Fixed(3)], 0, None);
        assert_eq!(from_block(&m, &[1, 2, 3], "").unwrap().shape, vec![0, 3]);
        let m = meta(i16be(), vec![Dim::Streamed], 0, None);
        assert_eq!(from_block(&m, &[], "").unwrap().shape, vec![0]);
        // a zero-size row: no rows rather than a division by zero
        let m = meta(i16be(), vec![Dim::Streamed, Dim::Fixed(0)], 0, None);
        assert_eq!(from_block(&m, &block, "").unwrap().shape, vec![0, 0]);
        let m = meta(i16be(), vec![Dim::Streamed], 30, None);
        assert!(matches!(
            from_block(&m, &block, ""),
            Err(ArrayError::OutOfBounds { .. })
        ));
    }

    #[test]
    fn zero_d_and_empty() {
        let block: Vec<u8> = (0..8).collect();
        let a = from_block(&meta(i16be(), vec![], 6, None), &block, "").unwrap();
        assert_eq!(a.shape, Vec::<usize>::new());
        assert_eq!(a.data, vec![6, 7]);
        let a = from_block(&meta(i16be(), fixed(&[0, 1 << 60]), 8, None), &block, "").unwrap();
        assert_eq!(a.shape, vec![0, 1 << 60]);
        assert!(a.data.is_empty());
    }

    #[test]
    fn missing_datatype_reads_float64() {
        let mut m = meta(u8s(), fixed(&[1]), 0, None);
        m.dtype = None;
        m.byteorder = ByteOrder::Big;
        let a = from_block(&m, &1.5f64.to_be_bytes(), "").unwrap();
        assert_eq!(a.dtype, DType::scalar(ScalarType::Float64, ByteOrder::Big));
        assert_eq!(
            a.to_array::<f64>().unwrap().into_raw_vec_and_offset().0,
            vec![1.5]
        );
    }

    #[test]
    fn views_are_zero_copy_with_negative_strides() {
        let vals: Vec<u8> = (0..16u16).flat_map(|v| v.to_ne_bytes()).collect();
        // find an offset in the buffer aligned for u16
        let shift = vals.as_ptr().align_offset(2) as u64;
        let block = &vals[..];
        let native = DType::scalar(ScalarType::UInt16, ByteOrder::native());
        let m = meta(
            native.clone(),
            fixed(&[2, 3]),
            shift + 2 * 14,
            Some(vec![-8, -2]),
        );
        let v = view::<u16>(&m, block, "")
            .unwrap()
            .expect("aligned native view");
        assert_eq!(v.shape(), &[2, 3]);
        let got: Vec<u16> = v.iter().copied().collect();
        let base = (shift / 2) as u16;
        assert_eq!(
            got,
            vec![14, 13, 12, 10, 9, 8]
                .into_iter()
                .map(|x| x + base)
                .collect::<Vec<_>>()
        );
        assert!(std::ptr::eq(
            v.as_ptr().cast::<u8>(),
            block[(shift + 28) as usize..].as_ptr()
        ));
        // same data as the copying path
        let copied = from_block(&m, block, "")
            .unwrap()
            .to_array::<u16>()
            .unwrap();
        assert_eq!(copied.view(), v);
        // zero stride is fine for a read-only view
        let m0 = meta(native.clone(), fixed(&[3]), shift, Some(vec![0]));
        let v0 = view::<u16>(&m0, block, "").unwrap().unwrap();
        assert_eq!(v0.iter().copied().collect::<Vec<_>>(), vec![base; 3]);
        // misaligned offset, odd stride, foreign byte order, bool: copy needed
        let mis = meta(native.clone(), fixed(&[2]), shift + 1, None);
        assert_eq!(view::<u16>(&mis, block, "").unwrap(), None);
        let odd = meta(native, fixed(&[2]), shift, Some(vec![3]));
        assert_eq!(view::<u16>(&odd, block, "").unwrap(), None);
        let other = if ByteOrder::native() == ByteOrder::Little {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        };
        let foreign = meta(
            DType::scalar(ScalarType::UInt16, other),
            fixed(&[2]),
            shift,
            None,
        );
        assert_eq!(view::<u16>(&foreign, block, "").unwrap(), None);
        let b = meta(
            DType::scalar(ScalarType::Bool8, ByteOrder::Little),
            fixed(&[2]),
            0,
            None,
        );
        assert_eq!(view::<bool>(&b, block, "").unwrap(), None);
        // wrong type is an error, bounds are still checked
        assert!(matches!(
            view::<i16>(&foreign, block, ""),
            Err(ArrayError::DTypeMismatch { .. })
        ));
        let oob = meta(
            DType::scalar(ScalarType::UInt8, ByteOrder::Little),
            fixed(&[100]),
            0,
            None,
        );
        assert!(matches!(
            view::<u8>(&oob, block, ""),
            Err(ArrayError::OutOfBounds { .. })
        ));
        let u8v = meta(
            DType::scalar(ScalarType::UInt8, ByteOrder::Big),
            fixed(&[3]),
            1,
            None,
        );
        assert_eq!(
            view::<u8>(&u8v, block, "")
                .unwrap()
                .unwrap()
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            block[1..4].to_vec()
        );
    }
}

#[cfg(test)]
mod prop_tests {
    use super::*;
    use crate::array::ByteOrder;
    use proptest::prelude::*;

    /// Element-by-element reference: `None` when some addressed byte is outside the block.
    fn naive(
        block: &[u8],
        shape: &[u64],
        strides: &[i64],
        offset: u64,
        item: usize,
    ) -> Option<Vec<u8>> {
        let count: u64 = shape.iter().product();
        if count == 0 {
            return (offset <= block.len() as u64).then(Vec::new);
        }
        let mut out = Vec::new();
        let mut idx = vec![0u64; shape.len()];
        loop {
            let pos: i128 = offset as i128
                + idx
                    .iter()
                    .zip(strides)
                    .map(|(&i, &s)| i as i128 * s as i128)
                    .sum::<i128>();
            if pos < 0 || pos as usize + item > block.len() {
                return None;
            }
            out.extend_from_slice(&block[pos as usize..pos as usize + item]);
            let mut k = shape.len();
            loop {
                if k == 0 {
                    return Some(out);
                }
                k -= 1;
                idx[k] += 1;
                if idx[k] < shape[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
    }

    fn dtype_for(choice: u8) -> DType {
        match choice % 4 {
            0 => DType::scalar(ScalarType::UInt8, ByteOrder::Little),
            1 => DType::scalar(ScalarType::Int16, ByteOrder::Big),
            2 => DType::scalar(ScalarType::Float32, ByteOrder::Little),
            _ => DType::scalar(ScalarType::Ascii(3), ByteOrder::Big),
        }
    }

    proptest! {
        #[test]
        fn from_block_matches_reference_and_never_panics(
            block in proptest::collection::vec(any::<u8>(), 0..96),
            dims in proptest::collection::vec((0u64..5, -24i64..24), 0..4),
            offset in 0u64..100,
            explicit in any::<bool>(),
            choice in any::<u8>(),
        ) {
            let dtype = dtype_for(choice);
            let item = dtype.itemsize();
            let shape: Vec<u64> = dims.iter().map(|d| d.0).collect();
            let strides: Option<Vec<i64>> = explicit.then(|| dims.iter().map(|d| d.1).collect());
            let meta = NdArrayMeta {
                source: ArraySource::Block(0),
                dtype: Some(dtype.clone()),
                byteorder: ByteOrder::Little,
                shape: Some(shape.iter().map(|&d| Dim::Fixed(d)).collect()),
                offset,
                strides: strides.clone(),
                mask: None,
            };
            let eff = strides.unwrap_or_else(|| c_strides(&shape, item as u64, "").unwrap());
            let want = naive(&block, &shape, &eff, offset, item);
            let got = from_block(&meta, &block, "/p");
            match (want, got) {
                (Some(w), Ok(a)) => {
                    prop_assert_eq!(a.data, w);
                    prop_assert_eq!(a.shape, shape.iter().map(|&d| d as usize).collect::<Vec<_>>());
                }
                (None, Err(_)) => {}
                (w, g) => prop_assert!(false, "reference {:?} vs {:?}", w.is_some(), g),
            }
        }

        #[test]
        fn views_agree_with_copies(
            block in proptest::collection::vec(any::<u8>(), 0..96),
            dims in proptest::collection::vec((0u64..5, -12i64..12), 0..3),
            offset in 0u64..64,
        ) {
            let meta = NdArrayMeta {
                source: ArraySource::Block(0),
                dtype: Some(DType::scalar(ScalarType::UInt16, ByteOrder::native())),
                byteorder: ByteOrder::native(),
                shape: Some(dims.iter().map(|d| Dim::Fixed(d.0)).collect()),
                offset,
                strides: Some(dims.iter().map(|d| d.1 * 2).collect()),
                mask: None,
            };
            match (view::<u16>(&meta, &block, ""), from_block(&meta, &block, "")) {
                (Ok(Some(v)), Ok(a)) => {
                    let owned = a.to_array::<u16>().unwrap();
                    prop_assert_eq!(v, owned.view());
                }
                (Ok(None), Ok(_)) => {}
                (Err(e1), Err(e2)) => prop_assert_eq!(e1, e2),
                (v, a) => prop_assert!(false, "view {:?} vs copy {:?}", v, a),
            }
        }

        #[test]
        fn streamed_rows_never_panic(
            len in 0usize..200,
            rest in proptest::collection::vec(0u64..4, 0..3),
            offset in 0u64..250,
            stride0 in proptest::option::of(-8i64..40),
        ) {
            let block = vec![7u8; len];
            let mut shape = vec![Dim::Streamed];
            shape.extend(rest.iter().map(|&d| Dim::Fixed(d)));
            let strides = stride0.map(|s0| {
                let mut s = vec![s0];
                let mut acc = 2i64;
                for &d in rest.iter().rev() {
                    s.insert(1, acc);
                    acc *= d.max(1) as i64;
                }
                s
            });
            let meta = NdArrayMeta {
                source: ArraySource::Block(-1),
                dtype: Some(DType::scalar(ScalarType::Int16, ByteOrder::Big)),
                byteorder: ByteOrder::Big,
                shape: Some(shape),
                offset,
                strides,
                mask: None,
            };
            if let Ok(a) = from_block(&meta, &block, "") {
                prop_assert_eq!(a.data.len(), a.element_count() * 2);
                let row: u64 = rest.iter().product::<u64>() * 2;
                if meta.strides.is_none() && row > 0 {
                    prop_assert_eq!(a.shape[0] as u64, (len as u64 - offset) / row);
                }
            }
        }
    }
}
