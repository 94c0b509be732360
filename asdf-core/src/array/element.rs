//! [`Element`]: the Rust types an array can be read as, and [`DynArray::to_array`].

use half::f16;
use ndarray::{ArrayD, IxDyn};
use num_complex::Complex;

use super::{ArrayError, ByteOrder, DType, DynArray, ScalarType};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that array elements can be read as: `i8`…`i64`, `u8`…`u64`, `half::f16`,
/// `f32`, `f64`, `Complex<f32>`, `Complex<f64>` and `bool`. Sealed: the zero-copy
/// views ([`AsdfFile::try_view`](crate::AsdfFile::try_view)) rely on the properties of exactly
/// these types.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The ASDF scalar type this Rust type matches.
    const SCALAR: ScalarType;
    /// Whether every bit pattern of `size_of::<Self>()` bytes is a valid value (false for
    /// `bool`).
    #[doc(hidden)]
    const ANY_BIT_PATTERN: bool;
    /// Decodes packed elements stored in `order` (`bytes.len()` a multiple of the size).
    #[doc(hidden)]
    fn decode(bytes: &[u8], order: ByteOrder) -> Vec<Self>;
    /// The bytes of the elements, in native byte order.
    #[doc(hidden)]
    fn as_bytes(elems: &[Self]) -> &[u8];
    /// The bytes of the elements, to write into; `None` for a type some bit patterns of which
    /// are invalid (`bool`).
    #[doc(hidden)]
    fn as_bytes_mut(elems: &mut [Self]) -> Option<&mut [u8]>;
    /// The elements that `bytes` holds at addresses aligned for `Self`: how many bytes come
    /// before the first, and the elements (native byte order). `None` for `bool`.
    #[doc(hidden)]
    fn aligned_in(bytes: &[u8]) -> Option<(usize, &[Self])>;
    /// `len` zero elements, allocated zeroed ([`asdf_common::mem::zeroed_vec`]); `None`
    /// when the allocation fails.
    #[doc(hidden)]
    fn zeroed_vec(len: usize) -> Option<Vec<Self>>;
}

/// The [`Element`] methods of the types every bit pattern of which is valid (`bytemuck::Pod`:
/// no padding, no invalid values), by safe casts. They replaced `unsafe` pointer casts at no
/// measurable cost: each checks a length and an alignment once per call (`cargo bench -p
/// asdfrs-core --bench read -- --quick --only big_read_owned`, 128 MiB of f64, two runs each
/// on a shared machine: read 119 and 83 ms before, 96 and 100 ms after; the mmap view
/// 0.084 and 0.073 ms before, 0.090 and 0.111 ms after, all within the run-to-run noise).
macro_rules! pod_methods {
    () => {
        fn as_bytes(elems: &[Self]) -> &[u8] {
            bytemuck::cast_slice(elems)
        }
        fn as_bytes_mut(elems: &mut [Self]) -> Option<&mut [u8]> {
            Some(bytemuck::cast_slice_mut(elems))
        }
        fn aligned_in(bytes: &[u8]) -> Option<(usize, &[Self])> {
            let (prefix, items, _) = bytemuck::pod_align_to::<u8, Self>(bytes);
            Some((prefix.len(), items))
        }
        fn zeroed_vec(len: usize) -> Option<Vec<Self>> {
            asdf_common::mem::zeroed_vec::<Self>(len)
        }
    };
}

fn arr<const N: usize>(c: &[u8]) -> [u8; N] {
    c.try_into().unwrap_or([0; N])
}

macro_rules! prim {
    ($t:ty, $st:ident, $n:literal) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const SCALAR: ScalarType = ScalarType::$st;
            const ANY_BIT_PATTERN: bool = true;
            fn decode(bytes: &[u8], order: ByteOrder) -> Vec<Self> {
                let chunks = bytes.chunks_exact($n);
                match order {
                    ByteOrder::Little => chunks.map(|c| <$t>::from_le_bytes(arr(c))).collect(),
                    ByteOrder::Big => chunks.map(|c| <$t>::from_be_bytes(arr(c))).collect(),
                }
            }
            pod_methods!();
        }
    };
}

prim!(i8, Int8, 1);
prim!(i16, Int16, 2);
prim!(i32, Int32, 4);
prim!(i64, Int64, 8);
prim!(u8, UInt8, 1);
prim!(u16, UInt16, 2);
prim!(u32, UInt32, 4);
prim!(u64, UInt64, 8);
prim!(f16, Float16, 2);
prim!(f32, Float32, 4);
prim!(f64, Float64, 8);

macro_rules! cplx {
    ($t:ty, $st:ident, $n:literal) => {
        impl sealed::Sealed for Complex<$t> {}
        impl Element for Complex<$t> {
            const SCALAR: ScalarType = ScalarType::$st;
            const ANY_BIT_PATTERN: bool = true;
            fn decode(bytes: &[u8], order: ByteOrder) -> Vec<Self> {
                let chunks = bytes.chunks_exact(2 * $n);
                match order {
                    ByteOrder::Little => chunks
                        .map(|c| {
                            let (re, im) = c.split_at($n);
                            Complex::new(<$t>::from_le_bytes(arr(re)), <$t>::from_le_bytes(arr(im)))
                        })
                        .collect(),
                    ByteOrder::Big => chunks
                        .map(|c| {
                            let (re, im) = c.split_at($n);
                            Complex::new(<$t>::from_be_bytes(arr(re)), <$t>::from_be_bytes(arr(im)))
                        })
                        .collect(),
                }
            }
            pod_methods!();
        }
    };
}

cplx!(f32, Complex64, 4);
cplx!(f64, Complex128, 8);

impl sealed::Sealed for bool {}
impl Element for bool {
    const SCALAR: ScalarType = ScalarType::Bool8;
    const ANY_BIT_PATTERN: bool = false;
    fn decode(bytes: &[u8], _order: ByteOrder) -> Vec<Self> {
        bytes.iter().map(|&b| b != 0).collect()
    }
    fn as_bytes(elems: &[Self]) -> &[u8] {
        // `bool` is one byte, 0 or 1, with no padding (`bytemuck::NoUninit`).
        bytemuck::cast_slice(elems)
    }
    fn as_bytes_mut(_: &mut [Self]) -> Option<&mut [u8]> {
        None
    }
    fn aligned_in(_: &[u8]) -> Option<(usize, &[Self])> {
        None
    }
    fn zeroed_vec(len: usize) -> Option<Vec<Self>> {
        // all-zero bytes are `false` (`bytemuck::Zeroable`)
        asdf_common::mem::zeroed_vec::<Self>(len)
    }
}

impl DynArray {
    /// The array as an `ndarray` of `T`, converted to native byte order.
    ///
    /// The datatype must be exactly `T`'s ([`ArrayError::DTypeMismatch`] otherwise); `bool`
    /// is true for any nonzero byte.
    pub fn to_array<T: Element>(&self) -> Result<ArrayD<T>, ArrayError> {
        let order = match &self.dtype {
            DType::Scalar { ty, byteorder } if *ty == T::SCALAR => *byteorder,
            _ => {
                return Err(ArrayError::DTypeMismatch {
                    expected: T::SCALAR.name(),
                    found: self.dtype.name(),
                })
            }
        };
        let values = T::decode(&self.data, order);
        ArrayD::from_shape_vec(IxDyn(&self.shape), values).map_err(|_| ArrayError::ShapeOverflow {
            path: crate::yaml::TreePath::root(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr_of(ty: ScalarType, order: ByteOrder, shape: Vec<usize>, data: Vec<u8>) -> DynArray {
        DynArray {
            dtype: DType::scalar(ty, order),
            shape,
            data,
        }
    }

    #[test]
    fn every_type_both_orders() {
        use ByteOrder::{Big, Little};
        let a = arr_of(ScalarType::Int16, Big, vec![2], vec![0xff, 0xfe, 0, 1]);
        assert_eq!(
            a.to_array::<i16>().unwrap().into_raw_vec_and_offset().0,
            vec![-2, 1]
        );
        let a = arr_of(ScalarType::Int16, Little, vec![2], vec![0xfe, 0xff, 1, 0]);
        assert_eq!(
            a.to_array::<i16>().unwrap().into_raw_vec_and_offset().0,
            vec![-2, 1]
        );
        let a = arr_of(ScalarType::UInt32, Big, vec![1], vec![1, 2, 3, 4]);
        assert_eq!(a.to_array::<u32>().unwrap()[[0]], 0x01020304);
        let a = arr_of(
            ScalarType::Int64,
            Little,
            vec![],
            (-5i64).to_le_bytes().to_vec(),
        );
        assert_eq!(a.to_array::<i64>().unwrap()[[]], -5);
        let a = arr_of(
            ScalarType::UInt64,
            Big,
            vec![1],
            u64::MAX.to_be_bytes().to_vec(),
        );
        assert_eq!(a.to_array::<u64>().unwrap()[[0]], u64::MAX);
        let a = arr_of(ScalarType::Int8, Big, vec![1], vec![0x80]);
        assert_eq!(a.to_array::<i8>().unwrap()[[0]], -128);
        let a = arr_of(ScalarType::UInt8, Big, vec![1], vec![0x80]);
        assert_eq!(a.to_array::<u8>().unwrap()[[0]], 128);
        let a = arr_of(
            ScalarType::Int32,
            Big,
            vec![1],
            (-7i32).to_be_bytes().to_vec(),
        );
        assert_eq!(a.to_array::<i32>().unwrap()[[0]], -7);
        let a = arr_of(ScalarType::UInt16, Little, vec![1], vec![1, 2]);
        assert_eq!(a.to_array::<u16>().unwrap()[[0]], 0x0201);
        let a = arr_of(ScalarType::Float16, Big, vec![1], vec![0x3e, 0x00]);
        assert_eq!(a.to_array::<f16>().unwrap()[[0]], f16::from_f32(1.5));
        let a = arr_of(
            ScalarType::Float32,
            Big,
            vec![1],
            2.5f32.to_be_bytes().to_vec(),
        );
        assert_eq!(a.to_array::<f32>().unwrap()[[0]], 2.5);
        let a = arr_of(
            ScalarType::Float64,
            Little,
            vec![1],
            (-0.25f64).to_le_bytes().to_vec(),
        );
        assert_eq!(a.to_array::<f64>().unwrap()[[0]], -0.25);
        let mut c = 1.5f32.to_be_bytes().to_vec();
        c.extend((-2.0f32).to_be_bytes());
        let a = arr_of(ScalarType::Complex64, Big, vec![1], c);
        assert_eq!(
            a.to_array::<Complex<f32>>().unwrap()[[0]],
            Complex::new(1.5, -2.0)
        );
        let mut c = 3.0f64.to_le_bytes().to_vec();
        c.extend(4.0f64.to_le_bytes());
        let a = arr_of(ScalarType::Complex128, Little, vec![1], c);
        assert_eq!(
            a.to_array::<Complex<f64>>().unwrap()[[0]],
            Complex::new(3.0, 4.0)
        );
        let a = arr_of(ScalarType::Bool8, Little, vec![2, 2], vec![0, 1, 2, 255]);
        assert_eq!(
            a.to_array::<bool>().unwrap().into_raw_vec_and_offset().0,
            vec![false, true, true, true]
        );
    }

    #[test]
    fn shape_is_kept_and_mismatch_is_typed() {
        let a = arr_of(
            ScalarType::Int16,
            ByteOrder::Big,
            vec![2, 1],
            vec![0, 1, 0, 2],
        );
        let x = a.to_array::<i16>().unwrap();
        assert_eq!(x.shape(), &[2, 1]);
        assert_eq!(x[[1, 0]], 2);
        assert_eq!(
            a.to_array::<u16>(),
            Err(ArrayError::DTypeMismatch {
                expected: "uint16".into(),
                found: "int16".into()
            })
        );
        let s = arr_of(ScalarType::Ascii(2), ByteOrder::Big, vec![1], vec![b'a', 0]);
        assert!(matches!(
            s.to_array::<u8>(),
            Err(ArrayError::DTypeMismatch { .. })
        ));
    }
}
