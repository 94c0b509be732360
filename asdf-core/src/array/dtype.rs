//! Element datatypes: [`ScalarType`], [`DType`] (scalar or record), [`ByteOrder`], and their
//! ASDF (`datatype`), numpy (`"<f8"`) and human (`float64`) spellings.

use std::fmt;

use super::ArrayError;
use crate::yaml::{describe, Node, Value};

/// Byte order of multi-byte elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Least significant byte first (`little`, numpy `<`).
    Little,
    /// Most significant byte first (`big`, numpy `>`).
    Big,
}

impl ByteOrder {
    /// The byte order of the machine running this code.
    pub const fn native() -> ByteOrder {
        if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    }

    /// Whether this is the native byte order.
    pub fn is_native(self) -> bool {
        self == ByteOrder::native()
    }

    /// The ASDF spelling, `little` or `big`.
    pub fn as_str(self) -> &'static str {
        match self {
            ByteOrder::Little => "little",
            ByteOrder::Big => "big",
        }
    }

    /// Parses the ASDF spelling `little` / `big`.
    pub fn parse(s: &str) -> Option<ByteOrder> {
        match s {
            "little" => Some(ByteOrder::Little),
            "big" => Some(ByteOrder::Big),
            _ => None,
        }
    }

    fn numpy_char(self) -> char {
        match self {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
        }
    }
}

/// The type of one scalar element.
///
/// Non-exhaustive: new datatypes of later standards become new variants.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `int8`
    Int8,
    /// `int16`
    Int16,
    /// `int32`
    Int32,
    /// `int64`
    Int64,
    /// `uint8`
    UInt8,
    /// `uint16`
    UInt16,
    /// `uint32`
    UInt32,
    /// `uint64`
    UInt64,
    /// `float16` (ndarray-1.1.0 and later)
    Float16,
    /// `float32`
    Float32,
    /// `float64`
    Float64,
    /// `complex64`: two `float32`, real then imaginary
    Complex64,
    /// `complex128`: two `float64`, real then imaginary
    Complex128,
    /// `bool8`: one byte, nonzero is true
    Bool8,
    /// `[ascii, N]`: N bytes, NUL padded
    Ascii(usize),
    /// `[ucs4, N]`: N code points of 4 bytes each, NUL padded
    Ucs4(usize),
}

pub(crate) const NAMED_SCALARS: [(&str, ScalarType); 14] = [
    ("int8", ScalarType::Int8),
    ("int16", ScalarType::Int16),
    ("int32", ScalarType::Int32),
    ("int64", ScalarType::Int64),
    ("uint8", ScalarType::UInt8),
    ("uint16", ScalarType::UInt16),
    ("uint32", ScalarType::UInt32),
    ("uint64", ScalarType::UInt64),
    ("float16", ScalarType::Float16),
    ("float32", ScalarType::Float32),
    ("float64", ScalarType::Float64),
    ("complex64", ScalarType::Complex64),
    ("complex128", ScalarType::Complex128),
    ("bool8", ScalarType::Bool8),
];

impl ScalarType {
    /// Parses a named numeric type (`float64`, `bool8`, ...); strings are not named types.
    pub fn from_name(name: &str) -> Option<ScalarType> {
        NAMED_SCALARS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
    }

    /// Size of one element in bytes (saturating for absurd string widths).
    pub fn itemsize(self) -> usize {
        match self {
            ScalarType::Int8 | ScalarType::UInt8 | ScalarType::Bool8 => 1,
            ScalarType::Int16 | ScalarType::UInt16 | ScalarType::Float16 => 2,
            ScalarType::Int32 | ScalarType::UInt32 | ScalarType::Float32 => 4,
            ScalarType::Int64
            | ScalarType::UInt64
            | ScalarType::Float64
            | ScalarType::Complex64 => 8,
            ScalarType::Complex128 => 16,
            ScalarType::Ascii(n) => n,
            ScalarType::Ucs4(n) => n.saturating_mul(4),
        }
    }

    /// Whether the byte order matters for this type (false for one-byte types and ascii).
    pub fn has_byteorder(self) -> bool {
        !matches!(
            self,
            ScalarType::Int8 | ScalarType::UInt8 | ScalarType::Bool8 | ScalarType::Ascii(_)
        )
    }

    /// The ASDF / human name: `float64`, `ascii[8]`, `ucs4[4]`.
    pub fn name(self) -> String {
        match self {
            ScalarType::Ascii(n) => format!("ascii[{n}]"),
            ScalarType::Ucs4(n) => format!("ucs4[{n}]"),
            other => NAMED_SCALARS
                .iter()
                .find(|(_, t)| *t == other)
                .map(|(n, _)| (*n).to_string())
                .unwrap_or_default(),
        }
    }

    /// numpy kind and size, without byte order: `f8`, `S4`, `U3`, `b1`.
    fn numpy_code(self) -> String {
        match self {
            ScalarType::Int8 => "i1".into(),
            ScalarType::Int16 => "i2".into(),
            ScalarType::Int32 => "i4".into(),
            ScalarType::Int64 => "i8".into(),
            ScalarType::UInt8 => "u1".into(),
            ScalarType::UInt16 => "u2".into(),
            ScalarType::UInt32 => "u4".into(),
            ScalarType::UInt64 => "u8".into(),
            ScalarType::Float16 => "f2".into(),
            ScalarType::Float32 => "f4".into(),
            ScalarType::Float64 => "f8".into(),
            ScalarType::Complex64 => "c8".into(),
            ScalarType::Complex128 => "c16".into(),
            ScalarType::Bool8 => "b1".into(),
            ScalarType::Ascii(n) => format!("S{n}"),
            ScalarType::Ucs4(n) => format!("U{n}"),
        }
    }
}

/// A field of a record (structured) datatype.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    /// Field name (`f0`, `f1`, ... for unnamed fields, as numpy names them).
    pub name: String,
    /// The field's datatype (itself possibly a record).
    pub dtype: DType,
    /// Subarray shape; empty for a plain field.
    pub shape: Vec<usize>,
}

impl Field {
    /// Number of elements of the subarray (1 for a plain field).
    pub fn count(&self) -> usize {
        self.shape
            .iter()
            .fold(1usize, |acc, &d| acc.saturating_mul(d))
    }

    /// Bytes the field occupies in a record.
    pub fn size(&self) -> usize {
        self.dtype.itemsize().saturating_mul(self.count())
    }
}

/// The datatype of an array's elements.
///
/// Non-exhaustive: new datatypes of later standards become new variants.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// A scalar element stored in `byteorder`.
    Scalar {
        /// The scalar type.
        ty: ScalarType,
        /// Its byte order (meaningless for one-byte types and ascii).
        byteorder: ByteOrder,
    },
    /// A packed record of fields, in declared order, without padding.
    Record(Vec<Field>),
}

/// Errors found while parsing a datatype, located by a pointer below `datatype`.
fn bad(path: &str, key: &str, message: impl Into<String>) -> ArrayError {
    ArrayError::BadValue {
        path: path.into(),
        key: key.to_string(),
        message: message.into(),
    }
}

/// Deepest record nesting accepted (the tree itself is finite; this keeps recursion shallow).
const MAX_DTYPE_DEPTH: usize = 64;

impl DType {
    /// A scalar datatype.
    pub fn scalar(ty: ScalarType, byteorder: ByteOrder) -> DType {
        DType::Scalar { ty, byteorder }
    }

    /// Size of one element in bytes (records: the sum of their fields, no padding).
    ///
    /// Saturates instead of overflowing; datatypes parsed by [`DType::from_node`] never do.
    pub fn itemsize(&self) -> usize {
        match self {
            DType::Scalar { ty, .. } => ty.itemsize(),
            DType::Record(fields) => fields
                .iter()
                .fold(0usize, |acc, f| acc.saturating_add(f.size())),
        }
    }

    fn checked_itemsize(&self) -> Option<usize> {
        match self {
            DType::Scalar { ty, .. } => match ty {
                ScalarType::Ucs4(n) => n.checked_mul(4),
                t => Some(t.itemsize()),
            },
            DType::Record(fields) => fields.iter().try_fold(0usize, |acc, f| {
                let count = f.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
                acc.checked_add(f.dtype.checked_itemsize()?.checked_mul(count)?)
            }),
        }
    }

    /// The scalar type, if this is a scalar datatype.
    pub fn scalar_type(&self) -> Option<ScalarType> {
        match self {
            DType::Scalar { ty, .. } => Some(*ty),
            DType::Record(_) => None,
        }
    }

    /// The record fields, if this is a record datatype.
    pub fn fields(&self) -> Option<&[Field]> {
        match self {
            DType::Record(f) => Some(f),
            DType::Scalar { .. } => None,
        }
    }

    /// The same datatype with every byte order (fields included) set to `byteorder`.
    pub fn with_byteorder(&self, byteorder: ByteOrder) -> DType {
        match self {
            DType::Scalar { ty, .. } => DType::Scalar { ty: *ty, byteorder },
            DType::Record(fields) => DType::Record(
                fields
                    .iter()
                    .map(|f| Field {
                        name: f.name.clone(),
                        dtype: f.dtype.with_byteorder(byteorder),
                        shape: f.shape.clone(),
                    })
                    .collect(),
            ),
        }
    }

    /// Parses an ASDF `datatype` value.
    ///
    /// `default_byteorder` applies to every scalar without its own `byteorder` (record fields
    /// may override it). `path` is the tree path of the `datatype` node, used in errors.
    pub fn from_node(
        datatype: &Node,
        default_byteorder: ByteOrder,
        path: &str,
    ) -> Result<DType, ArrayError> {
        let dt = Self::parse(datatype, default_byteorder, path, 0)?;
        if dt.checked_itemsize().is_none() {
            return Err(ArrayError::ShapeOverflow { path: path.into() });
        }
        Ok(dt)
    }

    fn parse(
        node: &Node,
        byteorder: ByteOrder,
        path: &str,
        depth: usize,
    ) -> Result<DType, ArrayError> {
        if depth > MAX_DTYPE_DEPTH {
            return Err(bad(path, "datatype", "records nested too deeply"));
        }
        match node.value() {
            Value::Str(s) => match ScalarType::from_name(s) {
                Some(ty) => Ok(DType::Scalar { ty, byteorder }),
                None => Err(ArrayError::UnknownDatatype {
                    path: path.into(),
                    datatype: describe(node),
                }),
            },
            Value::Seq(items) => {
                if let Some(ty) = string_type(items, path)? {
                    return Ok(DType::Scalar { ty, byteorder });
                }
                if items.is_empty() {
                    return Err(bad(path, "datatype", "empty record datatype"));
                }
                let mut fields: Vec<Field> = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let ipath = format!("{path}/{i}");
                    let field = Self::parse_field(item, i, byteorder, &ipath, depth)?;
                    if fields.iter().any(|f| f.name == field.name) {
                        return Err(bad(
                            &ipath,
                            "name",
                            format!("duplicate field name {:?}", field.name),
                        ));
                    }
                    fields.push(field);
                }
                Ok(DType::Record(fields))
            }
            _ => Err(ArrayError::UnknownDatatype {
                path: path.into(),
                datatype: describe(node),
            }),
        }
    }

    fn parse_field(
        item: &Node,
        index: usize,
        byteorder: ByteOrder,
        path: &str,
        depth: usize,
    ) -> Result<Field, ArrayError> {
        let default_name = format!("f{index}");
        if item.as_map().is_none() {
            let dtype = Self::parse(item, byteorder, path, depth + 1)?;
            return Ok(Field {
                name: default_name,
                dtype,
                shape: Vec::new(),
            });
        }
        let name = match item.get("name") {
            None => default_name,
            Some(n) => match n.as_str() {
                Some("") => default_name,
                Some(s) => s.to_string(),
                None => {
                    return Err(bad(
                        path,
                        "name",
                        format!("expected a string, found {}", describe(n)),
                    ))
                }
            },
        };
        let byteorder = match item.get("byteorder") {
            None => byteorder,
            Some(b) => b.as_str().and_then(ByteOrder::parse).ok_or_else(|| {
                bad(
                    path,
                    "byteorder",
                    format!("expected little or big, found {}", describe(b)),
                )
            })?,
        };
        let shape = match item.get("shape") {
            None => Vec::new(),
            Some(s) => parse_usize_list(s, path, "shape")?,
        };
        let dt_node = item.get("datatype").ok_or_else(|| ArrayError::MissingKey {
            path: path.into(),
            key: "datatype".into(),
        })?;
        let dtype = Self::parse(dt_node, byteorder, &format!("{path}/datatype"), depth + 1)?;
        Ok(Field { name, dtype, shape })
    }

    /// numpy's spelling: `<f8`, `|S4`, `>U3` for scalars; for records numpy's `descr` form
    /// `[('id', '>i4'), ('vec', '<i2', (3,))]`.
    pub fn to_numpy_str(&self) -> String {
        match self {
            DType::Scalar { ty, byteorder } => {
                let order = if ty.has_byteorder() {
                    byteorder.numpy_char()
                } else {
                    '|'
                };
                format!("{order}{}", ty.numpy_code())
            }
            DType::Record(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|f| {
                        let inner = match &f.dtype {
                            DType::Scalar { .. } => format!("'{}'", f.dtype.to_numpy_str()),
                            DType::Record(_) => f.dtype.to_numpy_str(),
                        };
                        if f.shape.is_empty() {
                            format!("('{}', {inner})", f.name)
                        } else {
                            let dims: Vec<String> = f.shape.iter().map(|d| d.to_string()).collect();
                            let tuple = if dims.len() == 1 {
                                format!("({},)", dims[0])
                            } else {
                                format!("({})", dims.join(", "))
                            };
                            format!("('{}', {inner}, {tuple})", f.name)
                        }
                    })
                    .collect();
                format!("[{}]", parts.join(", "))
            }
        }
    }

    /// Parses numpy's spelling, the inverse of [`DType::to_numpy_str`]: a scalar (`<f8`,
    /// `>i4`, `|b1`, `|S7`, `<U5`; `=` is little-endian) or a record in numpy's `descr` form
    /// (`[('id', '<i4'), ('x', '<f8', (3,)), ('p', [('a', '|u1')])]`, `str(dtype)` of a
    /// structured dtype), as python-blosc2 stores it. `None` for anything else (object,
    /// datetime and other numpy types ASDF has no datatype for included).
    pub fn from_numpy_str(s: &str) -> Option<DType> {
        let mut p = NumpyDtypeParser {
            s: s.as_bytes(),
            i: 0,
        };
        let d = p.dtype(0)?;
        p.ws();
        (p.i == p.s.len()).then_some(d)
    }

    /// Short human name: `float64`, `ascii[8]`, `ucs4[4]`, records as
    /// `{id: int32, vec: int16[3], pos: {x: float32, y: float32}}`.
    pub fn name(&self) -> String {
        match self {
            DType::Scalar { ty, .. } => ty.name(),
            DType::Record(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|f| {
                        let mut s = format!("{}: {}", f.name, f.dtype.name());
                        if !f.shape.is_empty() {
                            let dims: Vec<String> = f.shape.iter().map(|d| d.to_string()).collect();
                            s.push_str(&format!("[{}]", dims.join(", ")));
                        }
                        s
                    })
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// `[ascii, N]` / `[ucs4, N]`, or `None` when the list is not a string type.
fn string_type(items: &[Node], path: &str) -> Result<Option<ScalarType>, ArrayError> {
    let [kind, len] = items else {
        return Ok(None);
    };
    let ctor: fn(usize) -> ScalarType = match kind.as_str() {
        Some("ascii") => ScalarType::Ascii,
        Some("ucs4") => ScalarType::Ucs4,
        _ => return Ok(None),
    };
    let n = len
        .as_int()
        .and_then(|i| i.as_u64())
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            bad(
                path,
                "datatype",
                format!(
                    "string length must be a non-negative integer, found {}",
                    describe(len)
                ),
            )
        })?;
    Ok(Some(ctor(n)))
}

/// A list of non-negative integers (a field `shape`).
fn parse_usize_list(node: &Node, path: &str, key: &str) -> Result<Vec<usize>, ArrayError> {
    let items = node.as_seq().ok_or_else(|| {
        bad(
            path,
            key,
            format!("expected a list of integers, found {}", describe(node)),
        )
    })?;
    items
        .iter()
        .map(|it| {
            it.as_int()
                .and_then(|i| i.as_u64())
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| {
                    bad(
                        path,
                        key,
                        format!("expected a non-negative integer, found {}", describe(it)),
                    )
                })
        })
        .collect()
}

/// A small recursive-descent parser for numpy datatype strings.
struct NumpyDtypeParser<'s> {
    s: &'s [u8],
    i: usize,
}

impl NumpyDtypeParser<'_> {
    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.s.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    fn number(&mut self) -> Option<usize> {
        self.ws();
        let start = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .parse()
            .ok()
    }

    fn quoted(&mut self) -> Option<String> {
        self.ws();
        let q = *self.s.get(self.i)?;
        if q != b'\'' && q != b'"' {
            return None;
        }
        let start = self.i + 1;
        let len = self.s[start..].iter().position(|&c| c == q)?;
        self.i = start + len + 1;
        String::from_utf8(self.s[start..start + len].to_vec()).ok()
    }

    fn dtype(&mut self, depth: usize) -> Option<DType> {
        if depth > MAX_DTYPE_DEPTH {
            return None;
        }
        self.ws();
        if self.s.get(self.i) == Some(&b'[') {
            self.i += 1;
            let mut fields = Vec::new();
            loop {
                if self.eat(b']').is_some() {
                    break;
                }
                if !fields.is_empty() {
                    self.eat(b',')?;
                    if self.eat(b']').is_some() {
                        break;
                    }
                }
                self.eat(b'(')?;
                let name = self.quoted()?;
                self.eat(b',')?;
                self.ws();
                let dtype = if self.s.get(self.i) == Some(&b'[') {
                    self.dtype(depth + 1)?
                } else {
                    let text = self.quoted()?;
                    DType::from_numpy_str(&text)?
                };
                let mut shape = Vec::new();
                if self.eat(b',').is_some() {
                    self.eat(b'(')?;
                    loop {
                        if self.eat(b')').is_some() {
                            break;
                        }
                        shape.push(self.number()?);
                        if self.eat(b',').is_none() {
                            self.eat(b')')?;
                            break;
                        }
                    }
                }
                self.eat(b')')?;
                fields.push(Field { name, dtype, shape });
            }
            return (!fields.is_empty()).then_some(DType::Record(fields));
        }
        let order = match self.s.get(self.i)? {
            b'<' | b'=' => Some(ByteOrder::Little),
            b'>' => Some(ByteOrder::Big),
            _ => None,
        };
        if matches!(self.s[self.i], b'<' | b'=' | b'>' | b'|') {
            self.i += 1;
        }
        let kind = *self.s.get(self.i)?;
        self.i += 1;
        let n = self.number()?;
        let ty = match (kind, n) {
            (b'i', 1) => ScalarType::Int8,
            (b'i', 2) => ScalarType::Int16,
            (b'i', 4) => ScalarType::Int32,
            (b'i', 8) => ScalarType::Int64,
            (b'u', 1) => ScalarType::UInt8,
            (b'u', 2) => ScalarType::UInt16,
            (b'u', 4) => ScalarType::UInt32,
            (b'u', 8) => ScalarType::UInt64,
            (b'f', 2) => ScalarType::Float16,
            (b'f', 4) => ScalarType::Float32,
            (b'f', 8) => ScalarType::Float64,
            (b'c', 8) => ScalarType::Complex64,
            (b'c', 16) => ScalarType::Complex128,
            (b'b', 1) => ScalarType::Bool8,
            (b'S', n) => ScalarType::Ascii(n),
            (b'U', n) => ScalarType::Ucs4(n),
            _ => return None,
        };
        Some(DType::scalar(ty, order.unwrap_or(ByteOrder::Little)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_parse_with_sizes_and_numpy_strings() {
        let cases = [
            ("int8", 1, "|i1"),
            ("uint8", 1, "|u1"),
            ("int16", 2, "<i2"),
            ("uint16", 2, "<u2"),
            ("int32", 4, "<i4"),
            ("uint32", 4, "<u4"),
            ("int64", 8, "<i8"),
            ("uint64", 8, "<u8"),
            ("float16", 2, "<f2"),
            ("float32", 4, "<f4"),
            ("float64", 8, "<f8"),
            ("complex64", 8, "<c8"),
            ("complex128", 16, "<c16"),
            ("bool8", 1, "|b1"),
        ];
        for (name, size, np) in cases {
            let dt = DType::from_node(&Node::str(name), ByteOrder::Little, "/a/datatype").unwrap();
            assert_eq!(dt.itemsize(), size, "{name}");
            assert_eq!(dt.to_numpy_str(), np, "{name}");
            assert_eq!(dt.name(), name);
        }
        let big = DType::from_node(&Node::str("float64"), ByteOrder::Big, "").unwrap();
        assert_eq!(big.to_numpy_str(), ">f8");
        let big1 = DType::from_node(&Node::str("uint8"), ByteOrder::Big, "").unwrap();
        assert_eq!(big1.to_numpy_str(), "|u1");
    }

    #[test]
    fn strings_parse() {
        let a = DType::from_node(
            &Node::seq(vec![Node::str("ascii"), Node::int(8)]),
            ByteOrder::Big,
            "",
        )
        .unwrap();
        assert_eq!(a, DType::scalar(ScalarType::Ascii(8), ByteOrder::Big));
        assert_eq!(a.itemsize(), 8);
        assert_eq!(a.to_numpy_str(), "|S8");
        assert_eq!(a.name(), "ascii[8]");
        let u = DType::from_node(
            &Node::seq(vec![Node::str("ucs4"), Node::int(3)]),
            ByteOrder::Little,
            "",
        )
        .unwrap();
        assert_eq!(u.itemsize(), 12);
        assert_eq!(u.to_numpy_str(), "<U3");
        assert_eq!(u.name(), "ucs4[3]");
        let ub = DType::from_node(
            &Node::seq(vec![Node::str("ucs4"), Node::int(3)]),
            ByteOrder::Big,
            "",
        )
        .unwrap();
        assert_eq!(ub.to_numpy_str(), ">U3");
        let err = DType::from_node(
            &Node::seq(vec![Node::str("ucs4"), Node::int(-1)]),
            ByteOrder::Big,
            "/x/datatype",
        )
        .unwrap_err();
        assert!(matches!(err, ArrayError::BadValue { ref path, .. } if path == "/x/datatype"));
        let huge = DType::from_node(
            &Node::seq(vec![Node::str("ucs4"), Node::int(u64::MAX as i128)]),
            ByteOrder::Big,
            "/x",
        );
        assert_eq!(huge, Err(ArrayError::ShapeOverflow { path: "/x".into() }));
    }

    #[test]
    fn records_nested_with_byteorders_and_subarrays() {
        let node = Node::seq(vec![
            Node::map(vec![
                ("name", Node::str("id")),
                ("datatype", Node::str("int32")),
                ("byteorder", Node::str("big")),
            ]),
            Node::map(vec![
                ("name", Node::str("x")),
                ("datatype", Node::str("float64")),
            ]),
            Node::map(vec![
                ("name", Node::str("name")),
                (
                    "datatype",
                    Node::seq(vec![Node::str("ascii"), Node::int(4)]),
                ),
            ]),
            Node::map(vec![
                ("name", Node::str("vec")),
                ("datatype", Node::str("int16")),
                ("shape", Node::seq(vec![Node::int(3)])),
            ]),
            Node::map(vec![
                ("name", Node::str("pos")),
                (
                    "datatype",
                    Node::seq(vec![
                        Node::map(vec![
                            ("name", Node::str("x")),
                            ("datatype", Node::str("float32")),
                        ]),
                        Node::map(vec![
                            ("name", Node::str("y")),
                            ("datatype", Node::str("float32")),
                            ("byteorder", Node::str("big")),
                        ]),
                    ]),
                ),
            ]),
            Node::str("uint8"),
        ]);
        let dt = DType::from_node(&node, ByteOrder::Little, "/t/datatype").unwrap();
        assert_eq!(dt.itemsize(), 4 + 8 + 4 + 6 + 8 + 1);
        assert_eq!(
            dt.to_numpy_str(),
            "[('id', '>i4'), ('x', '<f8'), ('name', '|S4'), ('vec', '<i2', (3,)), ('pos', [('x', '<f4'), ('y', '>f4')]), ('f5', '|u1')]"
        );
        assert_eq!(
            dt.name(),
            "{id: int32, x: float64, name: ascii[4], vec: int16[3], pos: {x: float32, y: float32}, f5: uint8}"
        );
    }

    #[test]
    fn bad_datatypes_name_path_and_key() {
        assert_eq!(
            DType::from_node(&Node::str("float128"), ByteOrder::Little, "/a/datatype"),
            Err(ArrayError::UnknownDatatype {
                path: "/a/datatype".into(),
                datatype: "string \"float128\"".into()
            })
        );
        assert!(matches!(
            DType::from_node(&Node::int(3), ByteOrder::Little, "/a/datatype"),
            Err(ArrayError::UnknownDatatype { .. })
        ));
        let missing = Node::seq(vec![Node::map(vec![("name", Node::str("a"))])]);
        assert_eq!(
            DType::from_node(&missing, ByteOrder::Little, "/a/datatype"),
            Err(ArrayError::MissingKey {
                path: "/a/datatype/0".into(),
                key: "datatype".into()
            })
        );
        let badorder = Node::seq(vec![Node::map(vec![
            ("datatype", Node::str("int8")),
            ("byteorder", Node::str("middle")),
        ])]);
        assert!(matches!(
            DType::from_node(&badorder, ByteOrder::Little, "/a/datatype"),
            Err(ArrayError::BadValue { ref path, ref key, .. }) if path == "/a/datatype/0" && key == "byteorder"
        ));
        let dup = Node::seq(vec![
            Node::map(vec![
                ("name", Node::str("a")),
                ("datatype", Node::str("int8")),
            ]),
            Node::map(vec![
                ("name", Node::str("a")),
                ("datatype", Node::str("int8")),
            ]),
        ]);
        assert!(matches!(
            DType::from_node(&dup, ByteOrder::Little, "/d"),
            Err(ArrayError::BadValue { ref key, .. }) if key == "name"
        ));
        assert_eq!(
            DType::from_node(&Node::seq(vec![]), ByteOrder::Little, "/d"),
            Err(bad("/d", "datatype", "empty record datatype"))
        );
        let badshape = Node::seq(vec![Node::map(vec![
            ("datatype", Node::str("int8")),
            ("shape", Node::seq(vec![Node::int(-2)])),
        ])]);
        assert!(matches!(
            DType::from_node(&badshape, ByteOrder::Little, "/d"),
            Err(ArrayError::BadValue { ref key, .. }) if key == "shape"
        ));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        // `levels` records, each the one field of the one above, around an int8
        let nested = |levels: usize| {
            let mut node = Node::str("int8");
            for _ in 0..levels {
                node = Node::seq(vec![Node::map(vec![("datatype", node)])]);
            }
            node
        };
        // as deep as the guard allows: a record, not an error
        let dt = DType::from_node(&nested(MAX_DTYPE_DEPTH), ByteOrder::Little, "/d").unwrap();
        assert_eq!(dt.itemsize(), 1);
        // one level more, and far more: the guard's error, at the field that goes too deep
        for levels in [MAX_DTYPE_DEPTH + 1, 200] {
            let err = DType::from_node(&nested(levels), ByteOrder::Little, "/d").unwrap_err();
            let ArrayError::BadValue { path, key, message } = &err else {
                panic!("{levels} levels: {err:?}");
            };
            assert_eq!(
                (key.as_str(), message.as_str()),
                ("datatype", "records nested too deeply"),
                "{levels} levels"
            );
            // the datatype one level past the limit: `/d` + `/0/datatype` for each level
            let want = format!("/d{}", "/0/datatype".repeat(MAX_DTYPE_DEPTH + 1));
            assert_eq!(path, &want, "{levels} levels");
        }
    }

    #[test]
    fn numpy_strings_parse_back() {
        let le = ByteOrder::Little;
        assert_eq!(
            DType::from_numpy_str("<f8"),
            Some(DType::scalar(ScalarType::Float64, le))
        );
        assert_eq!(
            DType::from_numpy_str(">u2"),
            Some(DType::scalar(ScalarType::UInt16, ByteOrder::Big))
        );
        assert_eq!(
            DType::from_numpy_str("|S7"),
            Some(DType::scalar(ScalarType::Ascii(7), le))
        );
        let rec = "[('id', '<i4'), ('x', '<f8'), ('name', 'S4')]";
        let d = DType::from_numpy_str(rec).unwrap();
        let DType::Record(f) = &d else {
            panic!("{d:?}")
        };
        assert_eq!(f.len(), 3);
        assert_eq!(f[2].dtype, DType::scalar(ScalarType::Ascii(4), le));
        let nested = "[('v', '>i2', (3,)), ('p', [('a', '|u1'), ('b', '<c16', (2, 2))])]";
        let d = DType::from_numpy_str(nested).unwrap();
        assert_eq!(d.to_numpy_str(), nested);
        assert_eq!(d.itemsize(), 6 + 1 + 64);
        for bad in [
            "",
            "<f3",
            "O",
            "<M8[ns]",
            "[('a', '<f8')",
            "[]",
            "<f8 x",
            "[('a')]",
        ] {
            assert_eq!(DType::from_numpy_str(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn numpy_strings_nested_too_deeply_are_refused() {
        let nested =
            |levels: usize| format!("{}'<i1'{}", "[('a', ".repeat(levels), ")]".repeat(levels));
        // the outermost record is depth 0: as deep as the guard allows, a record
        let d = DType::from_numpy_str(&nested(MAX_DTYPE_DEPTH + 1)).unwrap();
        assert_eq!(d.itemsize(), 1);
        for levels in [MAX_DTYPE_DEPTH + 2, 10_000] {
            assert_eq!(DType::from_numpy_str(&nested(levels)), None, "{levels}");
        }
    }
}
