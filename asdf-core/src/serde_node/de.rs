//! `&Node` as a [`serde::Deserializer`]: any `Deserialize` value from a tree.

use serde::de::{self, DeserializeSeed, Error as _, IntoDeserializer, Unexpected, Visitor};

use super::error::{SerdeError, SerdeErrorKind};
use super::ser::{key_segment, key_text};
use crate::convert::PathSegment;
use crate::yaml::{Integer, Node, Value};

type R<T> = Result<T, SerdeError>;

fn recursive(name: &str) -> SerdeError {
    SerdeError::new(SerdeErrorKind::Recursive(name.to_string()))
}

/// What a node holds, for "invalid type" messages.
fn unexpected(node: &Node) -> Unexpected<'_> {
    match node.value() {
        Value::Null => Unexpected::Other("null"),
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Int(i) => match (i.as_i64(), i.as_u64()) {
            (_, Some(u)) => Unexpected::Unsigned(u),
            (Some(s), None) => Unexpected::Signed(s),
            (None, None) => Unexpected::Other("integer"),
        },
        Value::Float(f) => Unexpected::Float(*f),
        Value::Str(s) => Unexpected::Str(s),
        Value::Timestamp(t) => Unexpected::Str(&t.text),
        Value::Binary(b) => Unexpected::Bytes(b),
        Value::Seq(_) => Unexpected::Seq,
        Value::Map(_) => Unexpected::Map,
        Value::Recursive(_) => Unexpected::Other("recursive alias"),
    }
}

/// The integer as `T`, or an out-of-range error naming `ty`.
fn int_as<T: TryFrom<i128> + std::str::FromStr>(i: &Integer, ty: &'static str) -> R<T> {
    let v = match i {
        Integer::Small(v) => T::try_from(*v).ok(),
        Integer::Big(s) => s.parse().ok(),
    };
    v.ok_or_else(|| {
        SerdeError::new(SerdeErrorKind::OutOfRange {
            value: i.to_string(),
            ty,
        })
    })
}

/// Visits an integer with the narrowest serde integer that holds it: `u64` for
/// non-negative values that fit, `i64` for negative ones, then `u128`/`i128`.
fn visit_int<'de, V: Visitor<'de>>(i: &Integer, visitor: V) -> R<V::Value> {
    match i {
        Integer::Small(v) => {
            if let Ok(u) = u64::try_from(*v) {
                visitor.visit_u64(u)
            } else if let Ok(s) = i64::try_from(*v) {
                visitor.visit_i64(s)
            } else if *v > 0 {
                visitor.visit_u128(v.unsigned_abs())
            } else {
                visitor.visit_i128(*v)
            }
        }
        Integer::Big(s) => {
            if let Ok(u) = s.parse::<u128>() {
                visitor.visit_u128(u)
            } else if let Ok(n) = s.parse::<i128>() {
                visitor.visit_i128(n)
            } else {
                Err(SerdeError::new(SerdeErrorKind::OutOfRange {
                    value: s.clone(),
                    ty: "a 128-bit integer",
                }))
            }
        }
    }
}

fn visit_seq<'de, V: Visitor<'de>>(items: &'de [Node], visitor: V) -> R<V::Value> {
    let mut access = SeqAccess {
        iter: items.iter(),
        index: 0,
    };
    let value = visitor.visit_seq(&mut access)?;
    if access.iter.len() == 0 {
        Ok(value)
    } else {
        Err(SerdeError::invalid_length(
            items.len(),
            &"fewer elements in sequence",
        ))
    }
}

fn visit_map<'de, V: Visitor<'de>>(entries: &'de [(Node, Node)], visitor: V) -> R<V::Value> {
    let mut access = MapAccess {
        iter: entries.iter(),
        pending: None,
    };
    let value = visitor.visit_map(&mut access)?;
    if access.iter.len() == 0 {
        Ok(value)
    } else {
        Err(SerdeError::invalid_length(
            entries.len(),
            &"fewer entries in mapping",
        ))
    }
}

macro_rules! deserialize_int {
    ($($method:ident => $visit:ident($ty:ty)),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
                match self.value() {
                    Value::Int(i) => visitor.$visit(int_as::<$ty>(i, stringify!($ty))?),
                    _ => self.deserialize_any(visitor),
                }
            }
        )*
    };
}

/// A node as a serde data source; see the [module documentation](super) for the data
/// model. Strings (and timestamps' text) are lent out for `'de`, so `&'de str` fields work.
impl<'de> de::Deserializer<'de> for &'de Node {
    type Error = SerdeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        match self.value() {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Int(i) => visit_int(i, visitor),
            Value::Float(f) => visitor.visit_f64(*f),
            Value::Str(s) => visitor.visit_borrowed_str(s),
            Value::Timestamp(t) => visitor.visit_borrowed_str(&t.text),
            Value::Binary(b) => visitor.visit_borrowed_bytes(b),
            Value::Seq(items) => visit_seq(items, visitor),
            Value::Map(entries) => visit_map(entries, visitor),
            Value::Recursive(name) => Err(recursive(name)),
        }
    }

    deserialize_int!(
        deserialize_i8 => visit_i8(i8),
        deserialize_i16 => visit_i16(i16),
        deserialize_i32 => visit_i32(i32),
        deserialize_i64 => visit_i64(i64),
        deserialize_i128 => visit_i128(i128),
        deserialize_u8 => visit_u8(u8),
        deserialize_u16 => visit_u16(u16),
        deserialize_u32 => visit_u32(u32),
        deserialize_u64 => visit_u64(u64),
        deserialize_u128 => visit_u128(u128),
    );

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        self.deserialize_f64(visitor)
    }

    /// Floats, and integers converted to the nearest `f64`.
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        match self.value() {
            Value::Float(f) => visitor.visit_f64(*f),
            Value::Int(Integer::Small(v)) => visitor.visit_f64(*v as f64),
            Value::Int(Integer::Big(s)) => match s.parse::<f64>() {
                Ok(f) => visitor.visit_f64(f),
                Err(_) => self.deserialize_any(visitor),
            },
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        match self.value() {
            Value::Null => visitor.visit_none(),
            Value::Recursive(name) => Err(recursive(name)),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> R<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> R<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    /// Sequences; `!!binary` bytes are also read as a sequence of `u8`.
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        match self.value() {
            Value::Binary(b) => {
                let mut seq = de::value::SeqDeserializer::new(b.iter().copied());
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> R<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> R<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> R<V::Value> {
        self.deserialize_any(visitor)
    }

    /// A string (unit variant) or a mapping with a single key (the variant) whose value is
    /// the variant's content.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> R<V::Value> {
        match self.value() {
            Value::Str(_) => visitor.visit_enum(EnumAccess {
                variant: self,
                content: None,
            }),
            Value::Map(entries) => match entries.as_slice() {
                [(variant, content)] => visitor.visit_enum(EnumAccess {
                    variant,
                    content: Some(content),
                }),
                _ => Err(SerdeError::invalid_value(
                    Unexpected::Map,
                    &"a mapping with a single key",
                )),
            },
            Value::Recursive(name) => Err(recursive(name)),
            _ => Err(SerdeError::invalid_type(
                unexpected(self),
                &"a string or a mapping with a single key",
            )),
        }
    }

    /// Struct field names and variant names: strings, and the text of other scalar keys
    /// (`1`, `true`, `null`), so keys that are no field are ignored rather than misread.
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        match self.value() {
            Value::Str(s) => visitor.visit_borrowed_str(s),
            Value::Timestamp(t) => visitor.visit_borrowed_str(&t.text),
            Value::Int(_) | Value::Bool(_) | Value::Null | Value::Float(_) => {
                visitor.visit_str(&key_text(self))
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        visitor.visit_unit()
    }

    fn is_human_readable(&self) -> bool {
        true
    }
}

impl<'de> IntoDeserializer<'de, SerdeError> for &'de Node {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

struct SeqAccess<'de> {
    iter: std::slice::Iter<'de, Node>,
    index: usize,
}

impl<'de> de::SeqAccess<'de> for SeqAccess<'de> {
    type Error = SerdeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> R<Option<T::Value>> {
        match self.iter.next() {
            Some(item) => {
                let i = self.index;
                self.index += 1;
                seed.deserialize(item)
                    .map(Some)
                    .map_err(|e| e.within(PathSegment::Index(i)))
            }
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct MapAccess<'de> {
    iter: std::slice::Iter<'de, (Node, Node)>,
    pending: Option<&'de (Node, Node)>,
}

impl<'de> de::MapAccess<'de> for MapAccess<'de> {
    type Error = SerdeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> R<Option<K::Value>> {
        match self.iter.next() {
            Some(entry) => {
                self.pending = Some(entry);
                let (key, _) = entry;
                seed.deserialize(MapKey(key))
                    .map(Some)
                    .map_err(|e| e.within(key_segment(key)))
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> R<V::Value> {
        match self.pending.take() {
            Some((key, value)) => seed
                .deserialize(value)
                .map_err(|e| e.within(key_segment(key))),
            None => Err(SerdeError::custom("mapping value asked for before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct EnumAccess<'de> {
    variant: &'de Node,
    content: Option<&'de Node>,
}

impl<'de> de::EnumAccess<'de> for EnumAccess<'de> {
    type Error = SerdeError;
    type Variant = VariantAccess<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> R<(V::Value, Self::Variant)> {
        let segment = key_segment(self.variant);
        let tag = seed
            .deserialize(self.variant)
            .map_err(|e| match self.content {
                Some(_) => e.within(segment.clone()),
                None => e,
            })?;
        Ok((
            tag,
            VariantAccess {
                content: self.content,
                segment,
            },
        ))
    }
}

struct VariantAccess<'de> {
    content: Option<&'de Node>,
    segment: PathSegment,
}

impl<'de> de::VariantAccess<'de> for VariantAccess<'de> {
    type Error = SerdeError;

    fn unit_variant(self) -> R<()> {
        match self.content {
            None => Ok(()),
            Some(node) if node.is_null() => Ok(()),
            Some(node) => {
                Err(SerdeError::invalid_type(unexpected(node), &"unit variant")
                    .within(self.segment))
            }
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> R<T::Value> {
        match self.content {
            Some(node) => seed.deserialize(node).map_err(|e| e.within(self.segment)),
            None => Err(SerdeError::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> R<V::Value> {
        match self.content {
            Some(node) => {
                de::Deserializer::deserialize_seq(node, visitor).map_err(|e| e.within(self.segment))
            }
            None => Err(SerdeError::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> R<V::Value> {
        match self.content {
            Some(node) => {
                de::Deserializer::deserialize_any(node, visitor).map_err(|e| e.within(self.segment))
            }
            None => Err(SerdeError::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        }
    }
}

/// The deserializer of a missing mapping key: `Option`s read as `None` (as serde's derive
/// does for missing `Option` fields); every other type fails.
pub(super) struct Absent;

impl<'de> de::Deserializer<'de> for Absent {
    type Error = SerdeError;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> R<V::Value> {
        Err(SerdeError::custom("missing value"))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        visitor.visit_none()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> R<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// A mapping key as a serde data source: its node, except that where a string is asked for,
/// a non-string scalar key (`1`, `true`, `null`, `1.5`) gives its text, so maps with string
/// keys (and `serde_json::Value`) read mappings whose keys YAML resolved to other scalars.
struct MapKey<'de>(&'de Node);

macro_rules! forward_to_node {
    ($($method:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
                self.0.$method(visitor)
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for MapKey<'de> {
    type Error = SerdeError;

    forward_to_node!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any,
    );

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        self.0.deserialize_identifier(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        self.0.deserialize_identifier(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> R<V::Value> {
        self.0.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> R<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> R<V::Value> {
        self.0.deserialize_tuple(len, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> R<V::Value> {
        self.0.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> R<V::Value> {
        self.0.deserialize_struct(name, fields, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> R<V::Value> {
        self.0.deserialize_enum(name, variants, visitor)
    }

    fn is_human_readable(&self) -> bool {
        true
    }
}
