//! [`Masked`] arrays (numpy's masked arrays) and arrays of `String` (`ascii` and `ucs4`
//! arrays) as typed values.

use std::borrow::Cow;

use ndarray::{Array, ArrayBase, ArrayD, Data, Dimension, IxDyn};

use super::{ConvertError, ConvertErrorKind, FromAsdf, FromContext, ToAsdf, ToContext};
use crate::array::{
    self, ArraySource, ByteOrder, DType, DynArray, Element, NdArrayMeta, ScalarType, WriteArray,
};
use crate::yaml::{Node, Value};

/// An array with a mask, as numpy's masked arrays: `mask[i]` is `true` where `data[i]` is
/// missing (masked). `mask` has `data`'s shape.
///
/// Read from an ndarray whatever way its file marks missing values, as python asdf reads
/// it: a `mask` array (any nonzero element masks), a `mask` number (elements equal to it are
/// masked; for floats, within numpy's `masked_values` tolerance, and a NaN mask masks the
/// NaNs), `null`s in inline data, or no mask at all (nothing masked). Written as the data
/// with a `bool8` mask array beside it, in the same storage, as python writes a
/// `numpy.ma.MaskedArray`.
///
/// ```
/// use asdf_core::convert::Masked;
/// use asdf_core::write::{WriteOptions, Writer};
/// use asdf_core::{tree, AsdfFile};
///
/// let flux = Masked::new(
///     ndarray::arr1(&[1.5f32, -99.0, 3.0]).into_dyn(),
///     ndarray::arr1(&[false, true, false]).into_dyn(),
/// ).expect("same shapes");
/// let mut w = Writer::new(WriteOptions::default());
/// let node = w.add_value(&flux)?;
/// let file = AsdfFile::from_bytes(w.write_to_vec(&tree!({"flux": node}))?)?;
/// let back: Masked<f32> = file.read_as("/flux")?;
/// assert_eq!(back, flux);
/// assert_eq!(back.count_masked(), 1);
/// assert_eq!(back.compressed(), vec![1.5, 3.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Masked<T, D: Dimension = IxDyn> {
    /// The values; masked elements hold whatever the file stored there.
    pub data: Array<T, D>,
    /// `true` where the value is missing; the shape of `data`.
    pub mask: Array<bool, D>,
}

impl<T, D: Dimension> Masked<T, D> {
    /// `data` with `mask`; `None` when their shapes differ.
    pub fn new(data: Array<T, D>, mask: Array<bool, D>) -> Option<Self> {
        (data.shape() == mask.shape()).then_some(Masked { data, mask })
    }

    /// `data` with nothing masked.
    pub fn unmasked(data: Array<T, D>) -> Self {
        let mask = Array::from_elem(data.raw_dim(), false);
        Masked { data, mask }
    }

    /// How many elements are masked.
    pub fn count_masked(&self) -> usize {
        self.mask.iter().filter(|&&m| m).count()
    }

    /// The values that are not masked, in C order (numpy's `compressed()`).
    pub fn compressed(&self) -> Vec<T>
    where
        T: Clone,
    {
        self.data
            .iter()
            .zip(self.mask.iter())
            .filter(|(_, &m)| !m)
            .map(|(v, _)| v.clone())
            .collect()
    }

    /// The values with every masked element replaced by `fill` (numpy's `filled()`).
    pub fn filled(&self, fill: T) -> Array<T, D>
    where
        T: Clone,
    {
        let mut out = self.data.clone();
        out.zip_mut_with(&self.mask, |v, &m| {
            if m {
                *v = fill.clone();
            }
        });
        out
    }
}

impl<T: Element, D: Dimension> ToAsdf for Masked<T, D> {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        if self.data.shape() != self.mask.shape() {
            return Err(ctx.error(ConvertErrorKind::Custom(format!(
                "the mask's shape {:?} is not the data's {:?}",
                self.mask.shape(),
                self.data.shape()
            ))));
        }
        ctx.add_masked_array(WriteArray::from(&self.data), WriteArray::from(&self.mask))
    }
}

impl<T: Element + MaskValue, D: Dimension> FromAsdf for Masked<T, D> {
    fn accepts_tag(tag: Option<&str>) -> bool {
        super::impls::is_core_tag(tag, "ndarray")
    }

    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        let data: ArrayD<T> = Array::<T, IxDyn>::from_asdf(node, ctx)?;
        let mask = match node.get("mask") {
            Some(m) if m.is_ndarray() => {
                let dynamic = ctx.key("mask", |ctx| ctx.load_array(m))?;
                let mask = ctx.key("mask", |ctx| nonzero(&dynamic, ctx))?;
                if mask.shape() != data.shape() {
                    return Err(ctx.error(ConvertErrorKind::Expected {
                        expected: format!("a mask of shape {:?}", data.shape()),
                        found: format!("shape {:?}", mask.shape()),
                    }));
                }
                mask
            }
            Some(m) => {
                let value = match m.value() {
                    Value::Int(i) => i.as_i128().map(|v| v as f64),
                    Value::Float(f) => Some(*f),
                    _ => None,
                };
                let value = value.ok_or_else(|| {
                    ctx.error(ConvertErrorKind::Expected {
                        expected: "a mask array or number".into(),
                        found: super::describe(m),
                    })
                })?;
                data.mapv(|v| v.is_masked_by(value))
            }
            None => {
                let meta = NdArrayMeta::from_node(node, &ctx.path())
                    .map_err(|e| ctx.error(ConvertErrorKind::Array(Box::new(e))))?;
                let nulls = match meta.source {
                    ArraySource::Inline(_) => array::inline_null_mask(&meta, &ctx.path())
                        .map_err(|e| ctx.error(ConvertErrorKind::Array(Box::new(e))))?,
                    _ => None,
                };
                nulls.unwrap_or_else(|| ArrayD::from_elem(data.raw_dim(), false))
            }
        };
        let ndim = data.ndim();
        let dims = |e: ndarray::ShapeError| {
            let _ = e;
            ctx.error(ConvertErrorKind::Expected {
                expected: format!("an array of {} dimensions", D::NDIM.unwrap_or(ndim)),
                found: format!("{ndim} dimensions"),
            })
        };
        Ok(Masked {
            data: data.into_dimensionality::<D>().map_err(dims)?,
            mask: mask.into_dimensionality::<D>().map_err(dims)?,
        })
    }
}

/// Whether a mask array's elements are nonzero (numpy's `astype(bool)`).
fn nonzero(a: &DynArray, ctx: &FromContext<'_>) -> Result<ArrayD<bool>, ConvertError> {
    nonzero_kind(a).map_err(|k| ctx.error(k))
}

/// [`nonzero`] without a conversion context (for the file layer's masked regions).
pub(crate) fn nonzero_kind(a: &DynArray) -> Result<ArrayD<bool>, ConvertErrorKind> {
    let ty = match &a.dtype {
        DType::Scalar { ty, .. } => *ty,
        DType::Record(_) => ScalarType::Ascii(0),
    };
    let err = |e: array::ArrayError| ConvertErrorKind::Array(Box::new(e));
    Ok(match ty {
        ScalarType::Bool8 => a.to_array::<bool>().map_err(err)?,
        ScalarType::Float16 => a
            .to_array::<half::f16>()
            .map_err(err)?
            .mapv(|v| v != half::f16::ZERO),
        ScalarType::Float32 => a.to_array::<f32>().map_err(err)?.mapv(|v| v != 0.0),
        ScalarType::Float64 => a.to_array::<f64>().map_err(err)?.mapv(|v| v != 0.0),
        ScalarType::Int8
        | ScalarType::Int16
        | ScalarType::Int32
        | ScalarType::Int64
        | ScalarType::UInt8
        | ScalarType::UInt16
        | ScalarType::UInt32
        | ScalarType::UInt64 => {
            let size = ty.itemsize().max(1);
            let v: Vec<bool> = a
                .data
                .chunks_exact(size)
                .map(|c| c.iter().any(|&b| b != 0))
                .collect();
            ArrayD::from_shape_vec(IxDyn(&a.shape), v)
                .map_err(|_| ConvertErrorKind::Custom("the mask's shape and data differ".into()))?
        }
        _ => {
            return Err(ConvertErrorKind::Expected {
                expected: "a mask of booleans, integers or floats".into(),
                found: format!("a mask of {}", a.dtype.name()),
            })
        }
    })
}

/// How a number given as an ndarray's `mask` masks an element (python asdf reads it with
/// `numpy.ma.masked_values`: exact equality for integers; for floats `isclose` with
/// rtol 1e-5 and atol 1e-8, and a NaN mask masks the NaNs).
pub trait MaskValue {
    /// Whether this element is masked by the mask value `mask`.
    fn is_masked_by(&self, mask: f64) -> bool;
}

macro_rules! mask_int {
    ($($t:ty),*) => {$(
        impl MaskValue for $t {
            fn is_masked_by(&self, mask: f64) -> bool {
                mask.fract() == 0.0 && (*self as f64) == mask
            }
        }
    )*};
}
mask_int!(i8, i16, i32, i64, u8, u16, u32, u64);

fn float_masked(v: f64, mask: f64) -> bool {
    if mask.is_nan() {
        return v.is_nan();
    }
    v == mask || (v - mask).abs() <= 1e-8 + 1e-5 * mask.abs()
}

impl MaskValue for f64 {
    fn is_masked_by(&self, mask: f64) -> bool {
        float_masked(*self, mask)
    }
}

impl MaskValue for f32 {
    fn is_masked_by(&self, mask: f64) -> bool {
        float_masked(f64::from(*self), mask)
    }
}

impl MaskValue for half::f16 {
    fn is_masked_by(&self, mask: f64) -> bool {
        float_masked(self.to_f64(), mask)
    }
}

impl MaskValue for bool {
    fn is_masked_by(&self, mask: f64) -> bool {
        f64::from(u8::from(*self)) == mask
    }
}

// ---------------------------------------------------------------- strings

/// The `ucs4` array of strings (as python writes numpy `str` arrays): as wide as the longest
/// string in characters (at least 1), little-endian.
fn strings_to_asdf<'a, S, D>(
    a: &ArrayBase<S, D>,
    ctx: &mut ToContext<'_, 'a>,
) -> Result<Node, ConvertError>
where
    S: Data<Elem = String>,
    D: Dimension,
{
    let width = a
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .max(1);
    let mut bytes = Vec::with_capacity(a.len().saturating_mul(width * 4));
    for s in a.iter() {
        if s.contains('\0') {
            return Err(ctx.error(ConvertErrorKind::Custom(format!(
                "the string {s:?} holds a NUL, which a ucs4 array cannot keep (NULs pad it)"
            ))));
        }
        let n = s.chars().count();
        for c in s.chars() {
            bytes.extend_from_slice(&u32::from(c).to_le_bytes());
        }
        bytes.resize(bytes.len() + (width - n) * 4, 0);
    }
    let dtype = DType::Scalar {
        ty: ScalarType::Ucs4(width),
        byteorder: ByteOrder::Little,
    };
    let array = WriteArray::from_bytes(dtype, a.shape().to_vec(), Cow::Owned(bytes))
        .ok_or_else(|| ctx.error(ConvertErrorKind::Custom("string array too large".into())))?;
    ctx.add_array(array)
}

/// The element types of ndarray values ([`ToAsdf`] and [`FromAsdf`] for `ndarray` arrays):
/// every [`Element`] (numbers, `bool`, complex) and `String` (an `ascii` or `ucs4` array,
/// trailing NULs removed on read as numpy removes them; written as `ucs4`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the element of an ASDF array",
    note = "ndarray values hold numbers, `bool`, `num_complex::Complex`, `half::f16` or `String`; for records read a `DynArray`"
)]
pub trait ArrayItem: Sized {
    /// Writes an array of this element type.
    #[doc(hidden)]
    fn write_array<'a, S: Data<Elem = Self>, D: Dimension>(
        a: &'a ArrayBase<S, D>,
        ctx: &mut ToContext<'_, 'a>,
    ) -> Result<Node, ConvertError>;

    /// Reads an array of this element type from a loaded array.
    #[doc(hidden)]
    fn read_array(a: DynArray, ctx: &FromContext<'_>) -> Result<ArrayD<Self>, ConvertError>;
}

impl<T: Element> ArrayItem for T {
    fn write_array<'a, S: Data<Elem = Self>, D: Dimension>(
        a: &'a ArrayBase<S, D>,
        ctx: &mut ToContext<'_, 'a>,
    ) -> Result<Node, ConvertError> {
        ctx.add_array(WriteArray::from(a))
    }

    fn read_array(a: DynArray, ctx: &FromContext<'_>) -> Result<ArrayD<Self>, ConvertError> {
        a.to_array::<T>()
            .map_err(|e| ctx.error(ConvertErrorKind::Array(Box::new(e))))
    }
}

impl ArrayItem for String {
    fn write_array<'a, S: Data<Elem = Self>, D: Dimension>(
        a: &'a ArrayBase<S, D>,
        ctx: &mut ToContext<'_, 'a>,
    ) -> Result<Node, ConvertError> {
        strings_to_asdf(a, ctx)
    }

    fn read_array(a: DynArray, ctx: &FromContext<'_>) -> Result<ArrayD<Self>, ConvertError> {
        a.strings()
            .map_err(|e| ctx.error(ConvertErrorKind::Array(Box::new(e))))
    }
}
