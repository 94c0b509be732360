//! [`ToAsdf`] and [`FromAsdf`] for std types, `ndarray` arrays, complex numbers and
//! [`Node`].

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

use ndarray::{ArrayBase, Data, Dimension};
use num_complex::Complex;

use super::ArrayItem;
use super::{
    ConvertError, ConvertErrorKind, Extra, FromAsdf, FromContext, OrderedMap, ToAsdf, ToContext,
};
use crate::array::{self, DynArray, NdArrayMeta, WriteArray};
use crate::yaml::describe;
use crate::yaml::pytext::complex_repr;
use crate::yaml::pytext::parse_complex;
use crate::yaml::{Integer, Node, Value, MAX_LITERAL_INT, MIN_LITERAL_INT};

const ASDF: &str = "tag:stsci.edu:asdf/";

/// The inline ndarray node of `a` (used without a writer).
pub(super) fn inline_array_node(a: &DynArray, ndarray_tag: &str) -> Result<Node, ConvertErrorKind> {
    array::inline_node(a, ndarray_tag).ok_or_else(|| {
        ConvertErrorKind::Custom(format!(
            "a {} array of shape {:?} cannot be stored inline; write it with a writer",
            a.dtype.name(),
            a.shape
        ))
    })
}

/// Reads an inline ndarray node (used without a file).
pub(super) fn inline_array(node: &Node, path: &str) -> Result<DynArray, ConvertErrorKind> {
    let meta =
        NdArrayMeta::from_node(node, path).map_err(|e| ConvertErrorKind::Array(Box::new(e)))?;
    if !matches!(meta.source, array::ArraySource::Inline(_)) {
        return Err(ConvertErrorKind::Custom(
            "the array's data is in a block; read it through its file".into(),
        ));
    }
    array::from_inline(&meta, path).map_err(|e| ConvertErrorKind::Array(Box::new(e)))
}

fn expected(ctx: &FromContext<'_>, what: &str, node: &Node) -> ConvertError {
    ctx.error(ConvertErrorKind::Expected {
        expected: what.to_string(),
        found: describe(node),
    })
}

fn core_tag(name: &str, version: &str) -> String {
    format!("{ASDF}core/{name}-{version}")
}

pub(super) fn is_core_tag(tag: Option<&str>, name: &str) -> bool {
    tag.and_then(|t| t.strip_prefix(ASDF))
        .and_then(|t| t.strip_prefix("core/"))
        .and_then(|t| t.strip_prefix(name))
        .is_some_and(|rest| rest.starts_with('-'))
}

/// An ndarray, or a chunked array stored the asdf-zarr way (`zarr-1.*`: `file/zarr.rs`
/// reads it), which the file's array loader reads alike.
fn is_array_tag(tag: Option<&str>) -> bool {
    is_core_tag(tag, "ndarray")
        || tag.is_some_and(|t| t.starts_with("asdf://asdf-format.org/zarr/tags/zarr-1."))
}

// ---------------------------------------------------------------- Node and Extra

impl ToAsdf for Node {
    fn to_asdf<'a>(&'a self, _ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        Ok(self.clone())
    }
}

impl FromAsdf for Node {
    fn from_asdf(node: &Node, _ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        Ok(node.clone())
    }
}

impl ToAsdf for Extra {
    fn to_asdf<'a>(&'a self, _ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        Ok(Node::new(Value::Map(self.0.clone())))
    }

    fn is_absent(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromAsdf for Extra {
    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        match node.value() {
            Value::Map(m) => Ok(Extra(m.clone())),
            Value::Null => Ok(Extra::default()),
            _ => Err(expected(ctx, "a mapping", node)),
        }
    }

    fn absent() -> Option<Self> {
        Some(Extra::default())
    }
}

// ---------------------------------------------------------------- scalars

impl ToAsdf for bool {
    fn to_asdf<'a>(&'a self, _ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        Ok(Node::new(Value::Bool(*self)))
    }
}

impl FromAsdf for bool {
    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        node.as_bool()
            .ok_or_else(|| expected(ctx, "a boolean", node))
    }
}

/// An integer: a literal within python asdf's literal range, `core/integer` (32-bit words in
/// an array, which python converts to an int) beyond it.
fn write_int(v: i128, ctx: &mut ToContext<'_, '_>) -> Result<Node, ConvertError> {
    if (MIN_LITERAL_INT..=MAX_LITERAL_INT).contains(&v) {
        return Ok(Node::int(v));
    }
    let magnitude = v.unsigned_abs();
    big_integer_node(magnitude, v < 0, &v.to_string(), ctx)
}

/// A `core/integer` node: little-endian 32-bit words (an array through `ctx`), the sign and
/// the decimal text.
pub(crate) fn big_integer_node(
    magnitude: u128,
    negative: bool,
    text: &str,
    ctx: &mut ToContext<'_, '_>,
) -> Result<Node, ConvertError> {
    let mut words: Vec<u32> = Vec::new();
    let mut m = magnitude;
    while m > 0 {
        words.push((m & 0xFFFF_FFFF) as u32);
        m >>= 32;
    }
    let arr = ndarray::Array1::from_vec(words).into_dyn();
    let words_node = ctx.key("words", |ctx| ctx.add_array(WriteArray::from(arr)))?;
    let version = ctx.standard().array_tag_version();
    Ok(Node::tagged(
        core_tag("integer", version),
        Value::Map(vec![
            (Node::str("words"), words_node),
            (
                Node::str("sign"),
                Node::str(if negative { "-" } else { "+" }),
            ),
            (Node::str("string"), Node::str(text)),
        ]),
    ))
}

/// Reads an integer literal or a `core/integer` node as an i128 (or the text of a larger
/// one).
fn read_int(node: &Node, ctx: &mut FromContext<'_>) -> Result<Result<i128, String>, ConvertError> {
    if let Some(i) = node.as_int() {
        return Ok(match i {
            Integer::Small(v) => Ok(*v),
            Integer::Big(s) => Err(s.clone()),
        });
    }
    if is_core_tag(node.tag(), "integer") {
        let words = node
            .get("words")
            .ok_or_else(|| ctx.error(ConvertErrorKind::MissingKey("words".into())))?;
        let sign = node.get("sign").and_then(Node::as_str).unwrap_or("+");
        let arr = ctx.key("words", |ctx| ctx.load_array(words))?;
        let words_array = arr
            .to_array::<u32>()
            .map_err(|e| ctx.error(ConvertErrorKind::Array(Box::new(e))))?;
        let values: Vec<u64> = words_array.iter().map(|&w| u64::from(w)).collect();
        let mut magnitude: u128 = 0;
        for &w in values.iter().rev() {
            if magnitude >> 96 != 0 {
                let text = node.get("string").and_then(Node::as_str).unwrap_or("");
                return Ok(Err(text.to_string()));
            }
            magnitude = (magnitude << 32) | u128::from(w);
        }
        let v = if sign == "-" {
            match i128::try_from(magnitude) {
                Ok(v) => -v,
                Err(_) if magnitude == i128::MIN.unsigned_abs() => i128::MIN,
                Err(_) => return Ok(Err(format!("-{magnitude}"))),
            }
        } else {
            match i128::try_from(magnitude) {
                Ok(v) => v,
                Err(_) => return Ok(Err(magnitude.to_string())),
            }
        };
        return Ok(Ok(v));
    }
    Err(expected(ctx, "an integer", node))
}

macro_rules! int_impl {
    ($($t:ty),*) => {$(
        impl ToAsdf for $t {
            fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
                write_int(*self as i128, ctx)
            }
        }

        impl FromAsdf for $t {
            fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
                let out_of_range = |ctx: &FromContext<'_>, value: String| {
                    ctx.error(ConvertErrorKind::OutOfRange { value, ty: stringify!($t) })
                };
                match read_int(node, ctx)? {
                    Ok(v) => <$t>::try_from(v).map_err(|_| out_of_range(ctx, v.to_string())),
                    Err(text) => Err(out_of_range(ctx, text)),
                }
            }
        }
    )*};
}

int_impl!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, usize);

impl ToAsdf for u128 {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        match i128::try_from(*self) {
            Ok(v) => write_int(v, ctx),
            Err(_) => big_integer_node(*self, false, &self.to_string(), ctx),
        }
    }
}

impl FromAsdf for u128 {
    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        let out_of_range = |ctx: &FromContext<'_>, value: String| {
            ctx.error(ConvertErrorKind::OutOfRange { value, ty: "u128" })
        };
        match read_int(node, ctx)? {
            Ok(v) => u128::try_from(v).map_err(|_| out_of_range(ctx, v.to_string())),
            Err(text) => text.parse::<u128>().map_err(|_| out_of_range(ctx, text)),
        }
    }
}

macro_rules! float_impl {
    ($($t:ty),*) => {$(
        impl ToAsdf for $t {
            fn to_asdf<'a>(&'a self, _ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
                Ok(Node::new(Value::Float(f64::from(*self))))
            }
        }

        impl FromAsdf for $t {
            fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
                // integers are numbers too (YAML writes 1.0 as 1.0, but users write 1)
                match node.value() {
                    Value::Float(v) => Ok(*v as $t),
                    Value::Int(Integer::Small(v)) => Ok(*v as $t),
                    Value::Int(Integer::Big(s)) => s
                        .parse::<f64>()
                        .map(|v| v as $t)
                        .map_err(|_| expected(ctx, "a number", node)),
                    _ => Err(expected(ctx, "a number", node)),
                }
            }
        }
    )*};
}

float_impl!(f32, f64);

impl ToAsdf for str {
    fn to_asdf<'a>(&'a self, _ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        Ok(Node::str(self))
    }
}

impl ToAsdf for String {
    fn to_asdf<'a>(&'a self, _ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        Ok(Node::str(self.as_str()))
    }
}

impl FromAsdf for String {
    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        match node.value() {
            Value::Str(s) => Ok(s.clone()),
            _ => Err(expected(ctx, "a string", node)),
        }
    }
}

// ---------------------------------------------------------------- complex

macro_rules! complex_impl {
    ($($t:ty),*) => {$(
        impl ToAsdf for Complex<$t> {
            fn tag() -> Option<&'static str> {
                Some("tag:stsci.edu:asdf/core/complex-1.0.0")
            }

            fn to_asdf<'a>(&'a self, _ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
                Ok(Node::tagged(
                    core_tag("complex", "1.0.0"),
                    Value::Str(complex_repr(f64::from(self.re), f64::from(self.im))),
                ))
            }
        }

        impl FromAsdf for Complex<$t> {
            fn accepts_tag(tag: Option<&str>) -> bool {
                tag.is_none() || is_core_tag(tag, "complex")
            }

            fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
                if let Some(v) = node.as_f64() {
                    return Ok(Complex::new(v as $t, 0.0));
                }
                let parsed = node.as_str().and_then(parse_complex);
                match parsed {
                    Some((re, im)) => Ok(Complex::new(re as $t, im as $t)),
                    None => Err(expected(ctx, "a complex number", node)),
                }
            }
        }
    )*};
}

complex_impl!(f32, f64);

// ---------------------------------------------------------------- containers

impl<T: ToAsdf + ?Sized> ToAsdf for &T {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        (**self).to_asdf(ctx)
    }

    fn is_absent(&self) -> bool {
        (**self).is_absent()
    }
}

impl<T: ToAsdf + ?Sized> ToAsdf for Box<T> {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        (**self).to_asdf(ctx)
    }

    fn is_absent(&self) -> bool {
        (**self).is_absent()
    }
}

impl<T: FromAsdf> FromAsdf for Box<T> {
    fn accepts_tag(tag: Option<&str>) -> bool {
        T::accepts_tag(tag)
    }

    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        T::from_asdf(node, ctx).map(Box::new)
    }

    fn absent() -> Option<Self> {
        T::absent().map(Box::new)
    }
}

impl<T: ToAsdf> ToAsdf for Option<T> {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        match self {
            Some(v) => v.to_asdf(ctx),
            None => Ok(Node::new(Value::Null)),
        }
    }

    fn is_absent(&self) -> bool {
        self.is_none()
    }
}

impl<T: FromAsdf> FromAsdf for Option<T> {
    fn accepts_tag(tag: Option<&str>) -> bool {
        T::accepts_tag(tag)
    }

    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        if node.is_null() && node.tag().is_none() {
            return Ok(None);
        }
        T::from_asdf(node, ctx).map(Some)
    }

    fn absent() -> Option<Self> {
        Some(None)
    }
}

fn write_seq<'a, T: ToAsdf + 'a>(
    items: impl Iterator<Item = &'a T>,
    ctx: &mut ToContext<'_, 'a>,
) -> Result<Node, ConvertError> {
    let mut out = Vec::new();
    for (i, item) in items.enumerate() {
        out.push(ctx.index(i, |ctx| item.to_asdf(ctx))?);
    }
    Ok(Node::new(Value::Seq(out)))
}

impl<T: ToAsdf> ToAsdf for [T] {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        write_seq(self.iter(), ctx)
    }
}

impl<T: ToAsdf> ToAsdf for Vec<T> {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        write_seq(self.iter(), ctx)
    }
}

impl<T: ToAsdf, const N: usize> ToAsdf for [T; N] {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        write_seq(self.iter(), ctx)
    }
}

fn read_seq<'n>(node: &'n Node, ctx: &FromContext<'_>) -> Result<&'n [Node], ConvertError> {
    node.as_seq()
        .ok_or_else(|| expected(ctx, "a sequence", node))
}

impl<T: FromAsdf> FromAsdf for Vec<T> {
    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        let items = read_seq(node, ctx)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            out.push(ctx.index(i, |ctx| T::from_asdf(item, ctx))?);
        }
        Ok(out)
    }
}

impl<T: FromAsdf, const N: usize> FromAsdf for [T; N] {
    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        let v: Vec<T> = Vec::from_asdf(node, ctx)?;
        let found = v.len();
        v.try_into()
            .map_err(|_| ctx.error(ConvertErrorKind::Length { expected: N, found }))
    }
}

fn write_map<'a, V: ToAsdf + 'a>(
    entries: impl Iterator<Item = (&'a String, &'a V)>,
    ctx: &mut ToContext<'_, 'a>,
) -> Result<Node, ConvertError> {
    let mut out = Vec::new();
    for (k, v) in entries {
        out.push((Node::str(k.as_str()), ctx.key(k, |ctx| v.to_asdf(ctx))?));
    }
    Ok(Node::new(Value::Map(out)))
}

fn read_map<V: FromAsdf>(
    node: &Node,
    ctx: &mut FromContext<'_>,
    mut put: impl FnMut(String, V),
) -> Result<(), ConvertError> {
    let entries = node
        .as_map()
        .ok_or_else(|| expected(ctx, "a mapping", node))?;
    for (k, v) in entries {
        let key = match k.value() {
            Value::Str(s) => s.clone(),
            Value::Int(i) => i.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => return Err(expected(ctx, "string keys", k)),
        };
        let value = ctx.key(&key, |ctx| V::from_asdf(v, ctx))?;
        put(key, value);
    }
    Ok(())
}

impl<V: ToAsdf> ToAsdf for BTreeMap<String, V> {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        write_map(self.iter(), ctx)
    }
}

impl<V: FromAsdf> FromAsdf for BTreeMap<String, V> {
    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        let mut out = BTreeMap::new();
        read_map(node, ctx, |k, v| {
            out.insert(k, v);
        })?;
        Ok(out)
    }
}

/// Written with keys sorted, so the output does not depend on the hasher.
impl<V: ToAsdf, S: BuildHasher> ToAsdf for HashMap<String, V, S> {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        let mut entries: Vec<_> = self.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        write_map(entries.into_iter(), ctx)
    }
}

impl<V: FromAsdf, S: BuildHasher + Default> FromAsdf for HashMap<String, V, S> {
    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        let mut out = HashMap::default();
        read_map(node, ctx, |k, v| {
            out.insert(k, v);
        })?;
        Ok(out)
    }
}

impl<V: ToAsdf> ToAsdf for OrderedMap<V> {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        write_map(self.0.iter().map(|(k, v)| (k, v)), ctx)
    }
}

impl<V: FromAsdf> FromAsdf for OrderedMap<V> {
    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        let mut out = Vec::new();
        read_map(node, ctx, |k, v| out.push((k, v)))?;
        Ok(OrderedMap(out))
    }
}

macro_rules! tuple_impl {
    ($n:literal; $($name:ident $idx:tt),+) => {
        impl<$($name: ToAsdf),+> ToAsdf for ($($name,)+) {
            fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
                Ok(Node::new(Value::Seq(vec![
                    $(ctx.index($idx, |ctx| self.$idx.to_asdf(ctx))?,)+
                ])))
            }
        }

        impl<$($name: FromAsdf),+> FromAsdf for ($($name,)+) {
            fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
                let items = read_seq(node, ctx)?;
                if items.len() != $n {
                    return Err(ctx.error(ConvertErrorKind::Length { expected: $n, found: items.len() }));
                }
                Ok(($(
                    ctx.index($idx, |ctx| $name::from_asdf(&items[$idx], ctx))?,
                )+))
            }
        }
    };
}

tuple_impl!(1; A 0);
tuple_impl!(2; A 0, B 1);
tuple_impl!(3; A 0, B 1, C 2);
tuple_impl!(4; A 0, B 1, C 2, D 3);
tuple_impl!(5; A 0, B 1, C 2, D 3, E 4);
tuple_impl!(6; A 0, B 1, C 2, D 3, E 4, F 5);

// ---------------------------------------------------------------- arrays

impl<T, S, D> ToAsdf for ArrayBase<S, D>
where
    T: ArrayItem,
    S: Data<Elem = T>,
    D: Dimension,
{
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        T::write_array(self, ctx)
    }
}

impl<T, D> FromAsdf for ndarray::Array<T, D>
where
    T: ArrayItem,
    D: Dimension,
{
    fn accepts_tag(tag: Option<&str>) -> bool {
        is_array_tag(tag)
    }

    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        if !is_array_tag(node.tag()) {
            return Err(expected(ctx, "an ndarray", node));
        }
        let dynamic = ctx.load_array(node)?;
        let array = T::read_array(dynamic, ctx)?;
        let ndim = array.ndim();
        array.into_dimensionality::<D>().map_err(|_| {
            ctx.error(ConvertErrorKind::Expected {
                expected: format!("an array of {} dimensions", D::NDIM.unwrap_or(ndim)),
                found: format!("{ndim} dimensions"),
            })
        })
    }
}

impl ToAsdf for DynArray {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        ctx.add_array(WriteArray::from(self))
    }
}

impl FromAsdf for DynArray {
    fn accepts_tag(tag: Option<&str>) -> bool {
        is_array_tag(tag)
    }

    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        if !is_array_tag(node.tag()) {
            return Err(expected(ctx, "an ndarray", node));
        }
        ctx.load_array(node)
    }
}
