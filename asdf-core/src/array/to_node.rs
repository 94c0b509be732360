//! Building tree nodes for arrays: datatypes, shapes, inline data.

use std::sync::OnceLock;

use half::f16;

use crate::array::{ByteOrder, DType, ScalarType};
use crate::yaml::pytext::complex_repr;
use crate::yaml::{CollectionStyle, Integer, Node, NodeData, Style, Value};

pub(crate) const ASDF: &str = "tag:stsci.edu:asdf/";

pub(crate) fn int(v: i128) -> Node {
    match usize::try_from(v) {
        Ok(i) if i < SMALL_INTS => SMALL
            .get_or_init(|| (0..SMALL_INTS).map(|i| int_node(i as i128)).collect())
            .get(i)
            .cloned()
            .unwrap_or_else(|| int_node(v)),
        _ => int_node(v),
    }
}

fn int_node(v: i128) -> Node {
    Node::new(Value::Int(Integer::Small(v)))
}

/// Integers below this are shared nodes (shapes, block numbers of small files).
const SMALL_INTS: usize = 256;
static SMALL: OnceLock<Vec<Node>> = OnceLock::new();

/// Keys of an ndarray mapping, in the order they are written.
pub(crate) const NDARRAY_KEYS: [&str; 8] = [
    "source",
    "data",
    "mask",
    "datatype",
    "byteorder",
    "shape",
    "offset",
    "strides",
];

/// Other words of ndarray nodes: byte orders and the words of string and record datatypes
/// (type names are shared by `scalar_type_node`).
const OTHER_WORDS: [&str; 5] = ["little", "big", "name", "ascii", "ucs4"];

/// The words of ndarray nodes, [`NDARRAY_KEYS`] then [`OTHER_WORDS`]: one shared node each,
/// for every array written (the tree is immutable and the emitter writes unanchored scalars
/// in full, so sharing them is invisible in the file).
fn words() -> impl Iterator<Item = &'static str> {
    NDARRAY_KEYS.iter().chain(OTHER_WORDS.iter()).copied()
}

static WORD_NODES: OnceLock<Vec<Node>> = OnceLock::new();

static TYPE_NODES: OnceLock<Vec<(ScalarType, Node)>> = OnceLock::new();

/// The shared name node of a named scalar type (`float64`, `bool8`, …).
fn scalar_type_node(t: ScalarType) -> Node {
    TYPE_NODES
        .get_or_init(|| {
            crate::array::dtype::NAMED_SCALARS
                .iter()
                .map(|(name, ty)| (*ty, Node::str(*name)))
                .collect()
        })
        .iter()
        .find(|(ty, _)| *ty == t)
        .map(|(_, n)| n.clone())
        .unwrap_or_else(|| Node::str(t.name()))
}

/// A string node for `s`, shared when `s` is one of the words of ndarray nodes ([`words`]).
pub(crate) fn word(s: &str) -> Node {
    words()
        .position(|w| w == s)
        .and_then(|i| {
            WORD_NODES
                .get_or_init(|| words().map(Node::str).collect())
                .get(i)
                .cloned()
        })
        .unwrap_or_else(|| Node::str(s))
}

pub(crate) fn flow(tag: Option<&str>, value: Value) -> Node {
    Node::from(NodeData {
        tag: tag.map(Into::into),
        value,
        style: Style::Collection(CollectionStyle::Flow),
        anchor: None,
    })
}

pub(crate) fn map(entries: Vec<(&str, Node)>) -> Value {
    Value::Map(entries.into_iter().map(|(k, v)| (word(k), v)).collect())
}

/// The `shape` sequence.
pub(crate) fn shape_node(shape: &[usize]) -> Node {
    flow(
        None,
        Value::Seq(shape.iter().map(|&d| int(d as i128)).collect()),
    )
}

/// `datatype` value: `float64`, `[ascii, 4]`, `[ucs4, 3]` or a list of fields.
pub(crate) fn datatype_node(dt: &DType, inline: bool) -> Node {
    match dt {
        DType::Scalar { ty, .. } => match ty {
            ScalarType::Ascii(n) => flow(None, Value::Seq(vec![word("ascii"), int(*n as i128)])),
            ScalarType::Ucs4(n) => flow(None, Value::Seq(vec![word("ucs4"), int(*n as i128)])),
            t => scalar_type_node(*t),
        },
        DType::Record(fields) => Node::new(Value::Seq(
            fields
                .iter()
                .map(|f| {
                    let mut e = vec![
                        ("name", Node::str(f.name.clone())),
                        ("datatype", datatype_node(&f.dtype, inline)),
                    ];
                    if !inline {
                        if let DType::Scalar { ty, byteorder } = &f.dtype {
                            if ty.has_byteorder() {
                                e.push(("byteorder", Node::str(byteorder.as_str())));
                            }
                        }
                    }
                    if !f.shape.is_empty() {
                        e.push(("shape", shape_node(&f.shape)));
                    }
                    flow(None, map(e))
                })
                .collect(),
        )),
    }
}

/// The `byteorder` written for a datatype: the scalar's own, for records the first scalar
/// field's (fields carry their own), `big` for one-byte types as python asdf writes.
pub(crate) fn byteorder_of(dt: &DType) -> ByteOrder {
    match dt {
        DType::Scalar { ty, byteorder } => {
            if ty.has_byteorder() {
                *byteorder
            } else {
                ByteOrder::Big
            }
        }
        DType::Record(fields) => fields
            .iter()
            .find_map(|f| match &f.dtype {
                DType::Scalar { ty, byteorder } if ty.has_byteorder() => Some(*byteorder),
                _ => None,
            })
            .unwrap_or(ByteOrder::native()),
    }
}

fn take<const N: usize>(b: &[u8], order: ByteOrder) -> [u8; N] {
    let mut a: [u8; N] = b.get(..N).and_then(|s| s.try_into().ok()).unwrap_or([0; N]);
    if order == ByteOrder::Big {
        a.reverse();
    }
    a
}

/// One element (little-endian arrays converted) as a node.
fn scalar_node(ty: ScalarType, order: ByteOrder, b: &[u8]) -> Node {
    let f = |v: f64| Node::new(Value::Float(v));
    match ty {
        ScalarType::Int8 => int(i8::from_le_bytes(take(b, ByteOrder::Little)) as i128),
        ScalarType::UInt8 => int(u8::from_le_bytes(take(b, ByteOrder::Little)) as i128),
        ScalarType::Int16 => int(i16::from_le_bytes(take(b, order)) as i128),
        ScalarType::UInt16 => int(u16::from_le_bytes(take(b, order)) as i128),
        ScalarType::Int32 => int(i32::from_le_bytes(take(b, order)) as i128),
        ScalarType::UInt32 => int(u32::from_le_bytes(take(b, order)) as i128),
        ScalarType::Int64 => int(i64::from_le_bytes(take(b, order)) as i128),
        ScalarType::UInt64 => int(u64::from_le_bytes(take(b, order)) as i128),
        ScalarType::Float16 => f(f16::from_le_bytes(take(b, order)).to_f64()),
        ScalarType::Float32 => f(f32::from_le_bytes(take(b, order)) as f64),
        ScalarType::Float64 => f(f64::from_le_bytes(take(b, order))),
        ScalarType::Complex64 => {
            let re = f32::from_le_bytes(take(b, order)) as f64;
            let im = f32::from_le_bytes(take(b.get(4..).unwrap_or_default(), order)) as f64;
            Node::tagged(
                format!("{ASDF}core/complex-1.0.0"),
                Value::Str(complex_repr(re, im)),
            )
        }
        ScalarType::Complex128 => {
            let re = f64::from_le_bytes(take(b, order));
            let im = f64::from_le_bytes(take(b.get(8..).unwrap_or_default(), order));
            Node::tagged(
                format!("{ASDF}core/complex-1.0.0"),
                Value::Str(complex_repr(re, im)),
            )
        }
        ScalarType::Bool8 => Node::new(Value::Bool(b.first().is_some_and(|&x| x != 0))),
        ScalarType::Ascii(_) => {
            let end = b.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
            let bytes = b.get(..end).unwrap_or_default();
            Node::str(bytes.iter().map(|&c| char::from(c)).collect::<String>())
        }
        ScalarType::Ucs4(_) => {
            let mut s = String::new();
            for c in b.chunks_exact(4) {
                let code = u32::from_le_bytes(take(c, order));
                if let Some(ch) = char::from_u32(code) {
                    s.push(ch);
                }
            }
            while s.ends_with('\0') {
                s.pop();
            }
            Node::str(s)
        }
    }
}

fn element_node(dt: &DType, b: &[u8]) -> Node {
    match dt {
        DType::Scalar { ty, byteorder } => scalar_node(*ty, *byteorder, b),
        DType::Record(fields) => {
            let mut pos = 0usize;
            let mut items = Vec::with_capacity(fields.len());
            for f in fields {
                let size = f.size();
                let bytes = b.get(pos..pos.saturating_add(size)).unwrap_or_default();
                pos = pos.saturating_add(size);
                if f.shape.is_empty() {
                    items.push(element_node(&f.dtype, bytes));
                } else {
                    items.push(nested(&f.dtype, &f.shape, bytes));
                }
            }
            Node::new(Value::Seq(items))
        }
    }
}

/// Nested lists of `shape` over C-order elements.
pub(crate) fn nested(dt: &DType, shape: &[usize], b: &[u8]) -> Node {
    let item = dt.itemsize();
    match shape.split_first() {
        None => element_node(dt, b),
        Some((&n, rest)) => {
            let inner: usize = rest.iter().product::<usize>().saturating_mul(item);
            let items: Vec<Node> = (0..n)
                .map(|i| {
                    let start = i.saturating_mul(inner);
                    let bytes = b
                        .get(start..start.saturating_add(inner))
                        .unwrap_or_default();
                    nested(dt, rest, bytes)
                })
                .collect();
            let scalars = rest.is_empty() && matches!(dt, DType::Scalar { .. });
            if scalars {
                flow(None, Value::Seq(items))
            } else {
                Node::new(Value::Seq(items))
            }
        }
    }
}

/// Whether python asdf reads this array back from inline data: not 0-d (the schema wants a
/// list), and records only of plain scalar fields (numpy cannot build subarray or nested
/// record fields from nested lists). Other arrays go to a block even when inline storage is
/// asked for.
pub(crate) fn inline_readable(dtype: &DType, shape: &[usize]) -> bool {
    !shape.is_empty()
        && match dtype {
            DType::Scalar { .. } => true,
            DType::Record(fields) => {
                // python looks for the records by trying each list level as one record: a
                // level as long as the number of fields fails with a TypeError it does
                // not catch
                !shape.contains(&fields.len())
                    && fields
                        .iter()
                        .all(|f| f.shape.is_empty() && matches!(f.dtype, DType::Scalar { .. }))
            }
        }
}

/// Python asdf 6 refuses to write integer literals outside [-(2^63 - 2), 2^63 - 1] and
/// warns when it reads them: whether every 64-bit integer of the data (C-order elements of
/// `dt`) is inside that range, so the array may be written inline.
pub(crate) fn inline_literals_ok(dt: &DType, bytes: &[u8]) -> bool {
    use crate::yaml::{MAX_LITERAL_INT, MIN_LITERAL_INT};
    let scalar_ok = |ty: ScalarType, order: ByteOrder, b: &[u8]| -> bool {
        match ty {
            ScalarType::Int64 => b
                .chunks_exact(8)
                .all(|c| i128::from(i64::from_le_bytes(take(c, order))) >= MIN_LITERAL_INT),
            ScalarType::UInt64 => b
                .chunks_exact(8)
                .all(|c| i128::from(u64::from_le_bytes(take(c, order))) <= MAX_LITERAL_INT),
            _ => true,
        }
    };
    match dt {
        DType::Scalar { ty, byteorder } => scalar_ok(*ty, *byteorder, bytes),
        DType::Record(_) => {
            let item = dt.itemsize();
            if item == 0 {
                return true;
            }
            bytes
                .chunks_exact(item)
                .all(|rec| record_ok(dt, rec, &scalar_ok))
        }
    }
}

fn record_ok(
    dt: &DType,
    rec: &[u8],
    scalar_ok: &dyn Fn(ScalarType, ByteOrder, &[u8]) -> bool,
) -> bool {
    match dt {
        DType::Scalar { ty, byteorder } => scalar_ok(*ty, *byteorder, rec),
        DType::Record(fields) => {
            let mut pos = 0usize;
            fields.iter().all(|f| {
                let size = f.size();
                let b = rec.get(pos..pos.saturating_add(size)).unwrap_or_default();
                pos = pos.saturating_add(size);
                match &f.dtype {
                    DType::Scalar { ty, byteorder } => scalar_ok(*ty, *byteorder, b),
                    inner => {
                        let n = inner.itemsize();
                        n == 0 || b.chunks_exact(n).all(|r| record_ok(inner, r, scalar_ok))
                    }
                }
            })
        }
    }
}

/// Byte ranges (start, length) within one element of `dt` that hold `ascii` strings: the
/// element itself, or a record's ascii fields (subarrays and nested records included).
fn ascii_ranges(dt: &DType, at: usize, out: &mut Vec<(usize, usize)>) {
    match dt {
        DType::Scalar {
            ty: ScalarType::Ascii(n),
            ..
        } => out.push((at, *n)),
        DType::Scalar { .. } => {}
        DType::Record(fields) => {
            let mut pos = at;
            for f in fields {
                let item = f.dtype.itemsize();
                if holds_ascii(&f.dtype) {
                    for i in 0..f.count() {
                        ascii_ranges(&f.dtype, pos.saturating_add(i.saturating_mul(item)), out);
                    }
                }
                pos = pos.saturating_add(f.size());
            }
        }
    }
}

/// Whether elements of `dt` hold `ascii` strings (as a whole or in fields).
pub(crate) fn holds_ascii(dt: &DType) -> bool {
    match dt {
        DType::Scalar { ty, .. } => matches!(ty, ScalarType::Ascii(_)),
        DType::Record(fields) => fields.iter().any(|f| holds_ascii(&f.dtype)),
    }
}

/// The first element (its C-order index) of `bytes`, elements of `dt`, whose `ascii` strings
/// hold a byte above 0x7F, and that byte; `None` when every such byte is ASCII (or `dt`
/// holds no ascii string). Written inline, such a string is text that neither asdf-rs nor
/// python asdf reads back as `ascii`.
pub(crate) fn first_non_ascii(dt: &DType, bytes: &[u8]) -> Option<(usize, u8)> {
    if !holds_ascii(dt) {
        return None;
    }
    let mut ranges = Vec::new();
    ascii_ranges(dt, 0, &mut ranges);
    let item = dt.itemsize();
    if item == 0 {
        return None;
    }
    bytes.chunks(item).enumerate().find_map(|(i, e)| {
        ranges.iter().find_map(|&(start, len)| {
            e.get(start..start.saturating_add(len).min(e.len()))?
                .iter()
                .find(|b| !b.is_ascii())
                .map(|&b| (i, b))
        })
    })
}

/// The first element (its C-order index, counting records as elements) of inline `data`
/// of `dt` and `ndim` dimensions whose `ascii` strings hold a character that is not ASCII,
/// and that character; `None` when there is none (or `dt` holds no ascii string). Nodes of
/// other shapes are passed over: the reader reports them.
pub(crate) fn first_non_ascii_inline(
    dt: &DType,
    data: &Node,
    ndim: usize,
) -> Option<(usize, char)> {
    if !holds_ascii(dt) {
        return None;
    }
    let mut index = 0usize;
    non_ascii_elements(dt, data, ndim, &mut index)
}

fn non_ascii_elements(
    dt: &DType,
    node: &Node,
    ndim: usize,
    index: &mut usize,
) -> Option<(usize, char)> {
    match (node.value(), ndim) {
        (Value::Seq(items), d) if d > 0 => items
            .iter()
            .find_map(|n| non_ascii_elements(dt, n, d - 1, index)),
        _ => {
            let found = non_ascii_in_element(dt, node).map(|c| (*index, c));
            *index = index.saturating_add(1);
            found
        }
    }
}

/// A non-ASCII character in the ascii strings of one inline element of `dt`.
fn non_ascii_in_element(dt: &DType, node: &Node) -> Option<char> {
    fn any_string(node: &Node) -> Option<char> {
        match node.value() {
            Value::Str(s) => s.chars().find(|c| !c.is_ascii()),
            Value::Seq(items) => items.iter().find_map(any_string),
            _ => None,
        }
    }
    match dt {
        DType::Scalar {
            ty: ScalarType::Ascii(_),
            ..
        } => any_string(node),
        DType::Scalar { .. } => None,
        DType::Record(fields) => {
            let Value::Seq(items) = node.value() else {
                return None;
            };
            fields.iter().zip(items).find_map(|(f, v)| {
                if !holds_ascii(&f.dtype) {
                    return None;
                }
                let mut i = 0usize;
                non_ascii_elements(&f.dtype, v, f.shape.len(), &mut i).map(|(_, c)| c)
            })
        }
    }
}

impl super::DynArray {
    /// The first element (its C-order index) whose `ascii` strings (the element, or a
    /// record's ascii fields) hold a byte above 0x7F, and that byte; `None` when there is
    /// none. Such an array cannot be written inline ([`WriteError::NotAscii`]): store it in
    /// a block, or its bytes as `uint8`.
    ///
    /// [`WriteError::NotAscii`]: crate::write::WriteError::NotAscii
    pub fn first_non_ascii(&self) -> Option<(usize, u8)> {
        first_non_ascii(&self.dtype, &self.data)
    }
}

/// The ndarray node (tag `ndarray_tag`) holding `a` inline (`data`, `datatype`, `shape`),
/// or `None` when python asdf could not read the array back from inline data, or would
/// refuse its integers as literals (beyond ±2^63), or its `ascii` strings hold bytes that
/// are not ASCII.
pub fn inline_node(a: &super::DynArray, ndarray_tag: &str) -> Option<Node> {
    if !inline_readable(&a.dtype, &a.shape)
        || !inline_literals_ok(&a.dtype, &a.data)
        || first_non_ascii(&a.dtype, &a.data).is_some()
    {
        return None;
    }
    Some(Node::tagged(
        ndarray_tag.to_string(),
        map(vec![
            ("data", nested(&a.dtype, &a.shape, &a.data)),
            ("datatype", datatype_node(&a.dtype, true)),
            ("shape", shape_node(&a.shape)),
        ]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Field;

    #[test]
    fn literals_beyond_python_range_are_not_inline() {
        let le = |ty| DType::scalar(ty, ByteOrder::Little);
        let be = |ty| DType::scalar(ty, ByteOrder::Big);
        let lowest_ok = -(i64::MAX - 1);
        assert!(inline_literals_ok(
            &le(ScalarType::Int64),
            &lowest_ok.to_le_bytes()
        ));
        assert!(!inline_literals_ok(
            &le(ScalarType::Int64),
            &(lowest_ok - 1).to_le_bytes()
        ));
        assert!(!inline_literals_ok(
            &be(ScalarType::Int64),
            &i64::MIN.to_be_bytes()
        ));
        assert!(inline_literals_ok(
            &be(ScalarType::Int64),
            &i64::MAX.to_be_bytes()
        ));
        let top = i64::MAX as u64;
        assert!(inline_literals_ok(
            &le(ScalarType::UInt64),
            &top.to_le_bytes()
        ));
        assert!(!inline_literals_ok(
            &le(ScalarType::UInt64),
            &(top + 1).to_le_bytes()
        ));
        // int32 never goes beyond the range
        assert!(inline_literals_ok(
            &le(ScalarType::Int32),
            &i32::MIN.to_le_bytes()
        ));
        // a record's 64-bit field is checked
        let rec = DType::Record(vec![
            Field {
                name: "a".into(),
                dtype: le(ScalarType::Int8),
                shape: vec![],
            },
            Field {
                name: "b".into(),
                dtype: le(ScalarType::UInt64),
                shape: vec![],
            },
        ]);
        let mut ok = vec![1u8];
        ok.extend(5u64.to_le_bytes());
        let mut bad = vec![1u8];
        bad.extend(u64::MAX.to_le_bytes());
        assert!(inline_literals_ok(&rec, &ok));
        assert!(!inline_literals_ok(&rec, &[ok.clone(), bad].concat()));
    }

    #[test]
    fn nested_lists_follow_shape() {
        let dt = DType::scalar(ScalarType::Int16, ByteOrder::Big);
        let n = nested(&dt, &[2, 2], &[0, 1, 0, 2, 0xff, 0xfe, 0, 4]);
        let rows = n.as_seq().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].as_seq().unwrap()[0].as_i64(), Some(-2));
        assert_eq!(rows[0].as_seq().unwrap()[1].as_i64(), Some(2));
    }

    #[test]
    fn strings_and_records() {
        let dt = DType::Record(vec![
            Field {
                name: "s".into(),
                dtype: DType::scalar(ScalarType::Ascii(3), ByteOrder::Big),
                shape: vec![],
            },
            Field {
                name: "u".into(),
                dtype: DType::scalar(ScalarType::Ucs4(2), ByteOrder::Little),
                shape: vec![],
            },
        ]);
        let b = [b'a', b'b', 0, 0xe9, 0, 0, 0, 0, 0, 0, 0];
        let n = element_node(&dt, &b);
        let items = n.as_seq().unwrap();
        assert_eq!(items[0].as_str(), Some("ab"));
        assert_eq!(items[1].as_str(), Some("é"));
        let d = datatype_node(&dt, false);
        assert_eq!(d.as_seq().unwrap().len(), 2);
    }
}
