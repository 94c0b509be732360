//! Shared helpers for the integration tests: the canonical-JSON comparer and corpus discovery.
//!
//! The comparer follows docs/canonical.md (as `tests/oracle/canonical.py compare` does): values
//! are compared, not text;
//! integers and floats are different types (`1` is not `1.0`); floats compare as `f64` and
//! `-0.0` differs from `0.0`; objects compare key by key, arrays element by element; the items
//! of `{"$map": [...]}` and `{"$set": [...]}` compare as unordered collections.
//!
//! `serde_json` is built with `arbitrary_precision`, so a number keeps its text: a number whose
//! text contains `.`, `e` or `E` is a float, any other is an integer (compared exactly, any size).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// At most this many differences are collected per comparison.
pub const DIFF_LIMIT: usize = 200;

/// A JSON number classified the way python's `json` module reads it.
#[derive(Debug, Clone, PartialEq)]
enum Num {
    /// Exact integer text, normalised (no leading `+`, `-0` is `0`).
    Int(String),
    /// A float; compared by value and sign.
    Float(f64),
}

fn classify(n: &serde_json::Number) -> Num {
    let text = n.to_string();
    if text.contains(['.', 'e', 'E']) {
        // An out-of-range literal such as 1e400 reads as inf in python too.
        Num::Float(text.parse::<f64>().unwrap_or(f64::NAN))
    } else {
        let t = text.trim_start_matches('+');
        let (neg, digits) = match t.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, t),
        };
        let digits = digits.trim_start_matches('0');
        if digits.is_empty() {
            Num::Int("0".to_string())
        } else if neg {
            Num::Int(format!("-{digits}"))
        } else {
            Num::Int(digits.to_string())
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) => match classify(n) {
            Num::Int(_) => "int",
            Num::Float(_) => "float",
        },
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

fn float_eq(a: f64, b: f64) -> bool {
    a == b && a.is_sign_negative() == b.is_sign_negative()
}

/// A normalised text for a value: equal texts if and only if the values compare equal.
/// Used to compare `$map`/`$set` items as unordered collections (and to sort them for reports).
pub fn canonical_text(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match classify(n) {
            Num::Int(s) => out.push_str(&s),
            // `{:?}` round-trips and always shows a `.` or `e`, and the sign of -0.0.
            Num::Float(f) => out.push_str(&format!("{f:?}f")),
        },
        Value::String(s) => out.push_str(&serde_json::to_string(s).unwrap_or_default()),
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            if let Some(items) = unordered_items(map) {
                // the unordered collections are canonical when sorted
                let mut texts: Vec<String> = items.iter().map(canonical_text).collect();
                texts.sort();
                out.push('{');
                out.push_str(
                    &serde_json::to_string(map.keys().next().map_or("", |k| k)).unwrap_or_default(),
                );
                out.push_str(":[");
                out.push_str(&texts.join(","));
                out.push_str("]}");
                return;
            }
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(':');
                write_canonical(&map[k.as_str()], out);
            }
            out.push('}');
        }
    }
}

/// The items of `{"$map": [...]}` or `{"$set": [...]}` (an object with exactly that one key).
fn unordered_items(map: &serde_json::Map<String, Value>) -> Option<&Vec<Value>> {
    if map.len() != 1 {
        return None;
    }
    for key in ["$map", "$set"] {
        if let Some(Value::Array(items)) = map.get(key) {
            return Some(items);
        }
    }
    None
}

fn short(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    if s.chars().count() <= 80 {
        s
    } else {
        let head: String = s.chars().take(77).collect();
        format!("{head}...")
    }
}

/// Compares `expected` with `actual`; returns the differences, each prefixed by its JSON path
/// (`/tree/value/data/$ndarray/sha256: ...`). `ignore` lists paths to skip.
pub fn compare(expected: &Value, actual: &Value, ignore: &[&str]) -> Vec<String> {
    let mut diffs = Vec::new();
    compare_at(expected, actual, "", &mut diffs, ignore);
    diffs
}

fn compare_at(a: &Value, b: &Value, path: &str, diffs: &mut Vec<String>, ignore: &[&str]) {
    if diffs.len() >= DIFF_LIMIT || ignore.contains(&path) {
        return;
    }
    let shown = if path.is_empty() { "/" } else { path };
    let (ka, kb) = (kind(a), kind(b));
    if ka != kb {
        diffs.push(format!(
            "{shown}: type {ka} != {kb}: {} vs {}",
            short(a),
            short(b)
        ));
        return;
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (classify(x), classify(y)) {
            (Num::Float(fx), Num::Float(fy)) => {
                if !float_eq(fx, fy) {
                    diffs.push(format!("{shown}: {fx:?} != {fy:?}"));
                }
            }
            (Num::Int(ix), Num::Int(iy)) => {
                if ix != iy {
                    diffs.push(format!("{shown}: {ix} != {iy}"));
                }
            }
            _ => unreachable!("kinds already compared"),
        },
        (Value::Null, Value::Null) => {}
        (Value::Bool(x), Value::Bool(y)) => {
            if x != y {
                diffs.push(format!("{shown}: {x} != {y}"));
            }
        }
        (Value::String(x), Value::String(y)) => {
            if x != y {
                diffs.push(format!("{shown}: {} != {}", short(a), short(b)));
            }
        }
        (Value::Array(xs), Value::Array(ys)) => {
            if xs.len() != ys.len() {
                diffs.push(format!("{shown}: list length {} != {}", xs.len(), ys.len()));
            }
            for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
                compare_at(x, y, &format!("{path}/{i}"), diffs, ignore);
            }
        }
        (Value::Object(ma), Value::Object(mb)) => {
            for key in ["$map", "$set"] {
                let both =
                    ma.len() == 1 && mb.len() == 1 && ma.contains_key(key) && mb.contains_key(key);
                if !both {
                    continue;
                }
                if let (Some(Value::Array(xa)), Some(Value::Array(xb))) = (ma.get(key), mb.get(key))
                {
                    let mut sa: Vec<(String, &Value)> =
                        xa.iter().map(|v| (canonical_text(v), v)).collect();
                    let mut sb: Vec<(String, &Value)> =
                        xb.iter().map(|v| (canonical_text(v), v)).collect();
                    sa.sort_by(|p, q| p.0.cmp(&q.0));
                    sb.sort_by(|p, q| p.0.cmp(&q.0));
                    let same = sa.len() == sb.len() && sa.iter().zip(&sb).all(|(p, q)| p.0 == q.0);
                    if !same {
                        // an ordered comparison of the sorted items, for a readable report
                        let va = Value::Array(sa.into_iter().map(|p| p.1.clone()).collect());
                        let vb = Value::Array(sb.into_iter().map(|p| p.1.clone()).collect());
                        compare_at(&va, &vb, &format!("{path}/{key}"), diffs, ignore);
                    }
                    return;
                }
            }
            let mut keys: Vec<&String> = ma.keys().chain(mb.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}/{}", asdf_core::unstable::escape_pointer_segment(k));
                if ignore.contains(&p.as_str()) {
                    continue;
                }
                match (ma.get(k.as_str()), mb.get(k.as_str())) {
                    (None, _) => diffs.push(format!("{p}: missing in expected")),
                    (_, None) => diffs.push(format!("{p}: missing in actual")),
                    (Some(x), Some(y)) => compare_at(x, y, &p, diffs, ignore),
                }
                if diffs.len() >= DIFF_LIMIT {
                    return;
                }
            }
        }
        _ => unreachable!("kinds already compared"),
    }
}

#[allow(unused_imports)] // each test crate uses its own part of this module
pub use asdf_test_data::{files_with_suffix, sidecar_of};

/// The repository root (the workspace directory).
pub fn repo_root() -> PathBuf {
    asdf_test_data::repository_dir()
}

/// A folder of the test data (`tests/data/<sub>`, or under `$ASDF_TEST_DATA`); absent, the test
/// fails with the locator's message saying how to get it.
pub fn data_dir(sub: &str) -> PathBuf {
    asdf_test_data::require_dir(sub).unwrap_or_else(|| {
        panic!("tests/data/{sub} is absent, and this test has no way to run without it")
    })
}

/// Parses JSON text into a value (numbers keep their text).
pub fn parse_json(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))
}

/// With `ASDF_WRITE_OUT=DIR`, saves a written file as `DIR/NAME.asdf` with our canonical
/// reading of it beside it (`NAME.rust.json`), for the python check
/// (`tests/oracle/check_written.py`). Does nothing without the variable.
pub fn dump_for_oracle(name: &str, bytes: &[u8]) {
    let Some(dir) = asdf_test_data::write_out_dir() else {
        return;
    };
    // staged under a name of this call only, then left there by the shared helper
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let staged = dir.join(format!(".{name}.{}-{n}.staged", std::process::id()));
    std::fs::write(&staged, bytes).unwrap();
    asdf_test_data::leave_for_oracle(name, &staged, |p| {
        asdf_core::unstable::canonical::to_json(&asdf_core::AsdfFile::open(p).unwrap()).unwrap()
    });
    std::fs::remove_file(&staged).unwrap();
}

/// A fresh folder under the system's temporary folder, removed with everything in it when
/// dropped (so test runs leave nothing behind). Derefs to its path.
pub struct Scratch(PathBuf);

impl Scratch {
    /// `asdf-{name}-{pid}`, emptied first.
    pub fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("asdf-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(s: &str) -> Value {
        parse_json(s).unwrap()
    }

    #[test]
    fn int_and_float_differ() {
        let d = compare(&j("1"), &j("1.0"), &[]);
        assert_eq!(d, vec!["/: type int != float: 1 vs 1.0".to_string()]);
        assert!(!compare(&j("[1e3]"), &j("[1000]"), &[]).is_empty());
    }

    #[test]
    fn float_formatting_does_not_matter() {
        assert!(compare(&j("1e+16"), &j("1e16"), &[]).is_empty());
        assert!(compare(&j("1e16"), &j("10000000000000000.0"), &[]).is_empty());
        assert!(compare(&j("0.1"), &j("1E-1"), &[]).is_empty());
        assert!(!compare(&j("0.1"), &j("0.10000000000000002"), &[]).is_empty());
    }

    #[test]
    fn negative_zero_differs() {
        let d = compare(&j("{\"x\": -0.0}"), &j("{\"x\": 0.0}"), &[]);
        assert_eq!(d, vec!["/x: -0.0 != 0.0".to_string()]);
        assert!(compare(&j("-0.0"), &j("-0e0"), &[]).is_empty());
        // integer -0 is 0, as in python
        assert!(compare(&j("-0"), &j("0"), &[]).is_empty());
    }

    #[test]
    fn big_ints_are_exact() {
        assert!(compare(
            &j("123456789012345678901234567890"),
            &j("123456789012345678901234567890"),
            &[]
        )
        .is_empty());
        assert!(!compare(&j("18446744073709551615"), &j("18446744073709551614"), &[]).is_empty());
        assert!(!compare(&j("9007199254740993"), &j("9007199254740992"), &[]).is_empty());
    }

    #[test]
    fn map_order_ignored() {
        let a = j(r#"{"$map": [[1, "a"], ["x", 2.0], [false, null]]}"#);
        let b = j(r#"{"$map": [[false, null], [1, "a"], ["x", 2e0]]}"#);
        assert!(compare(&a, &b, &[]).is_empty());
        let c = j(r#"{"$map": [[false, null], [1, "b"], ["x", 2.0]]}"#);
        let d = compare(&a, &c, &[]);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].starts_with("/$map/"), "{d:?}");
        assert!(d[0].ends_with("\"a\" != \"b\""), "{d:?}");
        // int key 1 and float key 1.0 are different keys
        let e = j(r#"{"$map": [[1.0, "a"], ["x", 2.0], [false, null]]}"#);
        assert!(!compare(&a, &e, &[]).is_empty());
    }

    #[test]
    fn set_order_ignored_but_counts_matter() {
        assert!(compare(
            &j(r#"{"$set": [1, 2, 3]}"#),
            &j(r#"{"$set": [3, 1, 2]}"#),
            &[]
        )
        .is_empty());
        assert!(!compare(&j(r#"{"$set": [1, 2]}"#), &j(r#"{"$set": [1, 2, 2]}"#), &[]).is_empty());
    }

    #[test]
    fn lists_are_ordered() {
        let d = compare(&j("[1, 2]"), &j("[2, 1]"), &[]);
        assert_eq!(d, vec!["/0: 1 != 2".to_string(), "/1: 2 != 1".to_string()]);
        let d = compare(&j("[1]"), &j("[1, 2]"), &[]);
        assert_eq!(d, vec!["/: list length 1 != 2".to_string()]);
    }

    #[test]
    fn object_keys_and_paths() {
        let a = j(r#"{"tree": {"a/b": 1, "c~": {"d": "x"}, "only_a": 0}}"#);
        let b = j(r#"{"tree": {"c~": {"d": "y"}, "a/b": 1, "only_b": 0}}"#);
        let d = compare(&a, &b, &[]);
        assert_eq!(
            d,
            vec![
                "/tree/c~0/d: \"x\" != \"y\"".to_string(),
                "/tree/only_a: missing in actual".to_string(),
                "/tree/only_b: missing in expected".to_string(),
            ]
        );
        assert_eq!(
            compare(&a, &b, &["/tree/c~0", "/tree/only_a", "/tree/only_b"]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn nan_markers_and_strings() {
        assert!(compare(&j(r#"{"$float": "nan"}"#), &j(r#"{"$float": "nan"}"#), &[]).is_empty());
        assert!(!compare(&j(r#"{"$float": "inf"}"#), &j(r#"{"$float": "-inf"}"#), &[]).is_empty());
        assert!(!compare(&j(r#""1""#), &j("1"), &[]).is_empty());
        assert!(!compare(&j("true"), &j("1"), &[]).is_empty());
        assert!(!compare(&j("null"), &j("false"), &[]).is_empty());
    }

    #[test]
    fn canonical_text_is_faithful() {
        assert_eq!(canonical_text(&j("1e16")), canonical_text(&j("1e+16")));
        assert_ne!(canonical_text(&j("1")), canonical_text(&j("1.0")));
        assert_ne!(canonical_text(&j("0.0")), canonical_text(&j("-0.0")));
        assert_eq!(
            canonical_text(&j(r#"{"b": 1, "a": [2]}"#)),
            canonical_text(&j(r#"{"a": [2], "b": 1}"#))
        );
    }

    #[test]
    fn sidecar_names() {
        assert_eq!(
            sidecar_of(Path::new("x/basic.asdf")).unwrap(),
            Path::new("x/basic.expect.json")
        );
        assert_eq!(
            sidecar_of(Path::new("x/basic.yaml")).unwrap(),
            Path::new("x/basic.yaml.expect.json")
        );
        assert_eq!(
            sidecar_of(Path::new("x/exploded0000.asdf")).unwrap(),
            Path::new("x/exploded0000.expect.json")
        );
        assert!(sidecar_of(Path::new("x/basic.json")).is_none());
    }
}
