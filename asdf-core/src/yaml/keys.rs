//! Duplicate mapping keys, resolved as a Python `dict` built from the pairs in order: the key
//! stays at its first position and takes the value of its last occurrence. Keys are equal as
//! Python values are (`1`, `1.0` and `true` are one key; NaN never equals anything; a date
//! differs from a date-time; zoned date-times are equal at the same instant). Sequence and
//! mapping keys (unhashable in Python) are never merged.

use std::cell::RefCell;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::BuildHasher;

use super::hash::{FastBuild, SMALL_TABLE};

use super::node::{Integer, Node, Value};
use super::timestamp::timestamp_canonical;

#[derive(PartialEq, Eq, Hash)]
enum KeyId<'a> {
    Null,
    Int(i128),
    BigInt(&'a str),
    Float(u64),
    Str(&'a str),
    Tagged(&'a str, &'a str),
    Bytes(&'a [u8]),
    Date(String),
    Naive(String),
    Zoned(String),
}

fn key_id(node: &Node) -> Option<KeyId<'_>> {
    let d = node.data();
    if let Some(tag) = &d.tag {
        return match &d.value {
            Value::Str(s) => Some(KeyId::Tagged(tag, s)),
            _ => None,
        };
    }
    Some(match &d.value {
        Value::Null => KeyId::Null,
        Value::Bool(b) => KeyId::Int(i128::from(*b)),
        Value::Int(Integer::Small(v)) => KeyId::Int(*v),
        Value::Int(Integer::Big(s)) => KeyId::BigInt(s),
        Value::Float(f) => {
            if f.is_nan() {
                return None;
            }
            if f.fract() == 0.0 && f.abs() < 1.0e38 {
                KeyId::Int(*f as i128)
            } else {
                KeyId::Float(f.to_bits())
            }
        }
        Value::Str(s) => KeyId::Str(s),
        Value::Binary(b) => KeyId::Bytes(b),
        Value::Timestamp(ts) => match ts.time {
            None => KeyId::Date(timestamp_canonical(ts)),
            Some(t) if t.utc_offset_seconds.is_none() => KeyId::Naive(timestamp_canonical(ts)),
            Some(_) => KeyId::Zoned(timestamp_canonical(ts)),
        },
        Value::Seq(_) | Value::Map(_) | Value::Recursive(_) => return None,
    })
}

fn plain_str(n: &Node) -> Option<&str> {
    match (n.tag(), n.value()) {
        (None, Value::Str(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// Removes duplicate keys in place (first position, last value). Cheap when there are none.
pub(crate) fn dedupe(pairs: &mut Vec<(Node, Node)>) {
    if pairs.len() < 2 {
        return;
    }
    // Index of the first occurrence for every pair that repeats an earlier key.
    let mut repeats: Vec<(usize, usize)> = Vec::new();
    if pairs.len() <= 12 {
        if pairs.iter().all(|(k, _)| plain_str(k).is_some()) {
            // All plain string keys: compare the strings directly.
            for j in 1..pairs.len() {
                let kj = plain_str(&pairs[j].0);
                if let Some(i) = pairs[..j].iter().position(|(k, _)| plain_str(k) == kj) {
                    repeats.push((i, j));
                }
            }
        } else {
            for j in 1..pairs.len() {
                if let Some(kj) = key_id(&pairs[j].0) {
                    if let Some(i) = pairs[..j]
                        .iter()
                        .position(|(k, _)| key_id(k).as_ref() == Some(&kj))
                    {
                        repeats.push((i, j));
                    }
                }
            }
        }
    } else if pairs.len() <= SMALL_TABLE && pairs.iter().all(|(k, _)| plain_str(k).is_some()) {
        // All plain string keys (the usual mapping): hash the strings themselves.
        string_repeats(pairs, &mut repeats);
    } else if pairs.len() <= SMALL_TABLE {
        let seen = HashMap::with_capacity_and_hasher(pairs.len(), FastBuild::default());
        find_repeats(pairs, seen, &mut repeats);
    } else {
        find_repeats(pairs, HashMap::with_capacity(pairs.len()), &mut repeats);
    }
    if repeats.is_empty() {
        return;
    }
    let mut drop = vec![false; pairs.len()];
    for &(first, later) in &repeats {
        let value = pairs[later].1.clone();
        pairs[first].1 = value;
        drop[later] = true;
    }
    let mut i = 0;
    pairs.retain(|_| {
        let keep = !drop[i];
        i += 1;
        keep
    });
}

/// Remembers the keys of recent mappings found free of duplicates, so records that repeat
/// the same key nodes (the parser shares repeated plain scalars) are checked by identity:
/// the same key nodes in the same order cannot hold a duplicate where they held none.
///
/// Only mappings whose keys are all shared nodes are remembered (a key of its own cannot
/// come back); eight entries, chosen by the first key, serve records nested in records.
#[derive(Default)]
pub(crate) struct KeyMemo {
    slots: [Vec<Node>; MEMO_SLOTS],
}

const MEMO_SLOTS: usize = 8;

impl KeyMemo {
    /// [`dedupe`], skipped for a key list already seen free of duplicates.
    pub(crate) fn dedupe(&mut self, pairs: &mut Vec<(Node, Node)>) {
        let Some((first, _)) = pairs.first() else {
            return;
        };
        if pairs.len() < 2 {
            return;
        }
        let Some(slot) = self.slots.get_mut((first.id() >> 4) % MEMO_SLOTS) else {
            dedupe(pairs);
            return;
        };
        if slot.len() == pairs.len() && pairs.iter().zip(slot.iter()).all(|((k, _), m)| k.ptr_eq(m))
        {
            return;
        }
        let before = pairs.len();
        dedupe(pairs);
        if pairs.len() == before && pairs.iter().all(|(k, _)| k.is_shared()) {
            slot.clear();
            slot.extend(pairs.iter().map(|(k, _)| k.clone()));
        }
    }
}

thread_local! {
    /// The open-addressing table of [`string_repeats`], kept between mappings.
    static TABLE: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// [`find_repeats`] for mappings whose keys are all plain strings, through a small
/// open-addressing table of pair indices (reused, so a mapping costs no allocation).
fn string_repeats(pairs: &[(Node, Node)], repeats: &mut Vec<(usize, usize)>) {
    let key = |i: usize| pairs.get(i).and_then(|(k, _)| plain_str(k)).unwrap_or("");
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        let size = (pairs.len() * 2).next_power_of_two();
        t.clear();
        t.resize(size, 0);
        let mask = size - 1;
        for j in 0..pairs.len() {
            let k = key(j);
            let mut h = (FastBuild::default().hash_one(k) as usize) & mask;
            loop {
                match t.get(h).copied() {
                    Some(0) | None => {
                        if let Some(slot) = t.get_mut(h) {
                            *slot = j as u32 + 1;
                        }
                        break;
                    }
                    Some(e) => {
                        let i = (e - 1) as usize;
                        if key(i) == k {
                            repeats.push((i, j));
                            break;
                        }
                        h = (h + 1) & mask;
                    }
                }
            }
        }
    });
}

/// Notes `(first, later)` for every pair whose key repeats an earlier one.
fn find_repeats<'a, S: BuildHasher>(
    pairs: &'a [(Node, Node)],
    mut seen: HashMap<KeyId<'a>, usize, S>,
    repeats: &mut Vec<(usize, usize)>,
) {
    for (j, (k, _)) in pairs.iter().enumerate() {
        if let Some(id) = key_id(k) {
            match seen.entry(id) {
                Entry::Occupied(e) => repeats.push((*e.get(), j)),
                Entry::Vacant(e) => {
                    e.insert(j);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(v: Value) -> Node {
        Node::new(v)
    }

    #[test]
    fn last_value_first_position() {
        let mut pairs = vec![
            (Node::str("a"), n(Value::Int(Integer::Small(1)))),
            (Node::str("b"), n(Value::Int(Integer::Small(2)))),
            (Node::str("a"), n(Value::Int(Integer::Small(3)))),
        ];
        dedupe(&mut pairs);
        assert_eq!(pairs.len(), 2);
        assert_eq!(pairs[0].0.as_str(), Some("a"));
        assert_eq!(pairs[0].1.as_i64(), Some(3));
        assert_eq!(pairs[1].1.as_i64(), Some(2));
    }

    #[test]
    fn python_numeric_equality_and_nan() {
        let mut pairs = vec![
            (n(Value::Int(Integer::Small(1))), Node::str("a")),
            (n(Value::Float(1.0)), Node::str("b")),
            (n(Value::Bool(true)), Node::str("c")),
            (n(Value::Float(f64::NAN)), Node::str("d")),
            (n(Value::Float(f64::NAN)), Node::str("e")),
        ];
        dedupe(&mut pairs);
        assert_eq!(pairs.len(), 3);
        assert_eq!(pairs[0].0.as_i64(), Some(1));
        assert_eq!(pairs[0].1.as_str(), Some("c"));
    }

    #[test]
    fn large_maps_use_hashing() {
        let mut pairs: Vec<(Node, Node)> = (0..100)
            .map(|i| {
                (
                    Node::str(format!("k{}", i % 50)),
                    n(Value::Int(Integer::Small(i))),
                )
            })
            .collect();
        dedupe(&mut pairs);
        assert_eq!(pairs.len(), 50);
        assert_eq!(pairs[7].0.as_str(), Some("k7"));
        assert_eq!(pairs[7].1.as_i64(), Some(57));
    }
}
