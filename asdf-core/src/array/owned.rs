//! [`WriteArray`]: array data to be written, borrowed from the caller where possible.

use std::borrow::Cow;

use ndarray::{ArrayBase, ArrayView, Data, Dimension, OwnedRepr};

use crate::array::{ByteOrder, DType, DynArray, Element};

/// Bytes of an array in C order, owned or borrowed.
enum Bytes<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
    /// An owned element vector kept as is (no copy), with the element range it covers.
    Typed(Box<dyn TypedBytes>),
}

/// Owned elements seen as bytes.
trait TypedBytes: Send + Sync {
    fn bytes(&self) -> &[u8];
}

struct TypedVec<T: Element> {
    vec: Vec<T>,
    start: usize,
    len: usize,
}

impl<T: Element> TypedBytes for TypedVec<T> {
    fn bytes(&self) -> &[u8] {
        let elems = self
            .vec
            .get(self.start..self.start.saturating_add(self.len))
            .unwrap_or_default();
        elements_as_bytes(elems)
    }
}

/// The bytes of a slice of elements, in native byte order (a safe cast: `Element` is sealed to
/// plain-old-data types, see `Element::as_bytes`).
fn elements_as_bytes<T: Element>(elems: &[T]) -> &[u8] {
    T::as_bytes(elems)
}

/// Array data to write: datatype, shape and the elements in C order in the datatype's byte
/// order. Built from `ndarray` arrays of every [`Element`] type (borrowed without copying
/// when they are in standard layout, taken over without copying when owned) and from
/// [`DynArray`] (strings, records, any byte order).
///
/// ```
/// use asdf_core::write::WriteArray;
/// let a = ndarray::arr2(&[[1.0f64, 2.0], [3.0, 4.0]]);
/// let w = WriteArray::from(&a); // borrows `a`'s buffer
/// assert_eq!(w.shape(), &[2, 2]);
/// assert_eq!(w.bytes().len(), 32);
/// ```
pub struct WriteArray<'a> {
    dtype: DType,
    shape: Vec<usize>,
    data: Bytes<'a>,
}

impl std::fmt::Debug for WriteArray<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteArray")
            .field("dtype", &self.dtype)
            .field("shape", &self.shape)
            .field("bytes", &self.bytes().len())
            .finish()
    }
}

impl<'a> WriteArray<'a> {
    /// An array from raw bytes: `data` holds `product(shape)` elements of `dtype` in C order.
    /// Returns `None` when the length does not match.
    pub fn from_bytes(dtype: DType, shape: Vec<usize>, data: Cow<'a, [u8]>) -> Option<Self> {
        let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
        if count.checked_mul(dtype.itemsize())? != data.len() {
            return None;
        }
        let data = match data {
            Cow::Borrowed(b) => Bytes::Borrowed(b),
            Cow::Owned(v) => Bytes::Owned(v),
        };
        Some(WriteArray { dtype, shape, data })
    }

    /// The datatype (with byte order).
    pub fn dtype(&self) -> &DType {
        &self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of elements.
    pub fn element_count(&self) -> usize {
        self.shape.iter().product()
    }

    /// The elements in C order, in the datatype's byte order.
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            Bytes::Borrowed(b) => b,
            Bytes::Owned(v) => v,
            Bytes::Typed(t) => t.bytes(),
        }
    }

    /// The same data as a [`DynArray`] (copies the bytes).
    pub fn to_dyn(&self) -> DynArray {
        DynArray {
            dtype: self.dtype.clone(),
            shape: self.shape.clone(),
            data: self.bytes().to_vec(),
        }
    }
}

fn native<T: Element>() -> DType {
    DType::scalar(T::SCALAR, ByteOrder::native())
}

impl<'a, T, S, D> From<&'a ArrayBase<S, D>> for WriteArray<'a>
where
    T: Element,
    S: Data<Elem = T>,
    D: Dimension,
{
    /// Borrows the buffer when the array is in standard (C) layout; copies it otherwise.
    fn from(a: &'a ArrayBase<S, D>) -> Self {
        let shape = a.shape().to_vec();
        let data = match a.as_slice() {
            Some(s) => Bytes::Borrowed(elements_as_bytes(s)),
            None => {
                let v: Vec<T> = a.iter().copied().collect();
                let len = v.len();
                Bytes::Typed(Box::new(TypedVec {
                    vec: v,
                    start: 0,
                    len,
                }))
            }
        };
        WriteArray {
            dtype: native::<T>(),
            shape,
            data,
        }
    }
}

impl<T, D> From<ArrayBase<OwnedRepr<T>, D>> for WriteArray<'_>
where
    T: Element,
    D: Dimension,
{
    /// Takes the buffer over without copying when the array is in standard layout.
    fn from(a: ArrayBase<OwnedRepr<T>, D>) -> Self {
        let shape = a.shape().to_vec();
        let len = a.len();
        let data = if a.is_standard_layout() {
            let (vec, off) = a.into_raw_vec_and_offset();
            Bytes::Typed(Box::new(TypedVec {
                vec,
                start: off.unwrap_or(0),
                len,
            }))
        } else {
            let vec: Vec<T> = a.iter().copied().collect();
            Bytes::Typed(Box::new(TypedVec { vec, start: 0, len }))
        };
        WriteArray {
            dtype: native::<T>(),
            shape,
            data,
        }
    }
}

impl<'a, T, D> From<ArrayView<'a, T, D>> for WriteArray<'a>
where
    T: Element,
    D: Dimension,
{
    /// Borrows the viewed buffer for its whole lifetime when in standard layout; copies
    /// otherwise.
    fn from(a: ArrayView<'a, T, D>) -> Self {
        let shape = a.shape().to_vec();
        let data = match a.to_slice() {
            Some(s) => Bytes::Borrowed(elements_as_bytes(s)),
            None => {
                let v: Vec<T> = a.iter().copied().collect();
                let len = v.len();
                Bytes::Typed(Box::new(TypedVec {
                    vec: v,
                    start: 0,
                    len,
                }))
            }
        };
        WriteArray {
            dtype: native::<T>(),
            shape,
            data,
        }
    }
}

impl From<DynArray> for WriteArray<'_> {
    fn from(a: DynArray) -> Self {
        WriteArray {
            dtype: a.dtype,
            shape: a.shape,
            data: Bytes::Owned(a.data),
        }
    }
}

impl<'a> From<&'a DynArray> for WriteArray<'a> {
    fn from(a: &'a DynArray) -> Self {
        WriteArray {
            dtype: a.dtype.clone(),
            shape: a.shape.clone(),
            data: Bytes::Borrowed(&a.data),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::ScalarType;
    use ndarray::{arr2, s, Array2};

    #[test]
    fn standard_layout_is_borrowed() {
        let a = arr2(&[[1u16, 2], [3, 4]]);
        let w = WriteArray::from(&a);
        assert_eq!(w.bytes().as_ptr(), a.as_ptr().cast::<u8>());
        assert_eq!(
            w.dtype(),
            &DType::scalar(ScalarType::UInt16, ByteOrder::native())
        );
    }

    #[test]
    fn strided_view_is_copied_in_c_order() {
        let a = arr2(&[[1u8, 2, 3], [4, 5, 6]]);
        let v = a.slice(s![.., ..;2]);
        let w = WriteArray::from(&v);
        assert_eq!(w.bytes(), &[1, 3, 4, 6]);
        assert_eq!(w.shape(), &[2, 2]);
        let t: Vec<u8> = a.t().iter().copied().collect();
        let at = a.t();
        let w = WriteArray::from(&at);
        assert_eq!(w.bytes(), &t[..]);
        assert_eq!(w.bytes(), &[1, 4, 2, 5, 3, 6]);
    }

    #[test]
    fn views_by_value_borrow_the_data() {
        let a = arr2(&[[1u8, 2], [3, 4]]);
        let w = {
            let v = a.view();
            WriteArray::from(v.slice_move(s![1.., ..]))
        };
        assert_eq!(w.bytes(), &[3, 4]);
        assert_eq!(w.bytes().as_ptr(), a.as_ptr().wrapping_add(2));
    }

    #[test]
    fn owned_is_taken_over() {
        let a: Array2<i32> = Array2::from_shape_vec((2, 2), vec![1, -1, 2, -2]).unwrap();
        let p = a.as_ptr().cast::<u8>();
        let w = WriteArray::from(a);
        assert_eq!(w.bytes().as_ptr(), p);
        assert_eq!(w.bytes().len(), 16);
    }

    #[test]
    fn from_bytes_checks_length() {
        let dt = DType::scalar(ScalarType::Float64, ByteOrder::Big);
        assert!(WriteArray::from_bytes(dt.clone(), vec![2], Cow::Owned(vec![0; 15])).is_none());
        assert!(WriteArray::from_bytes(dt, vec![2], Cow::Owned(vec![0; 16])).is_some());
    }
}
