//! Why `canonical::to_json` writes its JSON by hand (issue 29 item 1): it against serde_json
//! writing the same tree through a `Serialize` impl with sorted keys and a one-space pretty
//! indent, on a 50,000-record catalog without arrays (so that only the JSON writing counts).
//! serde_json's text is not even the canonical text (it cannot lay out the form's inline
//! `[64, 64]` shapes and `{"$float": "nan"}` objects inside an indented document, nor the
//! `$$`-escaped keys, `$map`, `$set` and arrays' hashes), so its time is a lower bound.
//!
//! `cargo run --release -p asdfrs-core --example canonical_vs_serde_json`
use std::hint::black_box;
use std::time::Instant;

use asdf_core::{AsdfFile, Node, Value};
use serde::ser::{SerializeMap, SerializeSeq};

struct T<'a>(&'a Node);

impl serde::Serialize for T<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let node = self.0;
        if let Some(tag) = node.tag() {
            let mut m = s.serialize_map(Some(2))?;
            m.serialize_entry("$tag", tag)?;
            m.serialize_entry("value", &V(node))?;
            return m.end();
        }
        V(node).serialize(s)
    }
}
struct V<'a>(&'a Node);
impl serde::Serialize for V<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.value() {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => s.serialize_i64(i.as_i64().unwrap_or(0)),
            Value::Float(f) => s.serialize_f64(*f),
            Value::Str(t) => s.serialize_str(t),
            Value::Seq(items) => {
                let mut q = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    q.serialize_element(&T(i))?;
                }
                q.end()
            }
            Value::Map(entries) => {
                let mut order: Vec<(&str, &Node)> = entries
                    .iter()
                    .map(|(k, v)| (k.as_str().unwrap_or(""), v))
                    .collect();
                order.sort_by(|a, b| a.0.cmp(b.0));
                let mut m = s.serialize_map(Some(order.len()))?;
                for (k, v) in order {
                    m.serialize_entry(k, &T(v))?;
                }
                m.end()
            }
            _ => s.serialize_unit(),
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let mut yaml = String::from("#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\ncatalog:\n");
    for i in 0..50_000 {
        yaml.push_str(&format!(
            "- {{id: {i}, name: star-{i}, ra: {}, dec: {}, mag: [{}, {}, {}], flags: {{ok: true, note: null}}, t: !<tag:example.org/thing-1.0.0> {{x: {}}}}}\n",
            i as f64 * 0.001 + 0.123, -(i as f64) * 1e-7, i % 20, 1.5, 2.25e-5, i
        ));
    }
    yaml.push_str("...\n");
    let file = AsdfFile::from_bytes(yaml.into_bytes()).unwrap();
    let root = file.tree();
    let (mut hand, mut serde) = (Vec::new(), Vec::new());
    let mut sizes = (0, 0);
    for _ in 0..7 {
        let t = Instant::now();
        let a = asdf_core::unstable::canonical::to_json(&file).unwrap();
        hand.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let mut out = Vec::with_capacity(a.len());
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
        let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
        serde::Serialize::serialize(&T(root), &mut ser).unwrap();
        let b = String::from_utf8(out).unwrap();
        serde.push(t.elapsed().as_secs_f64());
        sizes = (a.len(), b.len());
        black_box((a, b));
    }
    println!(
        "50,000 records ({} / {} bytes of JSON): hand-written {:.1} ms, serde_json {:.1} ms (median of 7)",
        sizes.0,
        sizes.1,
        median(hand) * 1e3,
        median(serde) * 1e3
    );
}
