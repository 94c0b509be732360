//! Conformance of the YAML layer against python asdf: the official reference files' trees
//! and their canonical sidecars, and a differential harness against PyYAML (ignored test).

use serde_json::{json, Map as JMap, Value as J};

use super::*;

/// Canonical JSON of a node (docs/canonical.md), with every ndarray replaced by a marker (the array
/// layer owns those).
fn canon(node: &Node) -> J {
    if node.is_ndarray() {
        return J::String("<ndarray>".into());
    }
    if let Some(tag) = node.tag() {
        match tag {
            "tag:yaml.org,2002:omap" => {
                return json!({"$omap": node.as_seq().unwrap_or_default().iter().map(|p| {
                    let (k, v) = &p.as_map().unwrap()[0];
                    json!([canon(k), canon(v)])
                }).collect::<Vec<_>>()})
            }
            "tag:yaml.org,2002:pairs" => {
                return J::Array(
                    node.as_seq()
                        .unwrap_or_default()
                        .iter()
                        .map(|p| {
                            let (k, v) = &p.as_map().unwrap()[0];
                            json!([canon(k), canon(v)])
                        })
                        .collect(),
                )
            }
            "tag:yaml.org,2002:set" => {
                let mut items: Vec<J> = node
                    .as_map()
                    .unwrap_or_default()
                    .iter()
                    .map(|(k, _)| canon(k))
                    .collect();
                items.sort_by_key(|v| v.to_string());
                return json!({ "$set": items });
            }
            _ => {}
        }
        return json!({"$tag": tag, "value": canon_value(node.value())});
    }
    canon_value(node.value())
}

fn canon_value(v: &Value) -> J {
    match v {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => serde_json::from_str(&i.to_string()).unwrap(),
        Value::Float(f) if f.is_nan() => json!({"$float": "nan"}),
        Value::Float(f) if f.is_infinite() => {
            json!({"$float": if *f > 0.0 { "inf" } else { "-inf" }})
        }
        Value::Float(f) => serde_json::from_str(&format!("{f:?}")).unwrap(),
        Value::Str(s) => J::String(s.clone()),
        Value::Timestamp(ts) => json!({ "$timestamp": timestamp_canonical(ts) }),
        Value::Binary(b) => {
            json!({"$bytes": b.iter().map(|x| format!("{x:02x}")).collect::<String>()})
        }
        Value::Recursive(_) => json!({"$recursive": true}),
        Value::Seq(items) => J::Array(items.iter().map(canon).collect()),
        Value::Map(pairs) => {
            if pairs
                .iter()
                .all(|(k, _)| k.tag().is_none() && k.as_str().is_some())
            {
                let mut m = JMap::new();
                for (k, v) in pairs {
                    let k = k.as_str().unwrap_or_default();
                    let k = if k.starts_with('$') {
                        format!("${k}")
                    } else {
                        k.to_string()
                    };
                    m.insert(k, canon(v));
                }
                J::Object(m)
            } else {
                let mut items: Vec<J> = pairs
                    .iter()
                    .map(|(k, v)| json!([canon(k), canon(v)]))
                    .collect();
                items.sort_by_key(|p| p[0].to_string());
                json!({ "$map": items })
            }
        }
    }
}

/// Replaces `{"$ndarray": …}` by the marker used in [`canon`].
fn mask_ndarrays(v: &mut J) {
    match v {
        J::Object(m) if m.contains_key("$ndarray") => *v = J::String("<ndarray>".into()),
        J::Object(m) => m.values_mut().for_each(mask_ndarrays),
        J::Array(a) => a.iter_mut().for_each(mask_ndarrays),
        _ => {}
    }
}

/// Equality with ints and floats kept apart and floats compared by value (and sign of zero).
fn same(a: &J, b: &J) -> bool {
    match (a, b) {
        (J::Number(x), J::Number(y)) => {
            let (xs, ys) = (x.to_string(), y.to_string());
            let is_float = |s: &str| s.contains(['.', 'e', 'E']);
            if is_float(&xs) != is_float(&ys) {
                return false;
            }
            if is_float(&xs) {
                let (fx, fy): (f64, f64) = (xs.parse().unwrap(), ys.parse().unwrap());
                fx == fy && fx.is_sign_negative() == fy.is_sign_negative()
            } else {
                xs == ys
            }
        }
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (J::Object(x), J::Object(y)) => {
            if let (Some(J::Array(px)), Some(J::Array(py))) = (x.get("$map"), y.get("$map")) {
                // Unordered pairs.
                return px.len() == py.len() && px.iter().all(|p| py.iter().any(|q| same(p, q)));
            }
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// The YAML tree of an ASDF file: from `%YAML` to the `...` line.
fn tree_text(bytes: &[u8]) -> Option<&[u8]> {
    let start = if bytes.starts_with(b"%YAML") {
        0
    } else {
        bytes.windows(6).position(|w| w == b"\n%YAML")? + 1
    };
    let rest = &bytes[start..];
    let end = rest.windows(4).position(|w| w == b"\n...").map(|p| p + 4)?;
    // Include the newline after `...`.
    let end = (end..=rest.len().min(end + 2))
        .find(|&e| rest[..e].ends_with(b"\n"))
        .unwrap_or(end);
    Some(&rest[..end])
}

#[test]
fn reference_files_match_their_sidecars() {
    let Some(files) = asdf_test_data::reference_files() else {
        return;
    };
    let mut checked = 0;
    let mut failures = Vec::new();
    {
        for path in files {
            let name = path.to_string_lossy().to_string();
            let expect_path = if name.ends_with(".yaml") {
                format!("{name}.expect.json")
            } else if let Some(stem) = name.strip_suffix(".asdf") {
                format!("{stem}.expect.json")
            } else {
                continue;
            };
            let bytes = std::fs::read(&path).unwrap();
            let Some(tree) = tree_text(&bytes) else {
                panic!("{name}: no tree found");
            };
            let expect_text = std::fs::read_to_string(&expect_path)
                .unwrap_or_else(|e| panic!("{expect_path}: {e}"));
            let mut expect: J = serde_json::from_str(&expect_text).unwrap();
            let mut expected_tree = expect["tree"].take();
            mask_ndarrays(&mut expected_tree);
            match parse(tree, &YamlLimits::default()) {
                Ok(doc) => {
                    let got = canon(&doc.root);
                    if !same(&got, &expected_tree) {
                        failures.push(format!("{name}:\n got {got}\n exp {expected_tree}"));
                    }
                }
                Err(e) => failures.push(format!("{name}: {e}")),
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked, asdf_test_data::REFERENCE_FILE_COUNT);
}

/// Differential harness: `YAML_DIFF_IN` holds NUL-separated YAML snippets; one JSON line per
/// snippet is written to `YAML_DIFF_OUT` (`{"ok": canon}` or `{"err": kind}`), to compare
/// with the same dump made by PyYAML / python asdf's loader.
#[test]
#[cfg(feature = "dev-tools")]
fn differential_dump() {
    let input = std::fs::read(std::env::var("YAML_DIFF_IN").unwrap()).unwrap();
    let mut out = String::new();
    let mut fast = 0;
    for case in input.split(|&b| b == 0) {
        let took_fast = match super::fast_parse_tests::check_paths(case) {
            Err(e) => panic!("fast and libyaml paths disagree: {e}"),
            Ok(took) => took,
        };
        fast += usize::from(took_fast);
        let line = match std::panic::catch_unwind(|| parse(case, &YamlLimits::default())) {
            Ok(Ok(doc)) => json!({ "ok": canon(&doc.root), "fast": took_fast }),
            Ok(Err(e)) => json!({ "err": format!("{e:?}") }),
            Err(_) => json!({ "err": "PANIC" }),
        };
        out.push_str(&line.to_string());
        out.push('\n');
    }
    std::fs::write(std::env::var("YAML_DIFF_OUT").unwrap(), out).unwrap();
    eprintln!("fast path took {fast} cases");
}
