//! Dynamic access to non-numeric arrays: strings and record fields.

use ndarray::{ArrayD, IxDyn};

use super::{ArrayError, ByteOrder, DType, DynArray, ScalarType};

impl DynArray {
    /// The elements of an `ascii` or `ucs4` array as strings, trailing NULs removed.
    ///
    /// ascii bytes above 127 (not ASCII, but stored by some writers) are read as Latin-1.
    /// A ucs4 code unit that is not a Unicode scalar value is
    /// [`ArrayError::InvalidCodePoint`].
    pub fn strings(&self) -> Result<ArrayD<String>, ArrayError> {
        let (ty, order) = match &self.dtype {
            DType::Scalar { ty, byteorder } => (*ty, *byteorder),
            DType::Record(_) => return Err(self.mismatch("string")),
        };
        let values: Vec<String> = match ty {
            ScalarType::Ascii(0) | ScalarType::Ucs4(0) => vec![String::new(); self.element_count()],
            ScalarType::Ascii(n) => self
                .data
                .chunks_exact(n)
                .map(|c| {
                    let end = c.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                    c.iter().take(end).map(|&b| char::from(b)).collect()
                })
                .collect(),
            ScalarType::Ucs4(n) => {
                let width = n.saturating_mul(4);
                let mut out = Vec::with_capacity(self.data.len() / width.max(1));
                for c in self.data.chunks_exact(width) {
                    let units: Vec<u32> = c
                        .chunks_exact(4)
                        .map(|u| {
                            let b: [u8; 4] = u.try_into().unwrap_or([0; 4]);
                            match order {
                                ByteOrder::Little => u32::from_le_bytes(b),
                                ByteOrder::Big => u32::from_be_bytes(b),
                            }
                        })
                        .collect();
                    let end = units.iter().rposition(|&u| u != 0).map_or(0, |p| p + 1);
                    let s = units
                        .iter()
                        .take(end)
                        .map(|&u| char::from_u32(u).ok_or(ArrayError::InvalidCodePoint { code: u }))
                        .collect::<Result<String, _>>()?;
                    out.push(s);
                }
                out
            }
            _ => return Err(self.mismatch("string")),
        };
        ArrayD::from_shape_vec(IxDyn(&self.shape), values).map_err(|_| ArrayError::ShapeOverflow {
            path: crate::yaml::TreePath::root(),
        })
    }

    /// The field `name` of a record array, as an array of the field's datatype. A subarray
    /// field appends its shape to the array's.
    pub fn field(&self, name: &str) -> Result<DynArray, ArrayError> {
        let DType::Record(fields) = &self.dtype else {
            return Err(self.mismatch("record"));
        };
        let mut offset = 0usize;
        let mut found = None;
        for f in fields {
            if f.name == name {
                found = Some(f);
                break;
            }
            offset = offset.saturating_add(f.size());
        }
        let field = found.ok_or_else(|| ArrayError::NoSuchField {
            name: name.to_string(),
            dtype: self.dtype.name(),
        })?;
        let size = field.size();
        let item = self.dtype.itemsize();
        let mut data = Vec::with_capacity(self.element_count().saturating_mul(size));
        if item > 0 {
            for elem in self.data.chunks_exact(item) {
                let part = offset
                    .checked_add(size)
                    .and_then(|end| elem.get(offset..end))
                    .ok_or(ArrayError::ShapeOverflow {
                        path: crate::yaml::TreePath::root(),
                    })?;
                data.extend_from_slice(part);
            }
        }
        let mut shape = self.shape.clone();
        shape.extend_from_slice(&field.shape);
        Ok(DynArray {
            dtype: field.dtype.clone(),
            shape,
            data,
        })
    }

    fn mismatch(&self, expected: &str) -> ArrayError {
        ArrayError::DTypeMismatch {
            expected: expected.to_string(),
            found: self.dtype.name(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Field;

    #[test]
    fn ascii_strings_strip_trailing_nuls_only() {
        let a = DynArray {
            dtype: DType::scalar(ScalarType::Ascii(4), ByteOrder::Big),
            shape: vec![3],
            data: b"ab\0\0a\0b\0\xe9xyz".to_vec(),
        };
        let s = a.strings().unwrap();
        assert_eq!(
            s.into_raw_vec_and_offset().0,
            vec!["ab", "a\0b", "\u{e9}xyz"]
        );
    }

    #[test]
    fn ucs4_strings_both_orders_and_invalid_code_points() {
        let mut le = Vec::new();
        for c in ['h', 'é', '😀', '\0'] {
            le.extend((c as u32).to_le_bytes());
        }
        let a = DynArray {
            dtype: DType::scalar(ScalarType::Ucs4(2), ByteOrder::Little),
            shape: vec![2, 1],
            data: le.clone(),
        };
        let s = a.strings().unwrap();
        assert_eq!(s.shape(), &[2, 1]);
        assert_eq!(s.into_raw_vec_and_offset().0, vec!["hé", "😀"]);
        let be: Vec<u8> = le
            .chunks(4)
            .flat_map(|c| c.iter().rev().copied().collect::<Vec<_>>())
            .collect();
        let b = DynArray {
            dtype: DType::scalar(ScalarType::Ucs4(2), ByteOrder::Big),
            shape: vec![2],
            data: be,
        };
        assert_eq!(
            b.strings().unwrap().into_raw_vec_and_offset().0,
            vec!["hé", "😀"]
        );
        let bad = DynArray {
            dtype: DType::scalar(ScalarType::Ucs4(1), ByteOrder::Little),
            shape: vec![1],
            data: 0xD800u32.to_le_bytes().to_vec(),
        };
        assert_eq!(
            bad.strings(),
            Err(ArrayError::InvalidCodePoint { code: 0xD800 })
        );
        let num = DynArray {
            dtype: DType::scalar(ScalarType::Int8, ByteOrder::Big),
            shape: vec![0],
            data: vec![],
        };
        assert!(matches!(
            num.strings(),
            Err(ArrayError::DTypeMismatch { .. })
        ));
    }

    #[test]
    fn record_fields_and_subarrays() {
        let f = |name: &str, dtype: DType, shape: Vec<usize>| Field {
            name: name.into(),
            dtype,
            shape,
        };
        let pos = DType::Record(vec![
            f(
                "x",
                DType::scalar(ScalarType::UInt8, ByteOrder::Big),
                vec![],
            ),
            f(
                "y",
                DType::scalar(ScalarType::UInt8, ByteOrder::Big),
                vec![],
            ),
        ]);
        let a = DynArray {
            dtype: DType::Record(vec![
                f(
                    "id",
                    DType::scalar(ScalarType::Int16, ByteOrder::Big),
                    vec![],
                ),
                f(
                    "v",
                    DType::scalar(ScalarType::UInt8, ByteOrder::Big),
                    vec![3],
                ),
                f("pos", pos, vec![]),
            ]),
            shape: vec![2],
            data: vec![0, 1, 10, 11, 12, 20, 21, 0, 2, 13, 14, 15, 22, 23],
        };
        let id = a.field("id").unwrap();
        assert_eq!(
            id.to_array::<i16>().unwrap().into_raw_vec_and_offset().0,
            vec![1, 2]
        );
        let v = a.field("v").unwrap();
        assert_eq!(v.shape, vec![2, 3]);
        assert_eq!(v.data, vec![10, 11, 12, 13, 14, 15]);
        let y = a.field("pos").unwrap().field("y").unwrap();
        assert_eq!(y.shape, vec![2]);
        assert_eq!(y.data, vec![21, 23]);
        assert!(matches!(
            a.field("nope"),
            Err(ArrayError::NoSuchField { .. })
        ));
        assert!(matches!(
            id.field("x"),
            Err(ArrayError::DTypeMismatch { .. })
        ));
    }
}
