//! An array's statistics on demand (`/api/stats`): element count, finite and NaN counts, and
//! min, max and mean of the finite values, as numpy's `nanmin`, `nanmax`, `nanmean` over the
//! finite elements. Every element counts, masked ones included (the summary says when an
//! array is masked).

use asdf_core::array::{DType, Dim, DynArray, Element, NdArrayMeta, ScalarType};
use asdf_core::AsdfFile;
use serde::Serialize;

use super::http::HttpError;

/// Arrays of more decoded bytes are not summed for the page (they would be read whole).
const MAX_BYTES: u64 = 2 << 30;

/// What `/api/stats` answers. `min`, `max` and `mean` are null when no value is finite.
#[derive(Serialize, Debug, PartialEq)]
pub struct Stats {
    pub path: String,
    pub datatype: String,
    pub count: u64,
    pub finite: u64,
    pub nan: u64,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
}

/// The statistics of the array at the JSON pointer `path`.
pub fn of_array(file: &AsdfFile, path: &str) -> Result<Stats, HttpError> {
    let node = file
        .get(path)
        .ok_or_else(|| HttpError::not_found(format!("no node at {path:?}")))?;
    if !crate::summary::is_array(node) {
        return Err(HttpError::unprocessable(format!(
            "{path:?} is not an array"
        )));
    }
    // refused before anything is read when the descriptor says it is too large
    let too_large = |bytes: u64| {
        HttpError::too_large(format!(
            "{path}: {bytes} bytes; statistics are computed for arrays of at most {MAX_BYTES} bytes"
        ))
    };
    if let Some(bytes) = declared_bytes(file, node, path).filter(|&b| b > MAX_BYTES) {
        return Err(too_large(bytes));
    }
    let array = file
        .dyn_array(path)
        .map_err(|e| HttpError::unprocessable(crate::chain(&e)))?;
    if array.data.len() as u64 > MAX_BYTES {
        return Err(too_large(array.data.len() as u64));
    }
    summarize(&array, path)
}

/// The decoded bytes an array's descriptor declares (shape times item size), when it
/// declares them (not for streamed or inferred arrays); saturating.
fn declared_bytes(file: &AsdfFile, node: &asdf_core::Node, path: &str) -> Option<u64> {
    let (itemsize, dims): (usize, Vec<u64>) = if asdf_core::file::is_zarr(node) {
        let (dtype, shape) = file.zarr_info(node, path).ok()?;
        (dtype.itemsize(), shape.iter().map(|&d| d as u64).collect())
    } else {
        let meta = NdArrayMeta::from_node(node, path).ok()?;
        let dims = meta
            .shape?
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => Some(*n),
                _ => None,
            })
            .collect::<Option<Vec<u64>>>()?;
        (meta.dtype?.itemsize(), dims)
    };
    Some(
        dims.iter()
            .fold(itemsize as u64, |acc, &d| acc.saturating_mul(d)),
    )
}

/// Sums of one array's values.
#[derive(Default)]
struct Acc {
    count: u64,
    finite: u64,
    nan: u64,
    min: f64,
    max: f64,
    sum: f64,
}

impl Acc {
    fn push(&mut self, x: f64) {
        self.count += 1;
        if x.is_nan() {
            self.nan += 1;
        } else if x.is_finite() {
            if self.finite == 0 {
                self.min = x;
                self.max = x;
            } else {
                self.min = self.min.min(x);
                self.max = self.max.max(x);
            }
            self.finite += 1;
            self.sum += x;
        }
    }
}

fn fold<T: Element + Copy>(
    a: &DynArray,
    acc: &mut Acc,
    f: impl Fn(T) -> f64,
) -> Result<(), String> {
    let values = a.to_array::<T>().map_err(|e| e.to_string())?;
    for &v in values.iter() {
        acc.push(f(v));
    }
    Ok(())
}

/// Statistics of a numeric array; strings, records and complex numbers have none (422).
pub fn summarize(a: &DynArray, path: &str) -> Result<Stats, HttpError> {
    let DType::Scalar { ty, .. } = &a.dtype else {
        return Err(HttpError::unprocessable(format!(
            "{path}: a record array ({}) has no statistics; its fields are shown in the tree",
            a.dtype
        )));
    };
    let mut acc = Acc::default();
    let done = match ty {
        ScalarType::Int8 => fold::<i8>(a, &mut acc, f64::from),
        ScalarType::Int16 => fold::<i16>(a, &mut acc, f64::from),
        ScalarType::Int32 => fold::<i32>(a, &mut acc, f64::from),
        ScalarType::Int64 => fold::<i64>(a, &mut acc, |v| v as f64),
        ScalarType::UInt8 => fold::<u8>(a, &mut acc, f64::from),
        ScalarType::UInt16 => fold::<u16>(a, &mut acc, f64::from),
        ScalarType::UInt32 => fold::<u32>(a, &mut acc, f64::from),
        ScalarType::UInt64 => fold::<u64>(a, &mut acc, |v| v as f64),
        ScalarType::Float16 => fold::<half::f16>(a, &mut acc, f64::from),
        ScalarType::Float32 => fold::<f32>(a, &mut acc, f64::from),
        ScalarType::Float64 => fold::<f64>(a, &mut acc, |v| v),
        ScalarType::Bool8 => fold::<bool>(a, &mut acc, |v| f64::from(u8::from(v))),
        other => {
            return Err(HttpError::unprocessable(format!(
                "{path}: {} values have no min, max or mean",
                other.name()
            )))
        }
    };
    done.map_err(|e| HttpError::unprocessable(format!("{path}: {e}")))?;
    let some = acc.finite > 0;
    Ok(Stats {
        path: path.to_string(),
        datatype: a.dtype.to_string(),
        count: acc.count,
        finite: acc.finite,
        nan: acc.nan,
        min: some.then_some(acc.min),
        max: some.then_some(acc.max),
        mean: some.then(|| acc.sum / acc.finite as f64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use asdf_core::array::ByteOrder;

    fn f64s(values: &[f64], order: ByteOrder) -> DynArray {
        let data = values
            .iter()
            .flat_map(|v| match order {
                ByteOrder::Big => v.to_be_bytes(),
                _ => v.to_le_bytes(),
            })
            .collect();
        DynArray {
            dtype: DType::Scalar {
                ty: ScalarType::Float64,
                byteorder: order,
            },
            shape: vec![values.len()],
            data,
        }
    }

    #[test]
    fn nan_and_infinities_are_counted_apart() {
        let a = f64s(&[1.0, f64::NAN, 3.0, f64::INFINITY, -2.0], ByteOrder::Big);
        let s = summarize(&a, "/x").unwrap();
        assert_eq!((s.count, s.finite, s.nan), (5, 3, 1));
        assert_eq!((s.min, s.max), (Some(-2.0), Some(3.0)));
        assert_eq!(s.mean, Some(2.0 / 3.0));
        let none = summarize(&f64s(&[f64::NAN], ByteOrder::Little), "/y").unwrap();
        assert_eq!((none.min, none.max, none.mean), (None, None, None));
    }

    #[test]
    fn strings_have_none() {
        let a = DynArray {
            dtype: DType::Scalar {
                ty: ScalarType::Ascii(2),
                byteorder: ByteOrder::Little,
            },
            shape: vec![1],
            data: b"ab".to_vec(),
        };
        assert_eq!(summarize(&a, "/s").unwrap_err().status, 422);
    }
}
