//! `asdftool convert` between Blosc2 frames (`.b2nd`, `.b2frame`) and ASDF.
//!
//! `x.b2nd` → `y.asdf`: the array at tree key `data` (datatype from the `b2nd` metalayer's
//! numpy string, shape from its shape), the frame's variable-length metalayers under
//! `blosc2_vlmeta` and its other fixed metalayers under `blosc2_meta`, msgpack values as
//! YAML values (binary as `!!binary`). A plain super-chunk (`.b2frame`) becomes a 1-D array of
//! unsigned integers of its type size (1, 2, 4 or 8 bytes, little-endian), or, for other
//! sizes, a 2-D `uint8` array of one row per item.

use std::path::Path;

use asdf_blosc2::{Frame, Meta};
use asdf_core::array::{ByteOrder, DType, ScalarType};
use asdf_core::codec::Compression;
use asdf_core::write::{ArrayOptions, CompressionChoice, WriteArray, WriteOptions, Writer};
use asdf_core::yaml::{Integer, Value};
use asdf_core::Node;

/// msgpack → YAML node.
fn meta_node(m: &Meta) -> Node {
    match m {
        Meta::Nil => Node::new(Value::Null),
        Meta::Boolean(b) => Node::new(Value::Bool(*b)),
        Meta::Integer(i) => match (i.as_i64(), i.as_u64()) {
            (Some(v), _) => Node::int(i128::from(v)),
            (None, Some(v)) => Node::new(Value::Int(Integer::Small(i128::from(v)))),
            _ => Node::new(Value::Null),
        },
        Meta::F32(f) => Node::new(Value::Float(f64::from(*f))),
        Meta::F64(f) => Node::new(Value::Float(*f)),
        Meta::String(s) => match s.as_str() {
            Some(t) => Node::str(t),
            None => Node::new(Value::Binary(s.as_bytes().to_vec())),
        },
        Meta::Binary(b) => Node::new(Value::Binary(b.clone())),
        Meta::Array(a) => Node::seq(a.iter().map(meta_node)),
        Meta::Map(entries) => Node::new(Value::Map(
            entries
                .iter()
                .map(|(k, v)| (meta_node(k), meta_node(v)))
                .collect(),
        )),
        Meta::Ext(ty, data) => Node::map([
            ("msgpack_ext_type", Node::int(i128::from(*ty))),
            ("data", Node::new(Value::Binary(data.clone()))),
        ]),
    }
}

fn codec_choice(codec: Option<&str>) -> Result<CompressionChoice, String> {
    match codec {
        None => Ok(CompressionChoice::Codec(Compression::Zstd)),
        Some("none") => Ok(CompressionChoice::None),
        Some(name) => name
            .parse::<Compression>()
            .map(CompressionChoice::Codec)
            .map_err(|_| {
                format!(
                    "unknown compression {name:?} (choose zlib, bzp2, lz4, zstd, lz4f, blsc or none)"
                )
            }),
    }
}

/// `x.b2nd`/`x.b2frame` → `y.asdf`.
pub fn to_asdf(input: &Path, output: &Path, codec: Option<&str>) -> Result<String, String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", input.display());
    let bytes = std::fs::read(input).map_err(|e| at(&e))?;
    let frame = Frame::parse(&bytes).map_err(|e| at(&e))?;
    let (dtype, shape, data) = match frame.b2nd() {
        Some(nd) => {
            let nd = nd.map_err(|e| at(&e))?;
            let dtype = DType::from_numpy_str(&nd.dtype).ok_or_else(|| {
                at(&format!(
                    "numpy datatype {:?} has no ASDF datatype",
                    nd.dtype
                ))
            })?;
            if dtype.itemsize() != frame.typesize {
                return Err(at(&format!(
                    "datatype {:?} is {} bytes but the frame's items are {}",
                    nd.dtype,
                    dtype.itemsize(),
                    frame.typesize
                )));
            }
            let shape = nd
                .shape
                .iter()
                .map(|&d| usize::try_from(d).map_err(|_| at(&"shape too large")))
                .collect::<Result<Vec<_>, _>>()?;
            let data = frame.b2nd_array(&nd).map_err(|e| at(&e))?;
            (dtype, shape, data)
        }
        None => {
            let data = frame.decode_all().map_err(|e| at(&e))?;
            let ts = frame.typesize;
            let n = data.len() / ts;
            let le = ByteOrder::Little;
            match ts {
                1 => (DType::scalar(ScalarType::UInt8, le), vec![n], data),
                2 => (DType::scalar(ScalarType::UInt16, le), vec![n], data),
                4 => (DType::scalar(ScalarType::UInt32, le), vec![n], data),
                8 => (DType::scalar(ScalarType::UInt64, le), vec![n], data),
                _ => (DType::scalar(ScalarType::UInt8, le), vec![n, ts], data),
            }
        }
    };
    let array = WriteArray::from_bytes(dtype, shape, data.into())
        .ok_or_else(|| at(&"decoded bytes do not fill the array's shape"))?;
    let mut w = Writer::new(WriteOptions::new());
    let node = w.add_array_with(
        array,
        ArrayOptions {
            compression: Some(codec_choice(codec)?),
            ..Default::default()
        },
    );
    let mut tree = vec![("data".to_string(), node)];
    let vl = frame.vlmeta().map_err(|e| at(&e))?;
    if !vl.is_empty() {
        tree.push((
            "blosc2_vlmeta".into(),
            Node::map(vl.iter().map(|(k, v)| (k.clone(), meta_node(v)))),
        ));
    }
    let mut fixed = Vec::new();
    for (name, _) in frame.metalayers.iter().filter(|(n, _)| n != "b2nd") {
        if let Some(m) = frame.meta(name) {
            fixed.push((name.clone(), meta_node(&m.map_err(|e| at(&e))?)));
        }
    }
    if !fixed.is_empty() {
        tree.push(("blosc2_meta".into(), Node::map(fixed)));
    }
    let summary = w
        .write_to_path(&Node::map(tree), output)
        .map_err(|e| format!("{}: {}", output.display(), crate::chain(&e)))?;
    Ok(format!(
        "wrote {} ({} bytes)\n",
        output.display(),
        summary.len
    ))
}

/// `y.asdf` → `z.b2nd`/`z.b2frame`: the array at `array` (a JSON pointer into the tree).
pub fn from_asdf(
    _access: &crate::Access,
    _input: &Path,
    output: &Path,
    _codec: Option<&str>,
    _array: Option<&str>,
) -> Result<String, String> {
    Err(format!(
        "{}: writing Blosc2 frames is not supported yet",
        output.display()
    ))
}
