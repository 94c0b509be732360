//! Property tests: any array of any numeric datatype, byte order, shape, codec and storage
//! written by the writer reads back with the same datatype, shape and bytes.

use std::borrow::Cow;

use asdf_core::array::{ByteOrder, DType, ScalarType};
use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, Storage, WriteArray, WriteOptions, Writer};
use asdf_core::{AsdfFile, Node, Value};
use proptest::prelude::*;

const TYPES: [ScalarType; 14] = [
    ScalarType::Int8,
    ScalarType::Int16,
    ScalarType::Int32,
    ScalarType::Int64,
    ScalarType::UInt8,
    ScalarType::UInt16,
    ScalarType::UInt32,
    ScalarType::UInt64,
    ScalarType::Float16,
    ScalarType::Float32,
    ScalarType::Float64,
    ScalarType::Complex64,
    ScalarType::Complex128,
    ScalarType::Bool8,
];

/// Element bytes that inline YAML keeps exactly: finite floats, bools 0/1.
fn inline_safe(ty: ScalarType, order: ByteOrder, raw: &mut [u8]) {
    let size = ty.itemsize();
    let part = match ty {
        ScalarType::Complex64 => 4,
        ScalarType::Complex128 => 8,
        ScalarType::Float16 | ScalarType::Float32 | ScalarType::Float64 => size,
        ScalarType::Bool8 => {
            raw.iter_mut().for_each(|b| *b &= 1);
            return;
        }
        _ => return,
    };
    for chunk in raw.chunks_mut(part) {
        // clear the top exponent bit: never all ones, so never inf or NaN
        let exp_byte = match order {
            ByteOrder::Little => chunk.len() - 1,
            ByteOrder::Big => 0,
        };
        chunk[exp_byte] &= 0b1011_1111;
    }
}

fn case() -> impl Strategy<Value = (usize, bool, Vec<usize>, u8, bool, Vec<u8>)> {
    (
        0..TYPES.len(),
        any::<bool>(),
        prop::collection::vec(0usize..5, 1..4),
        0u8..7,
        any::<bool>(),
        prop::collection::vec(any::<u8>(), 0..2000),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arrays_round_trip((t, big, shape, codec, inline, seed) in case()) {
        let ty = TYPES[t];
        let order = if big && !inline { ByteOrder::Big } else { ByteOrder::Little };
        let dtype = DType::scalar(ty, order);
        let count: usize = shape.iter().product();
        let len = count * ty.itemsize();
        let mut raw: Vec<u8> = (0..len)
            .map(|i| seed.get(i % seed.len().max(1)).copied().unwrap_or(0) ^ (i as u8))
            .collect();
        if inline {
            inline_safe(ty, order, &mut raw);
        }
        let compression = match codec {
            0 => CompressionChoice::None,
            c => CompressionChoice::Codec(Compression::ALL[usize::from(c) - 1]),
        };
        let storage = if inline { Storage::Inline } else { Storage::Internal };
        let arr = WriteArray::from_bytes(dtype.clone(), shape.clone(), Cow::Borrowed(&raw[..])).unwrap();
        let mut w = Writer::new(WriteOptions::default().compression(compression).storage(storage));
        let n = w.add_array(arr);
        let root = Node::new(Value::Map(vec![(Node::str("a"), n)]));
        let bytes = w.write_to_vec(&root).unwrap();
        let f = AsdfFile::from_bytes(bytes).unwrap();
        f.verify_checksums().unwrap();
        let back = f.dyn_array("/a").unwrap();
        // one-byte types have no byte order (written `big`, as python asdf does)
        if ty.has_byteorder() {
            prop_assert_eq!(&back.dtype, &dtype);
        } else {
            prop_assert_eq!(back.dtype.scalar_type(), Some(ty));
        }
        prop_assert_eq!(&back.shape, &shape);
        prop_assert_eq!(&back.data, &raw);
    }
}
