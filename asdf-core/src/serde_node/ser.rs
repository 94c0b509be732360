//! [`NodeSerializer`]: any `Serialize` value into an untagged [`Node`] tree.

use serde::ser::{self, Impossible, Serialize};

use super::error::SerdeError;
use crate::convert::PathSegment;
use crate::yaml::{Integer, Node, Value};

/// A [`serde::Serializer`] whose output is an untagged [`Node`]; see the
/// [module documentation](super) for the data model.
///
/// ```
/// use asdf_core::serde_node::NodeSerializer;
/// use serde::Serialize;
/// let node = (1u8, "a").serialize(NodeSerializer)?;
/// assert_eq!(node.pointer("/1").and_then(|n| n.as_str()), Some("a"));
/// # Ok::<(), asdf_core::serde_node::SerdeError>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeSerializer;

/// The path step of a mapping key.
pub(super) fn key_segment(k: &Node) -> PathSegment {
    PathSegment::Key(key_text(k))
}

/// The text of a mapping key in paths: scalars as written, `<sequence>` etc. otherwise.
pub(super) fn key_text(k: &Node) -> String {
    match k.value() {
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_string(),
        Value::Float(f) => crate::floats::python_repr(*f),
        Value::Timestamp(t) => t.text.clone(),
        Value::Binary(_) => "<binary>".to_string(),
        Value::Seq(_) => "<sequence>".to_string(),
        Value::Map(_) => "<mapping>".to_string(),
        Value::Recursive(name) => format!("*{name}"),
    }
}

pub(super) fn int(v: i128) -> Node {
    Node::new(Value::Int(Integer::Small(v)))
}

fn variant_map(variant: &'static str, value: Node) -> Node {
    Node::new(Value::Map(vec![(Node::str(variant), value)]))
}

impl ser::Serializer for NodeSerializer {
    type Ok = Node;
    type Error = SerdeError;
    type SerializeSeq = NodeSeqSerializer;
    type SerializeTuple = NodeSeqSerializer;
    type SerializeTupleStruct = NodeSeqSerializer;
    type SerializeTupleVariant = NodeSeqSerializer;
    type SerializeMap = NodeMapSerializer;
    type SerializeStruct = NodeMapSerializer;
    type SerializeStructVariant = NodeMapSerializer;

    fn serialize_bool(self, v: bool) -> Result<Node, SerdeError> {
        Ok(Node::new(Value::Bool(v)))
    }
    fn serialize_i8(self, v: i8) -> Result<Node, SerdeError> {
        Ok(int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Node, SerdeError> {
        Ok(int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Node, SerdeError> {
        Ok(int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Node, SerdeError> {
        Ok(int(v.into()))
    }
    fn serialize_i128(self, v: i128) -> Result<Node, SerdeError> {
        Ok(int(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Node, SerdeError> {
        Ok(int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Node, SerdeError> {
        Ok(int(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Node, SerdeError> {
        Ok(int(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Node, SerdeError> {
        Ok(int(v.into()))
    }
    fn serialize_u128(self, v: u128) -> Result<Node, SerdeError> {
        Ok(Node::new(Value::Int(match i128::try_from(v) {
            Ok(small) => Integer::Small(small),
            Err(_) => Integer::Big(v.to_string()),
        })))
    }
    fn serialize_f32(self, v: f32) -> Result<Node, SerdeError> {
        Ok(Node::new(Value::Float(v.into())))
    }
    fn serialize_f64(self, v: f64) -> Result<Node, SerdeError> {
        Ok(Node::new(Value::Float(v)))
    }
    fn serialize_char(self, v: char) -> Result<Node, SerdeError> {
        Ok(Node::str(v))
    }
    fn serialize_str(self, v: &str) -> Result<Node, SerdeError> {
        Ok(Node::str(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Node, SerdeError> {
        Ok(Node::new(Value::Binary(v.to_vec())))
    }
    fn serialize_none(self) -> Result<Node, SerdeError> {
        Ok(Node::new(Value::Null))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Node, SerdeError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Node, SerdeError> {
        Ok(Node::new(Value::Null))
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Node, SerdeError> {
        Ok(Node::new(Value::Null))
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Node, SerdeError> {
        Ok(Node::str(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Node, SerdeError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Node, SerdeError> {
        let inner = value
            .serialize(self)
            .map_err(|e| e.within(PathSegment::Key(variant.to_string())))?;
        Ok(variant_map(variant, inner))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<NodeSeqSerializer, SerdeError> {
        Ok(NodeSeqSerializer {
            items: Vec::with_capacity(len.unwrap_or(0).min(4096)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<NodeSeqSerializer, SerdeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<NodeSeqSerializer, SerdeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<NodeSeqSerializer, SerdeError> {
        Ok(NodeSeqSerializer {
            items: Vec::with_capacity(len.min(4096)),
            variant: Some(variant),
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<NodeMapSerializer, SerdeError> {
        Ok(NodeMapSerializer {
            entries: Vec::with_capacity(len.unwrap_or(0).min(4096)),
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<NodeMapSerializer, SerdeError> {
        if name.starts_with('$') {
            return Err(private_struct(name));
        }
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<NodeMapSerializer, SerdeError> {
        Ok(NodeMapSerializer {
            entries: Vec::with_capacity(len.min(4096)),
            key: None,
            variant: Some(variant),
        })
    }
}

/// The [`NodeSerializer`] state of a sequence, tuple, tuple struct or tuple variant.
pub struct NodeSeqSerializer {
    items: Vec<Node>,
    variant: Option<&'static str>,
}

impl NodeSeqSerializer {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        let i = self.items.len();
        let node = value
            .serialize(NodeSerializer)
            .map_err(|e| self.locate(e.within(PathSegment::Index(i))))?;
        self.items.push(node);
        Ok(())
    }

    fn locate(&self, e: SerdeError) -> SerdeError {
        match self.variant {
            Some(v) => e.within(PathSegment::Key(v.to_string())),
            None => e,
        }
    }

    fn finish(self) -> Node {
        let seq = Node::new(Value::Seq(self.items));
        match self.variant {
            Some(v) => variant_map(v, seq),
            None => seq,
        }
    }
}

impl ser::SerializeSeq for NodeSeqSerializer {
    type Ok = Node;
    type Error = SerdeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        self.push(value)
    }
    fn end(self) -> Result<Node, SerdeError> {
        Ok(self.finish())
    }
}

impl ser::SerializeTuple for NodeSeqSerializer {
    type Ok = Node;
    type Error = SerdeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        self.push(value)
    }
    fn end(self) -> Result<Node, SerdeError> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleStruct for NodeSeqSerializer {
    type Ok = Node;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        self.push(value)
    }
    fn end(self) -> Result<Node, SerdeError> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleVariant for NodeSeqSerializer {
    type Ok = Node;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        self.push(value)
    }
    fn end(self) -> Result<Node, SerdeError> {
        Ok(self.finish())
    }
}

/// The [`NodeSerializer`] state of a map, struct or struct variant.
pub struct NodeMapSerializer {
    entries: Vec<(Node, Node)>,
    key: Option<Node>,
    variant: Option<&'static str>,
}

impl NodeMapSerializer {
    fn locate(&self, e: SerdeError) -> SerdeError {
        match self.variant {
            Some(v) => e.within(PathSegment::Key(v.to_string())),
            None => e,
        }
    }

    fn entry<T: Serialize + ?Sized>(&mut self, key: Node, value: &T) -> Result<(), SerdeError> {
        match value.serialize(NodeSerializer) {
            Ok(v) => {
                self.entries.push((key, v));
                Ok(())
            }
            Err(e) => Err(self.locate(e.within(key_segment(&key)))),
        }
    }

    fn finish(self) -> Node {
        let map = Node::new(Value::Map(self.entries));
        match self.variant {
            Some(v) => variant_map(v, map),
            None => map,
        }
    }
}

impl ser::SerializeMap for NodeMapSerializer {
    type Ok = Node;
    type Error = SerdeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerdeError> {
        self.key = Some(key.serialize(NodeSerializer)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        match self.key.take() {
            Some(key) => self.entry(key, value),
            None => Err(SerdeError::custom_msg(
                "serialize_value called before serialize_key",
            )),
        }
    }
    fn end(self) -> Result<Node, SerdeError> {
        match self.key {
            Some(_) => Err(SerdeError::custom_msg(
                "mapping ended after a key without its value",
            )),
            None => Ok(self.finish()),
        }
    }
}

impl ser::SerializeStruct for NodeMapSerializer {
    type Ok = Node;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerdeError> {
        self.entry(Node::str(key), value)
    }
    fn end(self) -> Result<Node, SerdeError> {
        Ok(self.finish())
    }
}

/// The error for a struct whose name starts with `$`: no Rust type has such a name, so it is
/// another format's private representation (serde_json's numbers with its
/// `arbitrary_precision` feature and its `RawValue`, toml's datetimes, ...), which would
/// otherwise become a meaningless one-entry mapping.
fn private_struct(name: &str) -> SerdeError {
    SerdeError::custom_msg(format_args!(
        "`{name}` is another format's private representation, not data \
         (a serde_json::Value with serde_json's `arbitrary_precision` feature converts with \
         serde_node::json_to_node)"
    ))
}

impl ser::SerializeStructVariant for NodeMapSerializer {
    type Ok = Node;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerdeError> {
        self.entry(Node::str(key), value)
    }
    fn end(self) -> Result<Node, SerdeError> {
        Ok(self.finish())
    }
}

/// Tells whether a value serializes as `None` (without serializing anything else: every
/// other method stops at once).
pub(super) fn is_none<T: Serialize + ?Sized>(value: &T) -> bool {
    value.serialize(NoneProbe).unwrap_or(false)
}

struct NoneProbe;

/// The probe's "not none" answer, short-circuiting compound values.
#[derive(Debug)]
struct NotNone;

impl std::fmt::Display for NotNone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not none")
    }
}

impl std::error::Error for NotNone {}

impl ser::Error for NotNone {
    fn custom<T: std::fmt::Display>(_msg: T) -> Self {
        NotNone
    }
}

macro_rules! not_none {
    ($($name:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $name(self, $(_: $arg),*) -> Result<bool, NotNone> { Ok(false) })*
    };
}

impl ser::Serializer for NoneProbe {
    type Ok = bool;
    type Error = NotNone;
    type SerializeSeq = Impossible<bool, NotNone>;
    type SerializeTuple = Impossible<bool, NotNone>;
    type SerializeTupleStruct = Impossible<bool, NotNone>;
    type SerializeTupleVariant = Impossible<bool, NotNone>;
    type SerializeMap = Impossible<bool, NotNone>;
    type SerializeStruct = Impossible<bool, NotNone>;
    type SerializeStructVariant = Impossible<bool, NotNone>;

    not_none!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_none(self) -> Result<bool, NotNone> {
        Ok(true)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<bool, NotNone> {
        Ok(false)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<bool, NotNone> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<bool, NotNone> {
        Ok(false)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotNone> {
        Err(NotNone)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotNone> {
        Err(NotNone)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotNone> {
        Err(NotNone)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotNone> {
        Err(NotNone)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotNone> {
        Err(NotNone)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, NotNone> {
        Err(NotNone)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotNone> {
        Err(NotNone)
    }
}
