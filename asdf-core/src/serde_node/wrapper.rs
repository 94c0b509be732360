//! [`Serde`]: a serde type as a [`ToAsdf`]/[`FromAsdf`] value of the typed layer.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::ser::key_text;
use super::{de, from_node, ser, to_node};
use crate::convert::{ConvertError, FromAsdf, FromContext, ToAsdf, ToContext};
use crate::yaml::{Integer, Node, Value, ASDF_TAG_PREFIX};

/// A serde type as a value of the typed layer: [`ToAsdf`] for `T: Serialize`,
/// [`FromAsdf`] for `T: DeserializeOwned`, as an untagged subtree.
///
/// The subtree is [`to_node`]'s, with one change that keeps files valid for python asdf:
/// integers outside the literal range it accepts (`-(2^63 - 2) ..= 2^63 - 1`) are written
/// as `core/integer` nodes (their words an array stored as the context's array options
/// say), and read back from them. Map keys stay literals.
///
/// A `Serde<Option<T>>` field behaves as an `Option` field does: `None` leaves the key out,
/// a missing key reads as `None`. Errors carry the field's path joined with the path inside
/// the value.
///
/// ```
/// use asdf_core::convert::{from_node, to_node};
/// use asdf_core::serde_node::Serde;
/// use std::collections::BTreeMap;
///
/// let value = Serde(BTreeMap::from([(1u32, vec![0.5f32]), (7, vec![])]));
/// let node = to_node(&value)?;
/// let (key, list) = &node.as_map().unwrap()[0];
/// assert_eq!(key.as_i64(), Some(1));
/// assert_eq!(list.pointer("/0").and_then(|n| n.as_f64()), Some(0.5));
/// let back: Serde<BTreeMap<u32, Vec<f32>>> = from_node(&node)?;
/// assert_eq!(back, value);
/// # Ok::<(), asdf_core::convert::ConvertError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Serde<T>(pub T);

impl<T> Serde<T> {
    /// The wrapped value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> From<T> for Serde<T> {
    fn from(value: T) -> Self {
        Serde(value)
    }
}

impl<T> std::ops::Deref for Serde<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Serde<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// Transparent: serializes as the wrapped value.
impl<T: Serialize> Serialize for Serde<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// Transparent: deserializes as the wrapped value.
impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Serde<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Serde)
    }
}

impl<T: Serialize> ToAsdf for Serde<T> {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        let node = to_node(&self.0).map_err(|e| e.into_convert_error(&ctx.path()))?;
        Ok(encode_big_integers(&node, ctx)?.unwrap_or(node))
    }

    fn is_absent(&self) -> bool {
        ser::is_none(&self.0)
    }
}

impl<T: DeserializeOwned> FromAsdf for Serde<T> {
    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        let decoded = decode_big_integers(node, ctx)?;
        match from_node(decoded.as_ref().unwrap_or(node)) {
            Ok(v) => Ok(Serde(v)),
            Err(e) => Err(e.into_convert_error(&ctx.path())),
        }
    }

    fn absent() -> Option<Self> {
        T::deserialize(de::Absent).ok().map(Serde)
    }
}

use crate::convert::impls_support::big_integer_node;

/// Magnitude and sign of an integer node outside the literal range that fits 128 bits.
fn big_literal(node: &Node) -> Option<(u128, bool)> {
    match node.value() {
        Value::Int(Integer::Small(v))
            if !(crate::yaml::MIN_LITERAL_INT..=crate::yaml::MAX_LITERAL_INT).contains(v) =>
        {
            Some((v.unsigned_abs(), *v < 0))
        }
        Value::Int(Integer::Big(s)) => match s.strip_prefix('-') {
            Some(digits) => digits.parse().ok().map(|m| (m, true)),
            None => s.parse().ok().map(|m| (m, false)),
        },
        _ => None,
    }
}

/// Rewrites integer values outside python asdf's literal range as `core/integer` nodes (map
/// keys stay literals: a key cannot be a tagged mapping). `None` when nothing changed.
fn encode_big_integers(
    node: &Node,
    ctx: &mut ToContext<'_, '_>,
) -> Result<Option<Node>, ConvertError> {
    rewrite(node, ctx, &|node, ctx| {
        let (magnitude, negative) = big_literal(node)?;
        let text = node.as_int().map(ToString::to_string).unwrap_or_default();
        Some(big_integer_node(magnitude, negative, &text, ctx))
    })
}

fn is_integer_tag(tag: Option<&str>) -> bool {
    tag.and_then(|t| t.strip_prefix(ASDF_TAG_PREFIX))
        .is_some_and(|t| t.starts_with("core/integer-"))
}

/// Replaces `core/integer` nodes by integer literals (their words read through `ctx`).
/// `None` when there are none.
fn decode_big_integers(
    node: &Node,
    ctx: &mut FromContext<'_>,
) -> Result<Option<Node>, ConvertError> {
    rewrite(node, ctx, &|node, ctx| {
        if !is_integer_tag(node.tag()) {
            return None;
        }
        let v = match i128::from_asdf(node, ctx) {
            Ok(v) => Ok(Integer::Small(v)),
            Err(_) => u128::from_asdf(node, ctx).map(|v| Integer::Big(v.to_string())),
        };
        Some(v.map(|v| Node::new(Value::Int(v))))
    })
}

/// A conversion context that tracks the tree path.
trait Descend {
    fn key_of<R>(&mut self, key: &str, f: impl FnOnce(&mut Self) -> R) -> R;
    fn index_of<R>(&mut self, index: usize, f: impl FnOnce(&mut Self) -> R) -> R;
}

impl Descend for ToContext<'_, '_> {
    fn key_of<R>(&mut self, key: &str, f: impl FnOnce(&mut Self) -> R) -> R {
        self.key(key, f)
    }
    fn index_of<R>(&mut self, index: usize, f: impl FnOnce(&mut Self) -> R) -> R {
        self.index(index, f)
    }
}

impl Descend for FromContext<'_> {
    fn key_of<R>(&mut self, key: &str, f: impl FnOnce(&mut Self) -> R) -> R {
        self.key(key, f)
    }
    fn index_of<R>(&mut self, index: usize, f: impl FnOnce(&mut Self) -> R) -> R {
        self.index(index, f)
    }
}

/// Replaces a node (`Some`), or lets [`rewrite`] go into its children (`None`).
type Replace<C> = dyn Fn(&Node, &mut C) -> Option<Result<Node, ConvertError>>;

/// The subtree with every node that `replace` handles replaced, untouched parts shared;
/// `None` when nothing was replaced.
fn rewrite<C: Descend>(
    node: &Node,
    ctx: &mut C,
    replace: &Replace<C>,
) -> Result<Option<Node>, ConvertError> {
    if let Some(new) = replace(node, ctx) {
        return new.map(Some);
    }
    match node.value() {
        Value::Seq(items) => {
            let mut out: Option<Vec<Node>> = None;
            for (i, item) in items.iter().enumerate() {
                if let Some(new) = ctx.index_of(i, |ctx| rewrite(item, ctx, replace))? {
                    let v = out.get_or_insert_with(|| items.clone());
                    if let Some(slot) = v.get_mut(i) {
                        *slot = new;
                    }
                }
            }
            Ok(out.map(|v| Node::new(Value::Seq(v))))
        }
        Value::Map(entries) => {
            let mut out: Option<Vec<(Node, Node)>> = None;
            for (i, (k, item)) in entries.iter().enumerate() {
                let key = key_text(k);
                if let Some(new) = ctx.key_of(&key, |ctx| rewrite(item, ctx, replace))? {
                    let v = out.get_or_insert_with(|| entries.clone());
                    if let Some(slot) = v.get_mut(i) {
                        slot.1 = new;
                    }
                }
            }
            Ok(out.map(|v| Node::new(Value::Map(v))))
        }
        _ => Ok(None),
    }
}
