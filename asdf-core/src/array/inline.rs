//! Inline arrays: nested YAML lists converted to a [`DynArray`], with python asdf's (numpy's)
//! type inference and value conversion.

use half::f16;

use super::{
    ArrayError, ArraySource, ByteOrder, DType, Dim, DynArray, Field, NdArrayMeta, ScalarType,
};
use crate::floats::python_repr;
use crate::yaml::describe;
use crate::yaml::pytext::parse_complex;
use crate::yaml::{Integer, Node, Value};

/// numpy's limit on the number of dimensions; deeper nesting is an error.
const MAX_NDIM: usize = 64;

/// Largest inline array, in bytes (a declared string width can be far larger than the data).
pub const MAX_INLINE_BYTES: u64 = 1 << 32;

/// Tag prefix of `core/complex` scalars.
const COMPLEX_TAG: &str = "tag:stsci.edu:asdf/core/complex-";

/// One inline element.
#[derive(Debug, Clone, Copy)]
enum Leaf<'a> {
    Null,
    Bool(bool),
    Int(&'a Integer),
    Float(f64),
    Str(&'a str),
    Complex(f64, f64),
}

struct Ctx<'p> {
    path: &'p str,
}

impl Ctx<'_> {
    fn value_err(&self, idx: &[usize], message: impl std::fmt::Display) -> ArrayError {
        ArrayError::InlineValue {
            path: self.path.into(),
            message: format!("at {idx:?}: {message}"),
        }
    }
    fn ragged(&self, idx: &[usize], message: impl std::fmt::Display) -> ArrayError {
        ArrayError::Ragged {
            path: self.path.into(),
            message: format!("at {idx:?}: {message}"),
        }
    }
}

fn leaf<'a>(node: &'a Node, ctx: &Ctx<'_>, idx: &[usize]) -> Result<Leaf<'a>, ArrayError> {
    if let Some(tag) = node.tag() {
        if tag.starts_with(COMPLEX_TAG) {
            if let Some(s) = node.as_str() {
                return parse_complex(s)
                    .map(|(re, im)| Leaf::Complex(re, im))
                    .ok_or_else(|| ctx.value_err(idx, format!("invalid complex number {s:?}")));
            }
        }
        return Err(ctx.value_err(idx, format!("unsupported tagged value !<{tag}>")));
    }
    Ok(match node.value() {
        Value::Null => Leaf::Null,
        Value::Bool(b) => Leaf::Bool(*b),
        Value::Int(i) => Leaf::Int(i),
        Value::Float(f) => Leaf::Float(*f),
        Value::Str(s) => Leaf::Str(s),
        _ => return Err(ctx.value_err(idx, format!("{} is not an array element", describe(node)))),
    })
}

/// Reads inline data (`data:` or a bare list) into an array.
///
/// With a `datatype`, values are converted as numpy converts them (floats to ints truncate,
/// out-of-range integers are errors, strings are truncated to the declared width and padded
/// with NULs, ascii must be ASCII). Without one the type is inferred as python asdf does:
/// any string gives `ucs4` of the longest (numbers among strings are written as python
/// prints them), else any complex gives `complex128`, any float `float64`, integers `int64`
/// (`uint64` when all exceed `int64`; `float64` when both kinds occur), else `bool8`; no
/// elements at all give `float64`. `null` elements become zero (or empty strings).
///
/// Elements are stored in the native byte order (fields of a record with an explicit
/// `byteorder` keep theirs). A declared `shape` must match the data (an empty array
/// takes the declared shape when that is empty too). Errors name `path` and the element
/// index.
pub fn from_inline(meta: &NdArrayMeta, path: &str) -> Result<DynArray, ArrayError> {
    let ArraySource::Inline(data) = &meta.source else {
        return Err(ArrayError::WrongSource {
            path: path.into(),
            message: "the array is not inline".into(),
        });
    };
    let ctx = Ctx { path };
    let mut arr = match &meta.dtype {
        Some(DType::Record(fields)) => records(data, fields, meta, &ctx)?,
        Some(dt) => {
            let (shape, leaves) = leaves(data, &ctx)?;
            encode_all(&leaves, dt, shape, &ctx)?
        }
        None => {
            let (shape, leaves) = leaves(data, &ctx)?;
            let dt = infer(&leaves, &ctx)?;
            encode_all(&leaves, &dt, shape, &ctx)?
        }
    };
    if let Some(declared) = &meta.shape {
        check_shape(&mut arr, declared, path)?;
    }
    Ok(arr)
}

/// Which elements of inline data are `null` (masked, per the ndarray schema), or `None`
/// when none are (or the datatype is a record, whose nulls are not tracked).
///
/// [`from_inline`] stores these elements as zero; an explicit `mask` takes precedence.
pub fn inline_null_mask(
    meta: &NdArrayMeta,
    path: &str,
) -> Result<Option<ndarray::ArrayD<bool>>, ArrayError> {
    let ArraySource::Inline(data) = &meta.source else {
        return Err(ArrayError::WrongSource {
            path: path.into(),
            message: "the array is not inline".into(),
        });
    };
    if matches!(meta.dtype, Some(DType::Record(_))) {
        return Ok(None);
    }
    let ctx = Ctx { path };
    let (shape, leaves) = leaves(data, &ctx)?;
    if !leaves.iter().any(|(l, _)| matches!(l, Leaf::Null)) {
        return Ok(None);
    }
    let mask: Vec<bool> = leaves
        .iter()
        .map(|(l, _)| matches!(l, Leaf::Null))
        .collect();
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), mask)
        .map(Some)
        .map_err(|_| ArrayError::ShapeOverflow { path: path.into() })
}

fn check_shape(arr: &mut DynArray, declared: &[Dim], path: &str) -> Result<(), ArrayError> {
    let matches = declared.len() == arr.shape.len()
        && declared.iter().zip(&arr.shape).all(|(d, &a)| match d {
            Dim::Fixed(n) => *n == a as u64,
            Dim::Streamed => true,
        });
    if matches {
        return Ok(());
    }
    let declared_fixed: Option<Vec<usize>> = declared
        .iter()
        .map(|d| match d {
            Dim::Fixed(n) => usize::try_from(*n).ok(),
            Dim::Streamed => None,
        })
        .collect();
    if arr.element_count() == 0 {
        if let Some(shape) = declared_fixed {
            if shape.contains(&0) {
                arr.shape = shape;
                return Ok(());
            }
        }
    }
    Err(ArrayError::ShapeMismatch {
        path: path.into(),
        declared: declared
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => Some(*n),
                Dim::Streamed => None,
            })
            .collect(),
        actual: arr.shape.iter().map(|&d| d as u64).collect(),
    })
}

/// Shape from the chain of first elements.
fn discover_shape(node: &Node, ctx: &Ctx<'_>) -> Result<Vec<usize>, ArrayError> {
    let mut shape = Vec::new();
    let mut cur = node;
    while let Some(items) = cur.as_seq() {
        if shape.len() >= MAX_NDIM {
            return Err(ctx.ragged(&[], format!("more than {MAX_NDIM} dimensions")));
        }
        shape.push(items.len());
        match items.first() {
            Some(first) => cur = first,
            None => break,
        }
    }
    Ok(shape)
}

/// Visitor of element nodes with their index.
type Visit<'a, 'f> = dyn FnMut(&'a Node, &[usize]) -> Result<(), ArrayError> + 'f;

/// Walks a rectangular nest of lists of `shape`, calling `f` on each element node (which
/// may itself be a list only if `list_elements`, as records are).
fn walk<'a>(
    node: &'a Node,
    shape: &[usize],
    depth: usize,
    idx: &mut Vec<usize>,
    ctx: &Ctx<'_>,
    list_elements: bool,
    f: &mut Visit<'a, '_>,
) -> Result<(), ArrayError> {
    match shape.get(depth) {
        None => {
            if !list_elements && node.as_seq().is_some() {
                return Err(ctx.ragged(idx, "a list where an element was expected"));
            }
            f(node, idx)
        }
        Some(&len) => {
            let items = node.as_seq().ok_or_else(|| {
                ctx.ragged(
                    idx,
                    format!("an element where a list of {len} was expected"),
                )
            })?;
            if items.len() != len {
                return Err(ctx.ragged(
                    idx,
                    format!("a list of {} where {len} were expected", items.len()),
                ));
            }
            for (i, item) in items.iter().enumerate() {
                idx.push(i);
                walk(item, shape, depth + 1, idx, ctx, list_elements, f)?;
                idx.pop();
            }
            Ok(())
        }
    }
}

type Leaves<'a> = Vec<(Leaf<'a>, Vec<usize>)>;

fn leaves<'a>(data: &'a Node, ctx: &Ctx<'_>) -> Result<(Vec<usize>, Leaves<'a>), ArrayError> {
    let shape = discover_shape(data, ctx)?;
    let mut out = Vec::new();
    let mut idx = Vec::new();
    walk(data, &shape, 0, &mut idx, ctx, false, &mut |n, i| {
        out.push((leaf(n, ctx, i)?, i.to_vec()));
        Ok(())
    })?;
    Ok((shape, out))
}

fn infer(leaves: &Leaves<'_>, ctx: &Ctx<'_>) -> Result<DType, ArrayError> {
    let (mut s, mut c, mut f, mut i64s, mut u64s, mut b) =
        (false, false, false, false, false, false);
    let mut width = 0usize;
    for (l, idx) in leaves {
        match l {
            Leaf::Null => {}
            Leaf::Bool(_) => b = true,
            Leaf::Int(i) => {
                if i.as_i64().is_some() {
                    i64s = true;
                } else if i.as_u64().is_some() {
                    u64s = true;
                } else {
                    return Err(ctx.value_err(idx, format!("integer {i} does not fit in 64 bits")));
                }
            }
            Leaf::Float(_) => f = true,
            Leaf::Complex(..) => c = true,
            Leaf::Str(t) => {
                s = true;
                width = width.max(t.chars().count());
            }
        }
    }
    let ty = if s {
        if c {
            return Err(ctx.value_err(&[], "complex numbers mixed with strings"));
        }
        // numpy's widths for numbers turned into strings
        if i64s || u64s {
            width = width.max(21);
        }
        if f {
            width = width.max(32);
        }
        if b {
            width = width.max(5);
        }
        ScalarType::Ucs4(width)
    } else if c {
        ScalarType::Complex128
    } else if f || (i64s && u64s) {
        ScalarType::Float64
    } else if u64s {
        ScalarType::UInt64
    } else if i64s {
        ScalarType::Int64
    } else if b {
        ScalarType::Bool8
    } else {
        ScalarType::Float64
    };
    Ok(DType::scalar(ty, ByteOrder::native()))
}

fn alloc(count: usize, itemsize: usize, ctx: &Ctx<'_>) -> Result<Vec<u8>, ArrayError> {
    let bytes = (count as u128) * (itemsize as u128);
    if bytes > u128::from(MAX_INLINE_BYTES) {
        return Err(ArrayError::TooLarge {
            path: ctx.path.into(),
            bytes,
            limit: MAX_INLINE_BYTES,
        });
    }
    Ok(Vec::with_capacity(bytes as usize))
}

fn encode_all(
    leaves: &Leaves<'_>,
    dt: &DType,
    shape: Vec<usize>,
    ctx: &Ctx<'_>,
) -> Result<DynArray, ArrayError> {
    let mut data = alloc(leaves.len(), dt.itemsize(), ctx)?;
    for (l, idx) in leaves {
        encode_leaf(*l, dt, &mut data, ctx, idx)?;
    }
    Ok(DynArray {
        dtype: dt.clone(),
        shape,
        data,
    })
}

fn put<const N: usize>(out: &mut Vec<u8>, mut le: [u8; N], order: ByteOrder) {
    if order == ByteOrder::Big {
        le.reverse();
    }
    out.extend_from_slice(&le);
}

fn encode_leaf(
    l: Leaf<'_>,
    dt: &DType,
    out: &mut Vec<u8>,
    ctx: &Ctx<'_>,
    idx: &[usize],
) -> Result<(), ArrayError> {
    let DType::Scalar { ty, byteorder: bo } = dt else {
        return Err(ctx.value_err(idx, "a record needs a list of its fields"));
    };
    let bo = *bo;
    let err = |m: String| ctx.value_err(idx, m);
    match *ty {
        ScalarType::Int8 => out.extend(to_int::<i8>(l, &err)?.to_le_bytes()),
        ScalarType::Int16 => put(out, to_int::<i16>(l, &err)?.to_le_bytes(), bo),
        ScalarType::Int32 => put(out, to_int::<i32>(l, &err)?.to_le_bytes(), bo),
        ScalarType::Int64 => put(out, to_int::<i64>(l, &err)?.to_le_bytes(), bo),
        ScalarType::UInt8 => out.extend(to_int::<u8>(l, &err)?.to_le_bytes()),
        ScalarType::UInt16 => put(out, to_int::<u16>(l, &err)?.to_le_bytes(), bo),
        ScalarType::UInt32 => put(out, to_int::<u32>(l, &err)?.to_le_bytes(), bo),
        ScalarType::UInt64 => put(out, to_int::<u64>(l, &err)?.to_le_bytes(), bo),
        ScalarType::Float16 => put(out, f16::from_f64(to_float(l, &err)?).to_le_bytes(), bo),
        ScalarType::Float32 => put(out, (to_float(l, &err)? as f32).to_le_bytes(), bo),
        ScalarType::Float64 => put(out, to_float(l, &err)?.to_le_bytes(), bo),
        ScalarType::Complex64 => {
            let (re, im) = to_complex(l, &err)?;
            put(out, (re as f32).to_le_bytes(), bo);
            put(out, (im as f32).to_le_bytes(), bo);
        }
        ScalarType::Complex128 => {
            let (re, im) = to_complex(l, &err)?;
            put(out, re.to_le_bytes(), bo);
            put(out, im.to_le_bytes(), bo);
        }
        ScalarType::Bool8 => out.push(u8::from(match l {
            Leaf::Null => false,
            Leaf::Bool(b) => b,
            Leaf::Int(i) => !matches!(i, Integer::Small(0)),
            Leaf::Float(f) => f != 0.0,
            Leaf::Str(s) => !s.is_empty(),
            Leaf::Complex(re, im) => re != 0.0 || im != 0.0,
        })),
        ScalarType::Ascii(n) => {
            let s = to_text(l, &err)?;
            if let Some(c) = s.chars().find(|c| !c.is_ascii()) {
                return Err(err(format!("{c:?} is not ascii")));
            }
            let bytes = s.as_bytes();
            let take = bytes.len().min(n);
            out.extend_from_slice(bytes.get(..take).unwrap_or_default());
            out.resize(out.len() + (n - take), 0);
        }
        ScalarType::Ucs4(n) => {
            let s = to_text(l, &err)?;
            let mut written = 0usize;
            for c in s.chars().take(n) {
                put(out, (c as u32).to_le_bytes(), bo);
                written += 1;
            }
            for _ in written..n {
                out.extend_from_slice(&[0; 4]);
            }
        }
    }
    Ok(())
}

fn to_int<T: TryFrom<i128>>(
    l: Leaf<'_>,
    err: &dyn Fn(String) -> ArrayError,
) -> Result<T, ArrayError> {
    let v: i128 = match l {
        Leaf::Null => 0,
        Leaf::Bool(b) => i128::from(b),
        Leaf::Int(i) => i.as_i128().ok_or_else(|| {
            err(format!(
                "integer {i} out of range for {}",
                std::any::type_name::<T>()
            ))
        })?,
        Leaf::Float(f) => {
            if !f.is_finite() || f.abs() >= 1.7e38 {
                return Err(err(format!("cannot convert float {f} to an integer")));
            }
            f.trunc() as i128
        }
        Leaf::Str(s) => {
            let t: String = s.trim().chars().filter(|&c| c != '_').collect();
            t.parse::<i128>()
                .map_err(|_| err(format!("invalid integer literal {s:?}")))?
        }
        Leaf::Complex(..) => {
            return Err(err("cannot convert a complex number to an integer".into()))
        }
    };
    T::try_from(v).map_err(|_| {
        err(format!(
            "integer {v} out of range for {}",
            std::any::type_name::<T>()
        ))
    })
}

fn to_float(l: Leaf<'_>, err: &dyn Fn(String) -> ArrayError) -> Result<f64, ArrayError> {
    Ok(match l {
        Leaf::Null => 0.0,
        Leaf::Bool(b) => f64::from(u8::from(b)),
        Leaf::Int(Integer::Small(v)) => *v as f64,
        Leaf::Int(Integer::Big(s)) => s
            .parse::<f64>()
            .map_err(|_| err(format!("invalid integer {s}")))?,
        Leaf::Float(f) => f,
        Leaf::Str(s) => s
            .trim()
            .replace('_', "")
            .parse::<f64>()
            .map_err(|_| err(format!("invalid float literal {s:?}")))?,
        Leaf::Complex(..) => return Err(err("cannot convert a complex number to a float".into())),
    })
}

fn to_complex(l: Leaf<'_>, err: &dyn Fn(String) -> ArrayError) -> Result<(f64, f64), ArrayError> {
    match l {
        Leaf::Complex(re, im) => Ok((re, im)),
        Leaf::Str(s) => {
            parse_complex(s).ok_or_else(|| err(format!("invalid complex literal {s:?}")))
        }
        other => Ok((to_float(other, err)?, 0.0)),
    }
}

fn to_text(l: Leaf<'_>, err: &dyn Fn(String) -> ArrayError) -> Result<String, ArrayError> {
    Ok(match l {
        Leaf::Null => String::new(),
        Leaf::Bool(true) => "True".into(),
        Leaf::Bool(false) => "False".into(),
        Leaf::Int(i) => i.to_string(),
        Leaf::Float(f) => python_repr(f),
        Leaf::Str(s) => s.to_string(),
        Leaf::Complex(..) => return Err(err("cannot convert a complex number to a string".into())),
    })
}

// ---------------------------------------------------------------------------------------
// records

/// Whether `node` is one record of `fields` (a list with one matching entry per field).
fn is_record(node: &Node, fields: &[Field], depth: usize) -> bool {
    if depth > MAX_NDIM {
        return false;
    }
    let Some(items) = node.as_seq() else {
        return false;
    };
    items.len() == fields.len()
        && items.iter().zip(fields).all(|(item, f)| {
            if f.shape.is_empty() {
                is_value(item, &f.dtype, depth + 1)
            } else {
                is_nest(item, &f.shape, &f.dtype, depth + 1)
            }
        })
}

fn is_value(node: &Node, dt: &DType, depth: usize) -> bool {
    match dt {
        DType::Scalar { .. } => node.as_seq().is_none(),
        DType::Record(fields) => is_record(node, fields, depth),
    }
}

fn is_nest(node: &Node, shape: &[usize], dt: &DType, depth: usize) -> bool {
    match shape.split_first() {
        None => is_value(node, dt, depth),
        Some((&len, rest)) => node.as_seq().is_some_and(|items| {
            items.len() == len && items.iter().all(|it| is_nest(it, rest, dt, depth + 1))
        }),
    }
}

fn records(
    data: &Node,
    fields: &[Field],
    meta: &NdArrayMeta,
    ctx: &Ctx<'_>,
) -> Result<DynArray, ArrayError> {
    let dt = DType::Record(fields.to_vec());
    // depth of the records: given by `shape`, else the outermost level whose first entry
    // reads as a record (as python asdf drills down)
    let shape: Vec<usize> = match &meta.shape {
        Some(declared) => {
            let nd = declared.len();
            let mut shape = Vec::with_capacity(nd);
            let mut cur = data;
            for _ in 0..nd {
                let items = cur
                    .as_seq()
                    .ok_or_else(|| ctx.ragged(&[], "fewer list levels than the shape has"))?;
                shape.push(items.len());
                match items.first() {
                    Some(f) => cur = f,
                    None => break,
                }
            }
            if shape.len() < nd {
                // empty: the remaining dimensions are unknown; zero records either way
                shape.resize(nd, 0);
            }
            shape
        }
        None => {
            let mut shape = Vec::new();
            let mut cur = data;
            loop {
                if is_record(cur, fields, 0) {
                    break shape;
                }
                match cur.as_seq() {
                    Some(items) if shape.len() < MAX_NDIM => {
                        shape.push(items.len());
                        match items.first() {
                            Some(f) => cur = f,
                            None => break shape,
                        }
                    }
                    _ => {
                        return Err(
                            ctx.value_err(&[], "data can not be converted to the record datatype")
                        )
                    }
                }
            }
        }
    };
    let count = shape.iter().fold(1usize, |a, &d| a.saturating_mul(d));
    let mut out = alloc(count, dt.itemsize(), ctx)?;
    if count > 0 {
        let mut idx = Vec::new();
        walk(data, &shape, 0, &mut idx, ctx, true, &mut |n, i| {
            encode_value(n, &dt, &mut out, ctx, &mut i.to_vec(), 0)
        })?;
    }
    Ok(DynArray {
        dtype: dt,
        shape,
        data: out,
    })
}

/// Encodes one value of `dt` (a scalar, or a record given as a list of fields).
fn encode_value(
    node: &Node,
    dt: &DType,
    out: &mut Vec<u8>,
    ctx: &Ctx<'_>,
    idx: &mut Vec<usize>,
    depth: usize,
) -> Result<(), ArrayError> {
    if depth > MAX_NDIM {
        return Err(ctx.ragged(idx, "records nested too deeply"));
    }
    match dt {
        DType::Scalar { .. } => {
            if node.as_seq().is_some() {
                return Err(ctx.ragged(idx, "a list where an element was expected"));
            }
            let l = leaf(node, ctx, idx)?;
            encode_leaf(l, dt, out, ctx, idx)
        }
        DType::Record(fields) => {
            let items = node
                .as_seq()
                .filter(|items| items.len() == fields.len())
                .ok_or_else(|| {
                    ctx.ragged(
                        idx,
                        format!("a record needs a list of {} fields", fields.len()),
                    )
                })?;
            for (k, (item, f)) in items.iter().zip(fields).enumerate() {
                idx.push(k);
                if f.shape.is_empty() {
                    encode_value(item, &f.dtype, out, ctx, idx, depth + 1)?;
                } else {
                    let mut sub_idx = idx.clone();
                    let base = sub_idx.len();
                    walk(
                        item,
                        &f.shape,
                        0,
                        &mut sub_idx,
                        ctx,
                        f.dtype.fields().is_some(),
                        &mut |n, i| encode_value(n, &f.dtype, out, ctx, &mut i.to_vec(), depth + 1),
                    )?;
                    sub_idx.truncate(base);
                }
                idx.pop();
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fl(v: f64) -> Node {
        Node::new(Value::Float(v))
    }
    fn bare(node: Node) -> Result<DynArray, ArrayError> {
        from_inline(&NdArrayMeta::from_node(&node, "/a")?, "/a")
    }

    #[test]
    fn inference() {
        let a = bare(Node::seq(vec![
            Node::seq(vec![Node::int(1), Node::int(2)]),
            Node::seq(vec![Node::int(3), Node::int(-4)]),
        ]))
        .unwrap();
        assert_eq!(
            a.dtype,
            DType::scalar(ScalarType::Int64, ByteOrder::native())
        );
        assert_eq!(a.shape, vec![2, 2]);
        assert_eq!(
            a.to_array::<i64>().unwrap().into_raw_vec_and_offset().0,
            vec![1, 2, 3, -4]
        );
        let a = bare(Node::seq(vec![Node::int(1), fl(2.5)])).unwrap();
        assert_eq!(
            a.to_array::<f64>().unwrap().into_raw_vec_and_offset().0,
            vec![1.0, 2.5]
        );
        let a = bare(Node::seq(vec![
            Node::new(Value::Bool(true)),
            Node::new(Value::Bool(false)),
        ]))
        .unwrap();
        assert_eq!(
            a.to_array::<bool>().unwrap().into_raw_vec_and_offset().0,
            vec![true, false]
        );
        let a = bare(Node::seq(vec![Node::new(Value::Bool(true)), Node::int(2)])).unwrap();
        assert_eq!(
            a.to_array::<i64>().unwrap().into_raw_vec_and_offset().0,
            vec![1, 2]
        );
        let a = bare(Node::seq(vec![Node::int(1 << 63)])).unwrap();
        assert_eq!(
            a.to_array::<u64>().unwrap().into_raw_vec_and_offset().0,
            vec![1 << 63]
        );
        let a = bare(Node::seq(vec![Node::int(1 << 63), Node::int(1)])).unwrap();
        assert_eq!(a.dtype.scalar_type(), Some(ScalarType::Float64));
        assert!(matches!(
            bare(Node::seq(vec![Node::int(1 << 64)])),
            Err(ArrayError::InlineValue { .. })
        ));
        let a = bare(Node::seq(vec![
            Node::str("a"),
            Node::str("bcd"),
            Node::str("é😀"),
        ]))
        .unwrap();
        assert_eq!(a.dtype.scalar_type(), Some(ScalarType::Ucs4(3)));
        assert_eq!(
            a.strings().unwrap().into_raw_vec_and_offset().0,
            vec!["a", "bcd", "é😀"]
        );
        let a = bare(Node::seq(vec![
            Node::int(1),
            Node::str("ab"),
            fl(1e300),
            Node::new(Value::Bool(false)),
        ]))
        .unwrap();
        assert_eq!(a.dtype.scalar_type(), Some(ScalarType::Ucs4(32)));
        assert_eq!(
            a.strings().unwrap().into_raw_vec_and_offset().0,
            vec!["1", "ab", "1e+300", "False"]
        );
        let a = bare(Node::seq(vec![])).unwrap();
        assert_eq!(
            (a.dtype.scalar_type(), a.shape),
            (Some(ScalarType::Float64), vec![0])
        );
        let a = bare(Node::seq(vec![Node::seq(vec![]), Node::seq(vec![])])).unwrap();
        assert_eq!(a.shape, vec![2, 0]);
        let c = Node::tagged(
            "tag:stsci.edu:asdf/core/complex-1.0.0",
            Value::Str("(1-2j)".into()),
        );
        let a = bare(Node::seq(vec![c, Node::int(3)])).unwrap();
        assert_eq!(a.dtype.scalar_type(), Some(ScalarType::Complex128));
        assert_eq!(
            a.to_array::<num_complex::Complex<f64>>()
                .unwrap()
                .into_raw_vec_and_offset()
                .0,
            vec![
                num_complex::Complex::new(1.0, -2.0),
                num_complex::Complex::new(3.0, 0.0)
            ]
        );
    }

    #[test]
    fn ragged_and_bad_elements_error() {
        for node in [
            Node::seq(vec![
                Node::seq(vec![Node::int(1), Node::int(2)]),
                Node::seq(vec![Node::int(3)]),
            ]),
            Node::seq(vec![
                Node::seq(vec![Node::int(1), Node::int(2)]),
                Node::int(3),
            ]),
            Node::seq(vec![Node::int(3), Node::seq(vec![Node::int(1)])]),
            Node::seq(vec![Node::seq(vec![]), Node::seq(vec![Node::int(1)])]),
        ] {
            assert!(matches!(bare(node), Err(ArrayError::Ragged { ref path, .. }) if path == "/a"));
        }
        assert!(matches!(
            bare(Node::seq(vec![Node::map(Vec::<(&str, Node)>::new())])),
            Err(ArrayError::InlineValue { .. })
        ));
        let mut deep = Node::int(1);
        for _ in 0..100 {
            deep = Node::seq(vec![deep]);
        }
        assert!(matches!(bare(deep), Err(ArrayError::Ragged { .. })));
    }

    fn typed(data: Node, datatype: Node) -> Result<DynArray, ArrayError> {
        let node = Node::map(vec![("data", data), ("datatype", datatype)]);
        from_inline(&NdArrayMeta::from_node(&node, "/t")?, "/t")
    }

    #[test]
    fn explicit_datatypes_convert_like_numpy() {
        let a = typed(Node::seq(vec![fl(1.7), fl(-1.7)]), Node::str("int16")).unwrap();
        assert_eq!(
            a.to_array::<i16>().unwrap().into_raw_vec_and_offset().0,
            vec![1, -1]
        );
        assert!(matches!(
            typed(Node::seq(vec![Node::int(300)]), Node::str("uint8")),
            Err(ArrayError::InlineValue { .. })
        ));
        assert!(matches!(
            typed(Node::seq(vec![Node::int(-1)]), Node::str("uint64")),
            Err(ArrayError::InlineValue { .. })
        ));
        assert!(matches!(
            typed(Node::seq(vec![fl(f64::NAN)]), Node::str("int32")),
            Err(ArrayError::InlineValue { .. })
        ));
        let a = typed(
            Node::seq(vec![Node::int(0), Node::int(2), fl(0.5)]),
            Node::str("bool8"),
        )
        .unwrap();
        assert_eq!(a.data, vec![0, 1, 1]);
        let a = typed(
            Node::seq(vec![fl(1.5), Node::int(65504), fl(1e6)]),
            Node::str("float16"),
        )
        .unwrap();
        let v = a.to_array::<f16>().unwrap().into_raw_vec_and_offset().0;
        assert_eq!(v[0], f16::from_f32(1.5));
        assert_eq!(v[1], f16::MAX);
        assert!(v[2].is_infinite());
        let a = typed(
            Node::seq(vec![Node::str("ab"), Node::str("abcdef")]),
            Node::seq(vec![Node::str("ascii"), Node::int(3)]),
        )
        .unwrap();
        assert_eq!(a.data, b"ab\0abc".to_vec());
        assert!(matches!(
            typed(
                Node::seq(vec![Node::str("é")]),
                Node::seq(vec![Node::str("ascii"), Node::int(3)])
            ),
            Err(ArrayError::InlineValue { .. })
        ));
        let a = typed(
            Node::seq(vec![Node::str("é"), Node::int(12)]),
            Node::seq(vec![Node::str("ucs4"), Node::int(2)]),
        )
        .unwrap();
        assert_eq!(
            a.strings().unwrap().into_raw_vec_and_offset().0,
            vec!["é", "12"]
        );
        assert_eq!(a.data.len(), 16);
        let a = typed(Node::seq(vec![Node::str(" 7 ")]), Node::str("int8")).unwrap();
        assert_eq!(a.data, vec![7]);
        // a huge declared string width is refused before allocating
        assert!(matches!(
            typed(
                Node::seq(vec![Node::str("x")]),
                Node::seq(vec![Node::str("ucs4"), Node::int(1 << 40)])
            ),
            Err(ArrayError::TooLarge { .. })
        ));
    }

    #[test]
    fn declared_shape_must_match() {
        let node = Node::map(vec![
            (
                "data",
                Node::seq(vec![Node::seq(vec![Node::int(1), Node::int(2)])]),
            ),
            ("shape", Node::seq(vec![Node::int(2), Node::int(1)])),
        ]);
        let meta = NdArrayMeta::from_node(&node, "/s").unwrap();
        assert_eq!(
            from_inline(&meta, "/s"),
            Err(ArrayError::ShapeMismatch {
                path: "/s".into(),
                declared: vec![Some(2), Some(1)],
                actual: vec![1, 2]
            })
        );
        let node = Node::map(vec![
            ("data", Node::seq(vec![])),
            ("shape", Node::seq(vec![Node::int(0), Node::int(3)])),
        ]);
        let meta = NdArrayMeta::from_node(&node, "/s").unwrap();
        assert_eq!(from_inline(&meta, "/s").unwrap().shape, vec![0, 3]);
    }

    #[test]
    fn records_inline() {
        let dt = Node::seq(vec![
            Node::map(vec![
                ("name", Node::str("a")),
                ("datatype", Node::str("int8")),
            ]),
            Node::map(vec![
                ("name", Node::str("b")),
                ("datatype", Node::str("int16")),
                ("shape", Node::seq(vec![Node::int(2)])),
                ("byteorder", Node::str("big")),
            ]),
            Node::map(vec![
                ("name", Node::str("c")),
                (
                    "datatype",
                    Node::seq(vec![Node::str("ascii"), Node::int(2)]),
                ),
            ]),
        ]);
        let data = Node::seq(vec![
            Node::seq(vec![
                Node::int(1),
                Node::seq(vec![Node::int(2), Node::int(3)]),
                Node::str("xy"),
            ]),
            Node::seq(vec![
                Node::int(-1),
                Node::seq(vec![Node::int(4), Node::int(5)]),
                Node::str("z"),
            ]),
        ]);
        let a = typed(data, dt.clone()).unwrap();
        assert_eq!(a.shape, vec![2]);
        assert_eq!(
            a.data,
            vec![1, 0, 2, 0, 3, b'x', b'y', 0xff, 0, 4, 0, 5, b'z', 0]
        );
        // nested one level deeper: shape [1, 2]
        let data2 = Node::seq(vec![Node::seq(vec![
            Node::seq(vec![
                Node::int(1),
                Node::seq(vec![Node::int(2), Node::int(3)]),
                Node::str("xy"),
            ]),
            Node::seq(vec![
                Node::int(-1),
                Node::seq(vec![Node::int(4), Node::int(5)]),
                Node::str("z"),
            ]),
        ])]);
        assert_eq!(typed(data2, dt.clone()).unwrap().shape, vec![1, 2]);
        // malformed rows
        let bad = Node::seq(vec![Node::seq(vec![
            Node::int(1),
            Node::int(2),
            Node::str("xy"),
        ])]);
        assert!(typed(bad, dt.clone()).is_err());
        let bad = Node::seq(vec![
            Node::seq(vec![
                Node::int(1),
                Node::seq(vec![Node::int(2), Node::int(3)]),
                Node::str("xy"),
            ]),
            Node::seq(vec![Node::int(1)]),
        ]);
        assert!(typed(bad, dt).is_err());
    }

    #[test]
    fn nulls_are_zero_and_reported_in_the_mask() {
        let node = Node::seq(vec![Node::int(1), Node::new(Value::Null), Node::int(3)]);
        let meta = NdArrayMeta::from_node(&node, "/m").unwrap();
        let a = from_inline(&meta, "/m").unwrap();
        assert_eq!(
            a.to_array::<i64>().unwrap().into_raw_vec_and_offset().0,
            vec![1, 0, 3]
        );
        let mask = inline_null_mask(&meta, "/m").unwrap().unwrap();
        assert_eq!(mask.into_raw_vec_and_offset().0, vec![false, true, false]);
        let none = NdArrayMeta::from_node(&Node::seq(vec![Node::int(1)]), "/m").unwrap();
        assert_eq!(inline_null_mask(&none, "/m").unwrap(), None);
    }
}

#[cfg(test)]
mod prop_tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_node() -> impl Strategy<Value = Node> {
        let leaf = prop_oneof![
            Just(Node::new(Value::Null)),
            any::<bool>().prop_map(|b| Node::new(Value::Bool(b))),
            any::<i64>().prop_map(|v| Node::new(Value::Int(Integer::Small(v.into())))),
            (-300i128..300).prop_map(|v| Node::new(Value::Int(Integer::Small(v)))),
            any::<f64>().prop_map(|v| Node::new(Value::Float(v))),
            "[a-zé😀 ]{0,4}".prop_map(Node::str),
            "[-+0-9.ejnfa() ]{0,6}"
                .prop_map(|s| Node::tagged("tag:stsci.edu:asdf/core/complex-1.0.0", Value::Str(s))),
        ];
        leaf.prop_recursive(4, 40, 4, |inner| {
            proptest::collection::vec(inner, 0..4).prop_map(|v| Node::new(Value::Seq(v)))
        })
    }

    fn arb_datatype() -> impl Strategy<Value = Option<Node>> {
        let names = [
            "int8",
            "uint8",
            "int16",
            "uint64",
            "float16",
            "float32",
            "float64",
            "complex64",
            "bool8",
        ];
        prop_oneof![
            Just(None),
            proptest::sample::select(names.to_vec()).prop_map(|n| Some(Node::str(n))),
            (0i128..4).prop_map(|n| Some(Node::new(Value::Seq(vec![
                Node::str("ascii"),
                Node::new(Value::Int(Integer::Small(n)))
            ])))),
            (0i128..4).prop_map(|n| Some(Node::new(Value::Seq(vec![
                Node::str("ucs4"),
                Node::new(Value::Int(Integer::Small(n)))
            ])))),
            Just(Some(Node::new(Value::Seq(vec![
                Node::str("int8"),
                Node::str("float32")
            ])))),
        ]
    }

    proptest! {
        #[test]
        fn inline_never_panics_and_sizes_agree(data in arb_node(), dt in arb_datatype()) {
            let mut entries = vec![(Node::str("data"), data)];
            if let Some(dt) = dt {
                entries.push((Node::str("datatype"), dt));
            }
            let node = Node::new(Value::Map(entries));
            if let Ok(meta) = NdArrayMeta::from_node(&node, "/p") {
                if let Ok(a) = from_inline(&meta, "/p") {
                    prop_assert_eq!(a.data.len(), a.element_count() * a.dtype.itemsize());
                    let _ = a.canonical_sha256_hex();
                    let _ = a.strings();
                }
            }
        }
    }
}
