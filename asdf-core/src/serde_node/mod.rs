//! The serde bridge: any `Serialize`/`Deserialize` type as an untagged subtree of [`Node`]s,
//! as `serde_json::Value` does for JSON, so users keep their serde types.
//!
//! - [`to_node`] serializes a value into a [`Node`] ([`NodeSerializer`] is the
//!   `Serializer`);
//! - [`from_node`] (owned) and [`from_node_borrowed`] (`&'de str` fields borrow from the
//!   tree) deserialize a value from a node (`&Node` is the `Deserializer`, and implements
//!   [`IntoDeserializer`](serde::de::IntoDeserializer));
//! - [`Serde`] wraps a serde type so it is a [`ToAsdf`](crate::ToAsdf)/
//!   [`FromAsdf`](crate::FromAsdf) value of the typed layer: a field of a
//!   `#[derive(AsdfType)]` struct, a value for [`Writer::add_value`](crate::write::Writer::add_value)
//!   and [`AsdfFile::read_as`](crate::AsdfFile::read_as), or for
//!   [`convert::to_node`](crate::convert::to_node).
//!
//! ```
//! use asdf_core::serde_node::{from_node, to_node};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! enum Shape {
//!     Point,
//!     Circle { radius: f64 },
//! }
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Scene {
//!     name: String,
//!     shapes: Vec<Shape>,
//!     seed: Option<u128>,
//! }
//!
//! let scene = Scene {
//!     name: "demo".into(),
//!     shapes: vec![Shape::Point, Shape::Circle { radius: 2.5 }],
//!     seed: Some(u128::MAX),
//! };
//! let node = to_node(&scene)?;
//! assert_eq!(node.pointer("/shapes/0").and_then(|n| n.as_str()), Some("Point"));
//! assert_eq!(node.pointer("/shapes/1/Circle/radius").and_then(|n| n.as_f64()), Some(2.5));
//! assert_eq!(from_node::<Scene>(&node)?, scene);
//!
//! // Errors name the tree path of the failing node.
//! let bad = asdf_core::Node::map([("name", asdf_core::Node::int(7))]);
//! let err = from_node::<Scene>(&bad).unwrap_err();
//! assert_eq!(err.to_string(), "/name: invalid type: integer `7`, expected a string");
//! # Ok::<(), asdf_core::serde_node::SerdeError>(())
//! ```
//!
//! # Data model
//!
//! | serde | node |
//! |---|---|
//! | `bool` | [`Value::Bool`](crate::Value::Bool) |
//! | all integers, `i128`/`u128` included | [`Value::Int`](crate::Value::Int), exact ([`Integer::Big`](crate::Integer::Big) beyond `i128::MAX`) |
//! | `f32`, `f64` | [`Value::Float`](crate::Value::Float) (the `f32` widened exactly; NaN and infinities kept) |
//! | `char`, `str` | [`Value::Str`](crate::Value::Str) |
//! | bytes (`serialize_bytes`, e.g. `serde_bytes`) | [`Value::Binary`](crate::Value::Binary) (written as `!!binary`) |
//! | unit, unit struct, `None` | [`Value::Null`](crate::Value::Null) |
//! | `Some(x)`, newtype struct | `x` itself |
//! | seq, tuple, tuple struct | [`Value::Seq`](crate::Value::Seq) |
//! | map | [`Value::Map`](crate::Value::Map); keys are nodes, so integer, bool or null keys stay what they are |
//! | struct | [`Value::Map`](crate::Value::Map) with string keys in field order |
//! | enum | externally tagged as `serde_json` does: a unit variant is its name as a string; other variants a mapping with one key, the name, whose value is the content |
//!
//! # `serde_json::Value`
//!
//! asdf-core builds serde_json without optional features, but cargo unifies features, so
//! another crate of a build may turn on serde_json's `arbitrary_precision`. Conversions
//! behave as follows either way (`preserve_order` only changes the order of an object's
//! members):
//!
//! - [`json_to_node`] converts a `Value` exactly with serde_json's public API: every number
//!   a `Value` can hold (only `i64`, `u64` and `f64` without `arbitrary_precision`; any
//!   number text with it) becomes an exact integer or a float.
//! - [`to_node`] of a `Value` is the same as [`json_to_node`] without `arbitrary_precision`.
//!   With it, serde_json serializes each number as a private struct (its text under a
//!   `$serde_json::private::Number` field), which this crate does not decode: `to_node`
//!   fails on any struct whose name starts with `$` (such names are other formats' private
//!   representations, never Rust types) instead of writing it as a mapping. The same holds
//!   for a `Value` inside a serialized type: convert it with [`json_to_node`] first.
//! - [`from_node`] into a `Value` reads integers within 64 bits and floats (NaN and
//!   infinities, which JSON cannot hold, become null); an integer beyond 64 bits is an error
//!   ("JSON number out of range") without `arbitrary_precision` and exact with it, up to
//!   128 bits. Mapping keys that are not strings read as their text.
//!
//! Reading is driven by the node ([`deserialize_any`](serde::Deserializer::deserialize_any)
//! visits what the node holds). Tags are ignored: the subtree is plain data, and a tagged
//! scalar reads as its text (only [`Serde`] reads `core/integer` nodes, as integers). A
//! timestamp reads as its YAML text (a string); `!!binary` reads as bytes, or as a sequence
//! of `u8` where a sequence is asked for. An integer read into a narrower type that cannot
//! hold it is an [`SerdeErrorKind::OutOfRange`] error; integers beyond 128 bits can only be
//! read as floats. A [`Value::Recursive`](crate::Value::Recursive) alias is an error. A
//! mapping key that is a non-string scalar (`1`, `false`, `null`) reads as its text where a
//! string is asked for, so `BTreeMap<String, _>` and `serde_json::Value` read any mapping
//! with scalar keys.
//!
//! serde buffers the content of untagged and internally tagged enums and of
//! `#[serde(flatten)]` fields in a form that has no 128-bit integers, so integers beyond 64
//! bits fail to read there (they read everywhere else).
//!
//! Round trips lose only what serde's data model merges: `Some(None)` and `None` are both
//! null, as are `()` and unit structs.
//!
//! # Files other implementations read
//!
//! The ASDF Standard limits integer literals to 64 bits (python asdf accepts
//! `-(2^63 - 2) ..= 2^63 - 1`, warns on reading others when validating and refuses to write
//! them): [`Serde`] writes larger integers as `core/integer` nodes and reads them back;
//! [`to_node`] keeps them exact literals. Standard 1.6.0 allows only string, integer and
//! boolean mapping keys (python validation rejects null keys); python (PyYAML) cannot read
//! keys that are sequences or mappings, and merges keys equal in python (`1` and `true`).
//!
//! # Errors
//!
//! [`SerdeError`] implements `serde::ser::Error` and `serde::de::Error`, and holds the JSON
//! pointer of the failing node relative to the node converted (`/items/2/count`; a map key
//! that is not a string is written as its text). It converts into the typed layer's
//! [`ConvertError`](crate::convert::ConvertError) ([`SerdeError::into_convert_error`] puts
//! it below a base path) and into [`crate::Error`].

mod de;
mod error;
mod json;
mod ser;
mod wrapper;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::yaml::Node;

pub use error::{SerdeError, SerdeErrorKind};
pub use json::json_to_node;
pub use ser::{NodeMapSerializer, NodeSeqSerializer, NodeSerializer};
pub use wrapper::Serde;

/// Serializes `value` into an untagged node tree, through serde. A type with tags, schemas or
/// arrays goes through [`ToAsdf`](crate::ToAsdf) and [`convert::to_node`](crate::convert::to_node)
/// instead.
///
/// ```
/// let node = asdf_core::serde_node::to_node(&vec![(1, "a"), (2, "b")])?;
/// assert_eq!(node.pointer("/1/1").and_then(|n| n.as_str()), Some("b"));
/// # Ok::<(), asdf_core::serde_node::SerdeError>(())
/// ```
pub fn to_node<T: Serialize + ?Sized>(value: &T) -> Result<Node, SerdeError> {
    value.serialize(NodeSerializer)
}

/// Deserializes an owned value from `node` (tags ignored), through serde;
/// [`convert::from_node`](crate::convert::from_node) is the [`FromAsdf`](crate::FromAsdf) one.
///
/// ```
/// use std::collections::BTreeMap;
/// use asdf_core::Node;
/// let node = Node::map([("a", Node::int(1)), ("b", Node::int(2))]);
/// let m: BTreeMap<String, u8> = asdf_core::serde_node::from_node(&node)?;
/// assert_eq!(m["b"], 2);
/// # Ok::<(), asdf_core::serde_node::SerdeError>(())
/// ```
pub fn from_node<T: DeserializeOwned>(node: &Node) -> Result<T, SerdeError> {
    T::deserialize(node)
}

/// Deserializes a value that may borrow strings and bytes from `node`.
///
/// ```
/// use asdf_core::Node;
/// let node = Node::seq([Node::str("x"), Node::str("y")]);
/// let v: Vec<&str> = asdf_core::serde_node::from_node_borrowed(&node)?;
/// assert_eq!(v, ["x", "y"]);
/// # Ok::<(), asdf_core::serde_node::SerdeError>(())
/// ```
pub fn from_node_borrowed<'de, T: Deserialize<'de>>(node: &'de Node) -> Result<T, SerdeError> {
    T::deserialize(node)
}

#[cfg(test)]
mod tests;
