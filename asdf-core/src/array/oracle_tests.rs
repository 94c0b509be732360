//! Oracle tests: every ndarray of the official reference files (all standard versions) and
//! synthetic cases, with dtype, shape and canonical SHA-256 computed by python asdf 6.0.0
//! (`testdata/generate.py` writes `testdata/reference_arrays.json`).

use serde_json::Value as J;

use super::*;
use crate::yaml::{Integer, Node, Value};

const FIXTURE: &str = include_str!("testdata/reference_arrays.json");

/// A node from the canonical-JSON encoding (docs/canonical.md §2).
fn node(j: &J) -> Node {
    match j {
        J::Object(m) if m.contains_key("$tag") => {
            let tag = m["$tag"].as_str().unwrap().to_string();
            let inner = node(&m["value"]);
            Node::tagged(tag, inner.value().clone())
        }
        J::Object(m) if m.contains_key("$float") => {
            Node::new(Value::Float(match m["$float"].as_str().unwrap() {
                "nan" => f64::NAN,
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                other => panic!("bad $float {other}"),
            }))
        }
        J::Object(m) => Node::new(Value::Map(
            m.iter()
                .map(|(k, v)| {
                    let k = k
                        .strip_prefix('$')
                        .filter(|r| r.starts_with('$'))
                        .unwrap_or(k);
                    (Node::str(k), node(v))
                })
                .collect(),
        )),
        J::Array(a) => Node::new(Value::Seq(a.iter().map(node).collect())),
        J::String(s) => Node::str(s.clone()),
        J::Bool(b) => Node::new(Value::Bool(*b)),
        J::Null => Node::new(Value::Null),
        J::Number(n) => {
            let text = n.to_string();
            if text.contains(['.', 'e', 'E']) {
                Node::new(Value::Float(text.parse().unwrap()))
            } else {
                Node::new(Value::Int(match text.parse::<i128>() {
                    Ok(v) => Integer::Small(v),
                    Err(_) => Integer::Big(text),
                }))
            }
        }
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn read(case: &J) -> Result<DynArray, ArrayError> {
    let name = case["name"].as_str().unwrap();
    let meta = NdArrayMeta::from_node(&node(&case["node"]), name)?;
    match case["block"].as_str() {
        Some(h) => from_block(&meta, &hex(h), name),
        None => from_inline(&meta, name),
    }
}

#[test]
fn matches_python_asdf_on_every_case() {
    let doc: J = serde_json::from_str(FIXTURE).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() > 100);
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let expect = &case["expect"];
        let got = read(case);
        if expect.get("error").is_some() {
            if let Ok(a) = got {
                failures.push(format!(
                    "{name}: expected an error, got {:?} {:?}",
                    a.dtype, a.shape
                ));
            }
            continue;
        }
        let a = match got {
            Ok(a) => a,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let dtype: J = serde_json::from_str(&crate::canonical::dtype_json(&a.dtype)).unwrap();
        if dtype != expect["dtype"] {
            failures.push(format!("{name}: dtype {dtype} != {}", expect["dtype"]));
        }
        let shape: Vec<u64> = a.shape.iter().map(|&d| d as u64).collect();
        let want: Vec<u64> = expect["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        if shape != want {
            failures.push(format!("{name}: shape {shape:?} != {want:?}"));
        }
        if a.canonical_sha256_hex() != expect["sha256"].as_str().unwrap() {
            failures.push(format!("{name}: sha256 differs"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The typed and string accessors agree with the hashed bytes on the reference data.
#[test]
fn typed_access_on_reference_data() {
    let doc: J = serde_json::from_str(FIXTURE).unwrap();
    let find = |name: &str| {
        doc["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"].as_str().unwrap().split_once('/').unwrap().1 == name)
            .unwrap_or_else(|| panic!("no case {name}"))
            .clone()
    };
    let big = read(&find("endian.asdf#/big")).unwrap();
    let little = read(&find("endian.asdf#/little")).unwrap();
    assert_eq!(
        big.to_array::<i32>().unwrap(),
        little.to_array::<i32>().unwrap()
    );
    assert_eq!(
        big.to_array::<i32>().unwrap().into_raw_vec_and_offset().0,
        (0..42).collect::<Vec<i32>>()
    );
    let s = read(&find("ascii.asdf#/data")).unwrap();
    assert_eq!(
        s.strings().unwrap().into_raw_vec_and_offset().0,
        vec!["", "ascii"]
    );
    let u = read(&find("unicode_spp.asdf#/datatype<U")).unwrap();
    assert_eq!(
        u.strings().unwrap().into_raw_vec_and_offset().0,
        vec!["", "\u{10020}"]
    );
    let rec = read(&find("structured.asdf#/structured")).unwrap();
    assert_eq!(
        rec.field("a")
            .unwrap()
            .to_array::<u8>()
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        vec![1, 2]
    );
    assert_eq!(
        rec.field("b")
            .unwrap()
            .strings()
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        vec!["a", "b"]
    );
    let c = rec.field("c").unwrap().to_array::<f32>().unwrap();
    assert_eq!(c.into_raw_vec_and_offset().0, vec![3.3f32, 6.6]);
    let stream = read(&find("stream.asdf#/my_stream")).unwrap();
    let st = stream.to_array::<f64>().unwrap();
    assert_eq!(st.shape(), &[8, 8]);
    assert_eq!(st[[7, 3]], 7.0);
}
