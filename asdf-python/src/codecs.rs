//! The decoders behind the numcodecs codecs of `asdf_rs.codecs` (zarr reading
//! `asdftool references` and `asdf_rs.virtualizarr`'s virtual datasets): `_decode` (a
//! block's or piece's stored bytes through asdf-core's codecs), `_strided` (the elements of
//! a view gathered from its block's bytes), `_swap` (the big-endian fields of records made
//! little-endian, which is all zarr's record datatype can say) and `_inline` (an inline
//! array parsed from the text of the file's tree).
//!
//! Their bytes and configurations come from reference files and chunk stores, which may be
//! anyone's: every size is checked against the bytes at hand (or, for an output larger than
//! its input, against [`MAX_EXPANDED_BYTES`]) before anything is allocated, and every
//! failure is a Python `ValueError` (bad configuration) or `AsdfError` (bad bytes) naming
//! what is wrong.

use std::str::FromStr;

use asdf_core::array::{ArraySource, NdArrayMeta, MAX_EXPANDED_BYTES};
use asdf_core::write::Compression;
use asdf_core::{AsdfFile, ExternalPolicy};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::AsdfError;

/// Decodes `data` stored with the codec named `label` (`zlib`, `bzp2`, `lz4` in python
/// asdf's framing, `zstd`, `lz4f`, `blsc`, `bsc2` (a Blosc2 frame), `bls2` (one Blosc2
/// chunk)) into exactly `size` bytes; `AsdfError` when the bytes are corrupt or decode to
/// another size. The GIL is released while decoding.
#[pyfunction]
#[pyo3(name = "_decode")]
pub fn decode<'py>(
    py: Python<'py>,
    label: &str,
    data: &[u8],
    size: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let codec = Compression::from_str(label)
        .map_err(|e| PyValueError::new_err(format!("{label:?}: {e}")))?;
    let decoded = py
        .detach(|| asdf_core::unstable::decode(codec, data, size))
        .map_err(|e| AsdfError::new_err(format!("{label}: {e}")))?;
    Ok(PyBytes::new(py, &decoded))
}

/// Most axes a view may have (numpy's own limit is 64).
const MAX_AXES: usize = 64;

/// Where a strided view lies in the bytes it is gathered from, checked.
#[derive(Debug, PartialEq, Eq)]
struct View {
    shape: Vec<usize>,
    /// The byte offset of element `[0, 0, ...]`.
    offset: usize,
    strides: Vec<i64>,
    itemsize: usize,
    /// Bytes of the gathered C-order result.
    total: usize,
}

/// Checks a view of `len` bytes: `shape` and `strides` of equal length (at most
/// [`MAX_AXES`]), an itemsize of at least one byte, every element inside `0..len`, and the
/// result no larger than `len` or [`MAX_EXPANDED_BYTES`] (zero strides repeat elements).
fn check_view(
    len: usize,
    offset: u64,
    shape: &[u64],
    strides: &[i64],
    itemsize: u64,
) -> Result<View, String> {
    if shape.len() != strides.len() {
        return Err(format!(
            "{} strides for {} axes",
            strides.len(),
            shape.len()
        ));
    }
    if shape.len() > MAX_AXES {
        return Err(format!("{} axes, more than {MAX_AXES}", shape.len()));
    }
    if itemsize == 0 {
        return Err("itemsize 0".into());
    }
    let too_big = || format!("shape {shape:?} of {itemsize}-byte items overflows");
    let count = shape
        .iter()
        .try_fold(1u64, |a, &n| a.checked_mul(n))
        .ok_or_else(too_big)?;
    let total = count.checked_mul(itemsize).ok_or_else(too_big)?;
    if total > len as u64 && total > MAX_EXPANDED_BYTES {
        return Err(format!(
            "{total} bytes gathered from {len}, more than the limit of {MAX_EXPANDED_BYTES}"
        ));
    }
    let total = usize::try_from(total).map_err(|_| too_big())?;
    let itemsize_u = usize::try_from(itemsize).map_err(|_| too_big())?;
    let shape_u = shape
        .iter()
        .map(|&n| usize::try_from(n).map_err(|_| too_big()))
        .collect::<Result<Vec<_>, _>>()?;
    let offset_u = usize::try_from(offset).unwrap_or(usize::MAX);
    if count == 0 {
        return Ok(View {
            shape: shape_u,
            offset: offset_u.min(len),
            strides: strides.to_vec(),
            itemsize: itemsize_u,
            total: 0,
        });
    }
    // the lowest and highest byte any element touches (i128: no product can overflow)
    let (mut lo, mut hi) = (
        i128::from(offset),
        i128::from(offset) + i128::from(itemsize),
    );
    for (&n, &s) in shape.iter().zip(strides) {
        let reach = i128::from(n - 1) * i128::from(s);
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    if lo < 0 || hi > len as i128 {
        return Err(format!(
            "the view (offset {offset}, shape {shape:?}, strides {strides:?}, itemsize \
             {itemsize}) reaches bytes {lo}..{hi}, outside the {len} bytes given"
        ));
    }
    Ok(View {
        shape: shape_u,
        offset: offset_u,
        strides: strides.to_vec(),
        itemsize: itemsize_u,
        total,
    })
}

/// The elements of a checked view of `data`, in C order.
fn gather(data: &[u8], v: &View) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    out.try_reserve_exact(v.total)
        .map_err(|e| format!("{} bytes: {e}", v.total))?;
    if v.total == 0 {
        return Ok(out);
    }
    let at = |pos: i128| -> Result<&[u8], String> {
        usize::try_from(pos)
            .ok()
            .and_then(|p| data.get(p..p.checked_add(v.itemsize)?))
            .ok_or_else(|| format!("element at byte {pos} outside the {} bytes", data.len()))
    };
    let ndim = v.shape.len();
    if ndim == 0 {
        out.extend_from_slice(at(v.offset as i128)?);
        return Ok(out);
    }
    let (last_n, last_s) = (v.shape[ndim - 1], i128::from(v.strides[ndim - 1]));
    let mut index = vec![0usize; ndim - 1];
    loop {
        let base = index
            .iter()
            .zip(&v.strides)
            .fold(v.offset as i128, |a, (&i, &s)| {
                a + i as i128 * i128::from(s)
            });
        if last_s == v.itemsize as i128 {
            // a contiguous row: one copy
            let start = usize::try_from(base).map_err(|_| format!("row at byte {base}"))?;
            let row = last_n
                .checked_mul(v.itemsize)
                .and_then(|n| data.get(start..start.checked_add(n)?))
                .ok_or_else(|| format!("row at byte {base} outside the data"))?;
            out.extend_from_slice(row);
        } else {
            for j in 0..last_n {
                out.extend_from_slice(at(base + j as i128 * last_s)?);
            }
        }
        // the next index of the outer axes, the last of them fastest
        let mut axis = ndim - 1;
        loop {
            if axis == 0 {
                return Ok(out);
            }
            axis -= 1;
            index[axis] += 1;
            if index[axis] < v.shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
}

/// `asdf_rs._strided(data, offset, shape, strides, itemsize)`: the elements of the view
/// whose element `[0, 0, ...]` is at byte `offset` of `data`, with byte `strides` (negative
/// and zero ones too), gathered into C order; `ValueError` when the view reaches outside
/// `data` or is malformed. The GIL is released while gathering.
#[pyfunction]
#[pyo3(name = "_strided")]
pub fn strided<'py>(
    py: Python<'py>,
    data: &[u8],
    offset: u64,
    shape: Vec<u64>,
    strides: Vec<i64>,
    itemsize: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let out = py
        .detach(|| {
            let v = check_view(data.len(), offset, &shape, &strides, itemsize)?;
            gather(data, &v)
        })
        .map_err(|e| PyValueError::new_err(format!("asdf_strided: {e}")))?;
    Ok(PyBytes::new(py, &out))
}

/// Most byte ranges an `asdf_swap` item may reverse.
const MAX_SWAPS: usize = 1 << 16;

/// Checks `asdf_swap`'s configuration: a non-zero `itemsize` dividing `len`, and ranges
/// `(offset, size)` inside one item.
fn check_swaps(len: usize, itemsize: u64, ranges: &[(u64, u64)]) -> Result<usize, String> {
    let item = usize::try_from(itemsize)
        .ok()
        .filter(|&i| i > 0)
        .ok_or_else(|| format!("itemsize {itemsize}"))?;
    if len % item != 0 {
        return Err(format!(
            "{len} bytes are no whole number of {item}-byte items"
        ));
    }
    if ranges.len() > MAX_SWAPS {
        return Err(format!("{} ranges, more than {MAX_SWAPS}", ranges.len()));
    }
    for &(o, n) in ranges {
        if o.checked_add(n).is_none_or(|end| end > itemsize) {
            return Err(format!("range {o}+{n} outside a {itemsize}-byte item"));
        }
    }
    Ok(item)
}

/// `asdf_rs._swap(data, itemsize, ranges)`: `data`, items of `itemsize` bytes, with the
/// bytes of each range `(offset, size)` of every item reversed (the big-endian fields of a
/// record made little-endian); `ValueError` for a range outside an item or data that is no
/// whole number of items. The GIL is released while swapping.
#[pyfunction]
#[pyo3(name = "_swap")]
pub fn swap<'py>(
    py: Python<'py>,
    data: &[u8],
    itemsize: u64,
    ranges: Vec<(u64, u64)>,
) -> PyResult<Bound<'py, PyBytes>> {
    let out = py
        .detach(|| {
            let item = check_swaps(data.len(), itemsize, &ranges)?;
            let mut out = data.to_vec();
            for chunk in out.chunks_exact_mut(item) {
                for &(o, n) in &ranges {
                    // checked above: o + n <= itemsize
                    if let Some(r) = chunk.get_mut(o as usize..(o + n) as usize) {
                        r.reverse();
                    }
                }
            }
            Ok::<_, String>(out)
        })
        .map_err(|e| PyValueError::new_err(format!("asdf_swap: {e}")))?;
    Ok(PyBytes::new(py, &out))
}

/// `asdf_rs._fits_scale(data, bitpix, bscale, bzero, bzero_int=None, blank=None)`: the
/// values astropy computes from the stored big-endian bytes of a FITS image scaled by
/// `BSCALE`/`BZERO`/`BLANK` (asdf-core's own arithmetic for reading such an image): their
/// numpy dtype (big-endian) and bytes. `ValueError` for a `BITPIX` FITS has not, a scale
/// that is not finite, data that is no whole number of values or too large a result. The
/// GIL is released while scaling.
#[pyfunction]
#[pyo3(name = "_fits_scale", signature = (data, bitpix, bscale, bzero, bzero_int = None, blank = None))]
pub fn fits_scale<'py>(
    py: Python<'py>,
    data: &[u8],
    bitpix: i64,
    bscale: f64,
    bzero: f64,
    bzero_int: Option<i128>,
    blank: Option<i128>,
) -> PyResult<(String, Bound<'py, PyBytes>)> {
    let scaling = asdf_core::unstable::FitsScaling {
        bitpix,
        bscale,
        bzero,
        bzero_int,
        blank,
    };
    let (dtype, out) = py
        .detach(|| asdf_core::unstable::scale_fits_image(&scaling, data))
        .map_err(|e| PyValueError::new_err(format!("asdf_fits_scale: {e}")))?;
    Ok((dtype.to_numpy_str(), PyBytes::new(py, &out)))
}

/// `asdf_rs._fits_table(data, cards)`: the records astropy makes of the rows `data` of a
/// FITS binary table described by `cards` (`[keyword, value]` pairs: `NAXIS1`, `TFIELDS`,
/// `TFORMn`, `TTYPEn`, `TDIMn`, `TSCALn`, `TZEROn`; a value a string, an integer, a float,
/// a boolean or `None`), by asdf-core's own conversion: their numpy dtype (`descr` text,
/// big-endian fields) and bytes. `ValueError` for cards that describe no such table, data
/// that is no whole number of rows or too large a result. The GIL is released while
/// converting.
#[pyfunction]
#[pyo3(name = "_fits_table_rows")]
pub fn fits_table_rows<'py>(
    py: Python<'py>,
    data: &[u8],
    cards: Vec<(String, Bound<'py, PyAny>)>,
) -> PyResult<(String, Bound<'py, PyBytes>)> {
    use asdf_core::unstable::FitsCardValue as V;
    use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
    let bad = |k: &str| PyValueError::new_err(format!("asdf_fits_table: card {k}: bad value"));
    let mut parsed = Vec::with_capacity(cards.len().min(1 << 14));
    for (k, v) in &cards {
        let value = if v.is_none() {
            V::Undefined
        } else if v.is_instance_of::<PyBool>() {
            V::Bool(v.extract().map_err(|_| bad(k))?)
        } else if v.is_instance_of::<PyInt>() {
            V::Int(v.extract().map_err(|_| bad(k))?)
        } else if v.is_instance_of::<PyFloat>() {
            V::Float(v.extract().map_err(|_| bad(k))?)
        } else if v.is_instance_of::<PyString>() {
            V::Str(v.extract().map_err(|_| bad(k))?)
        } else {
            return Err(bad(k));
        };
        parsed.push((k.clone(), value));
    }
    let (dtype, out) = py
        .detach(|| asdf_core::unstable::convert_fits_table(&parsed, data))
        .map_err(|e| PyValueError::new_err(format!("asdf_fits_table: {e}")))?;
    Ok((dtype.to_numpy_str(), PyBytes::new(py, &out)))
}

/// `asdf_rs._chain(data, nbytes, byteorder)`: the stored bytes of a block of an ASDF 0.1.0
/// encoding chain (the chain's YAML, then the encoded data) decoded by asdf-core's chain
/// decoder (`zlib`, `tile`, `quantize` steps) into exactly `nbytes` bytes; `byteorder`
/// (`"<"`, `">"`) is that of the floats a `quantize` step makes. `ValueError` for a bad
/// configuration or `nbytes` over the limit, `AsdfError` for bytes that are no such chain.
/// The GIL is released while decoding.
#[pyfunction]
#[pyo3(name = "_chain")]
pub fn chain<'py>(
    py: Python<'py>,
    data: &[u8],
    nbytes: u64,
    byteorder: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    use asdf_core::array::ByteOrder;
    let order = match byteorder {
        "<" => ByteOrder::Little,
        ">" => ByteOrder::Big,
        other => {
            return Err(PyValueError::new_err(format!(
                "asdf_chain: byteorder {other:?}, not \"<\" or \">\""
            )))
        }
    };
    if nbytes > MAX_EXPANDED_BYTES {
        return Err(PyValueError::new_err(format!(
            "asdf_chain: {nbytes} bytes, more than the limit of {MAX_EXPANDED_BYTES}"
        )));
    }
    let out = py
        .detach(|| asdf_core::unstable::decode_chain(data, nbytes, MAX_EXPANDED_BYTES, order))
        .map_err(|e| AsdfError::new_err(format!("asdf_chain: {e}")))?;
    Ok(PyBytes::new(py, &out))
}

/// `asdf_rs._inline(data, pointer, dtype, shape, part="data")`: the inline array at the
/// JSON `pointer` of the ASDF file whose first bytes (its header and YAML tree) are `data`,
/// parsed from the tree's text: its C-order bytes in numpy's `dtype` (which must be the
/// array's: `<i2`, `>U3`, a record's `descr`) or, for `part="nulls"`, one byte (0 or 1) per
/// element saying which were `null` in the tree. `AsdfError` when the text is no ASDF
/// tree, the node no inline array, or its dtype or shape are not the ones given. No other
/// file is opened (external blocks and `$ref`s to files fail).
#[pyfunction]
#[pyo3(name = "_inline", signature = (data, pointer, dtype, shape, part = "data"))]
pub fn inline<'py>(
    py: Python<'py>,
    data: &[u8],
    pointer: &str,
    dtype: &str,
    shape: Vec<usize>,
    part: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    if part != "data" && part != "nulls" {
        return Err(PyValueError::new_err(format!(
            "asdf_inline: part {part:?}, not \"data\" or \"nulls\""
        )));
    }
    let bytes = data.to_vec();
    let out = py
        .detach(|| inline_bytes(bytes, pointer, dtype, &shape, part == "nulls"))
        .map_err(|e| AsdfError::new_err(format!("asdf_inline {pointer}: {e}")))?;
    Ok(PyBytes::new(py, &out))
}

fn inline_bytes(
    bytes: Vec<u8>,
    pointer: &str,
    dtype: &str,
    shape: &[usize],
    nulls: bool,
) -> Result<Vec<u8>, String> {
    let file = AsdfFile::options()
        .external_policy(ExternalPolicy::None)
        .validate(false)
        .open_bytes(bytes, "")
        .map_err(|e| asdf_core::display_chain(&e))?;
    let node = file
        .get(pointer)
        .ok_or_else(|| "no node there".to_string())?;
    let meta = NdArrayMeta::from_node(node, pointer).map_err(|e| e.to_string())?;
    if !matches!(meta.source, ArraySource::Inline(_)) {
        return Err("not an inline array".into());
    }
    let a = file
        .dyn_array_of(node, pointer)
        .map_err(|e| asdf_core::display_chain(&e))?;
    let found = a.dtype.to_numpy_str();
    if found != dtype || a.shape != shape {
        return Err(format!(
            "an array of {found} and shape {:?}, not {dtype} and {shape:?}",
            a.shape
        ));
    }
    if !nulls {
        return Ok(a.data);
    }
    let mask = asdf_core::unstable::inline_null_mask(&meta, pointer).map_err(|e| e.to_string())?;
    Ok(match mask {
        Some(m) if m.shape() == shape => m.iter().map(|&b| u8::from(b)).collect(),
        Some(m) => return Err(format!("a null mask of shape {:?}", m.shape())),
        None => vec![0; a.element_count()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(data: &[u8], offset: u64, shape: &[u64], strides: &[i64], item: u64) -> Vec<u8> {
        let v = check_view(data.len(), offset, shape, strides, item).unwrap();
        gather(data, &v).unwrap()
    }

    #[test]
    fn gathers_reversed_strided_and_broadcast_views() {
        let data: Vec<u8> = (0..24).collect();
        // 2x3 of 2-byte items, rows reversed, every other column: numpy's a[::-1, ::2]
        // of a 2x6 array of 2-byte items: offset 12, strides (-12, 4)
        assert_eq!(
            view(&data, 12, &[2, 3], &[-12, 4], 2),
            [12, 13, 16, 17, 20, 21, 0, 1, 4, 5, 8, 9]
        );
        assert_eq!(view(&data, 4, &[3, 2], &[0, 1], 1), [4, 5, 4, 5, 4, 5]);
        assert_eq!(view(&data, 5, &[], &[], 3), [5, 6, 7]);
        assert_eq!(
            view(&data, 2, &[2, 2], &[4, 2], 2),
            [2, 3, 4, 5, 6, 7, 8, 9]
        );
        assert!(view(&data, 99, &[0, 3], &[6, 2], 2).is_empty());
    }

    #[test]
    fn swaps_ranges_of_every_item_and_refuses_bad_ones() {
        assert_eq!(check_swaps(8, 4, &[(0, 2), (2, 2)]), Ok(4));
        assert!(check_swaps(7, 4, &[]).unwrap_err().contains("whole number"));
        assert!(check_swaps(8, 0, &[]).unwrap_err().contains("itemsize"));
        assert!(check_swaps(8, 4, &[(3, 2)])
            .unwrap_err()
            .contains("outside"));
        assert!(check_swaps(8, 4, &[(u64::MAX, 2)])
            .unwrap_err()
            .contains("outside"));
    }

    #[test]
    fn refuses_views_outside_the_bytes_and_huge_outputs() {
        let e = |o, s: &[u64], st: &[i64], i| check_view(24, o, s, st, i).unwrap_err();
        assert!(e(23, &[1], &[1], 2).contains("outside"));
        assert!(e(0, &[2], &[-1], 1).contains("outside"));
        assert!(e(0, &[u64::MAX, 2], &[0, 0], 8).contains("overflows"));
        assert!(e(0, &[1 << 40], &[0], 1).contains("limit"));
        assert!(e(0, &[2], &[1, 1], 1).contains("strides"));
        assert!(e(0, &[2], &[1], 0).contains("itemsize"));
        assert!(e(u64::MAX, &[1], &[1], 1).contains("outside"));
        assert!(e(0, &[3], &[i64::MAX], 1).contains("outside"));
        assert!(e(0, &[3], &[i64::MIN], 1).contains("outside"));
        assert!(e(0, &vec![1; 65], &vec![0; 65], 1).contains("axes"));
    }
}
