//! `asdftool diff`: python asdf's own diff pairs report the same set of paths as python's
//! `asdftool diff` (tests/data/python-asdf/diff-paths.json, made by
//! tests/oracle/diff_paths.py), plus exit codes, tolerances and tags.

use crate::common;
use crate::tool;

use tool::asdftool;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use asdf_core::write::{WriteOptions, Writer};
use asdf_core::Node;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The paths of `diff`'s output lines (`PATH: what`) with what each says.
fn paths(out: &str) -> BTreeMap<String, String> {
    out.lines()
        .map(|l| {
            let (p, what) = l
                .split_once(": ")
                .unwrap_or_else(|| panic!("bad line {l:?}"));
            (p.to_string(), what.to_string())
        })
        .collect()
}

/// Differences python's `asdftool diff` does not report because it compares sequences with
/// `zip`, which drops the tail of the longer one: `frames[0].axes_names` is `[lon, lat]` in
/// frames0.asdf and `[lon, lat, blurg]` in frames1.asdf.
const PYTHON_MISSES: &[(&str, &str)] = &[("frames0.asdf", "/frames/0/axes_names")];

#[test]
fn python_asdf_diff_pairs_report_the_same_paths() {
    let Some(json) = asdf_test_data::require("python-asdf/diff-paths.json") else {
        return;
    };
    let dir = json.parent().unwrap().to_path_buf();
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cases = expected["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 8, "python ships eight diff outputs");
    for case in cases {
        let first = case["first"].as_str().unwrap();
        let second = case["second"].as_str().unwrap();
        let a = dir.join(first);
        let b = dir.join(second);
        let mut args = vec![
            "diff".to_string(),
            a.display().to_string(),
            b.display().to_string(),
        ];
        for ig in case["ignore"].as_array().unwrap() {
            args.push("--ignore".into());
            args.push(ig.as_str().unwrap().into());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = asdftool(&args);
        let python = case["paths"].as_object().unwrap();
        let ours = paths(&text(&out.stdout));
        let label = format!("{first} {second} {:?}", case["ignore"]);
        assert!(out.stderr.is_empty(), "{label}: {}", text(&out.stderr));
        let want_code = if python.is_empty() { 0 } else { 1 };
        let mut want: BTreeSet<String> = python.keys().cloned().collect();
        for (file, path) in PYTHON_MISSES {
            if *file == first {
                want.insert(path.to_string());
            }
        }
        let got: BTreeSet<String> = ours.keys().cloned().collect();
        assert_eq!(got, want, "{label}:\n{}", text(&out.stdout));
        assert_eq!(
            out.status.code(),
            Some(if want.is_empty() { want_code } else { 1 }),
            "{label}"
        );
        // what each says: one side only, or which parts of two arrays differ
        for (path, kind) in python {
            let what = &ours[path];
            let kind = kind.as_str().unwrap();
            match kind {
                "first only" => assert_eq!(what, "only in the first file", "{label} {path}"),
                "second only" => assert_eq!(what, "only in the second file", "{label} {path}"),
                "value" => assert!(what.contains(" != "), "{label} {path}: {what}"),
                k => {
                    let kinds = k.strip_prefix("array: ").unwrap();
                    assert!(
                        what.starts_with("arrays differ by "),
                        "{label} {path}: {what}"
                    );
                    for part in ["shape", "datatype", "contents"] {
                        assert_eq!(
                            what.contains(part),
                            kinds.contains(part),
                            "{label} {path}: {what} (python: {kinds})"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_committed_python_paths_match_the_diff_files_python_ships() {
    // every path python reports names keys that appear in its shipped .diff output
    let Some(json) = asdf_test_data::require("python-asdf/diff-paths.json") else {
        return;
    };
    let dir = json.parent().unwrap();
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for case in expected["cases"].as_array().unwrap() {
        let shipped =
            std::fs::read_to_string(dir.join(case["python_diff"].as_str().unwrap())).unwrap();
        for path in case["paths"].as_object().unwrap().keys() {
            let last = path.rsplit('/').next().unwrap();
            if last.parse::<usize>().is_err() {
                assert!(
                    shipped.contains(&format!("{last}:")) || shipped.contains(last),
                    "{path} not in {}",
                    case["python_diff"]
                );
            }
        }
    }
}

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("asdftool-diff-{name}"))
}

fn write(path: &Path, values: &[f64], note: &str, unit_tag: bool) {
    let arr = ndarray::Array1::from_vec(values.to_vec());
    let mut w = Writer::new(WriteOptions::default());
    let data = w.add_array(&arr);
    let unit = if unit_tag {
        Node::tagged(
            "tag:stsci.edu:asdf/unit/unit-1.0.0",
            asdf_core::Value::Str("m".into()),
        )
    } else {
        Node::str("m")
    };
    let root = Node::map([
        ("data", data),
        ("note", Node::str(note)),
        ("unit", unit),
        ("list", Node::seq([Node::int(1), Node::int(2)])),
    ]);
    w.write_to_path(&root, path).unwrap();
}

#[test]
fn equal_files_exit_0_silently_and_tolerances_apply_to_arrays() {
    let dir = scratch("tol");
    let a = dir.join("a.asdf");
    let b = dir.join("b.asdf");
    let c = dir.join("c.asdf");
    write(&a, &[1.0, 2.0, 3.0, f64::NAN], "x", false);
    write(&b, &[1.0, 2.0, 3.0, f64::NAN], "x", false);
    write(&c, &[1.0, 2.0001, 3.0, f64::NAN], "x", false);
    let (sa, sb, sc) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        c.to_str().unwrap(),
    );

    let same = asdftool(&["diff", sa, sb]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same.stdout));
    assert!(same.stdout.is_empty() && same.stderr.is_empty());

    let near = asdftool(&["diff", sa, sc]);
    assert_eq!(near.status.code(), Some(1));
    assert_eq!(
        text(&near.stdout).trim(),
        "/data: arrays differ by contents (1 of 4 elements, first at flat index 1, largest \
         difference 0.00010000000000021103)"
    );
    assert_eq!(
        asdftool(&["diff", sa, sc, "--rtol", "1e-4"]).status.code(),
        Some(0)
    );
    assert_eq!(
        asdftool(&["diff", sa, sc, "--atol", "1e-3"]).status.code(),
        Some(0)
    );
    assert_eq!(
        asdftool(&["diff", sa, sc, "--atol", "1e-6"]).status.code(),
        Some(1)
    );
    assert_eq!(
        asdftool(&["diff", sa, sc, "--ignore", "/data"])
            .status
            .code(),
        Some(0)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn tags_values_and_lengths() {
    let dir = scratch("tags");
    let a = dir.join("a.asdf");
    let b = dir.join("b.asdf");
    write(&a, &[1.0, 2.0], "x", true);
    write(&b, &[1.0, 2.0, 3.0], "y", false);
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = asdftool(&["diff", sa, sb]);
    assert_eq!(out.status.code(), Some(1));
    let got = paths(&text(&out.stdout));
    assert_eq!(
        got.keys().map(String::as_str).collect::<Vec<_>>(),
        vec!["/data", "/data/shape/0", "/note"],
        "{}",
        text(&out.stdout)
    );
    assert_eq!(got["/note"], "\"x\" != \"y\"");
    assert!(got["/data"].starts_with("arrays differ by shape ([2] vs [3]) and contents"));
    let tags = asdftool(&["diff", sa, sb, "--tags", "--ignore", "/data", "-i", "note"]);
    assert_eq!(
        text(&tags.stdout),
        "/unit: tags differ: !unit/unit-1.0.0 vs none\n"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn unreadable_input_exits_2_with_one_line() {
    let dir = scratch("bad");
    let junk = dir.join("junk.asdf");
    std::fs::write(&junk, b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: [\n").unwrap();
    let good = dir.join("good.asdf");
    write(&good, &[1.0], "x", false);
    for (a, b) in [
        (junk.clone(), good.clone()),
        (good.clone(), dir.join("missing.asdf")),
    ] {
        let out = asdftool(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("asdftool: "), "{err}");
    }
    let usage = asdftool(&["diff", good.to_str().unwrap()]);
    assert_eq!(usage.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_same_content_in_another_layout_is_equal() {
    // compressed blocks, inline arrays, byte order, streamed and inferred shapes are layout
    let dir = scratch("layout");
    let mut files = vec![common_example()];
    if let Some(f) = asdf_test_data::require("fixtures/dtypes_structured_inline_nested.asdf") {
        files.push(f);
    }
    if let Some(f) = asdf_test_data::require("fixtures/stream.asdf") {
        files.push(f);
    }
    for src in files {
        let s = src.to_str().unwrap();
        for (cmd, extra) in [("defragment", vec!["-c", "zstd"]), ("to-yaml", vec![])] {
            let out = dir.join(format!("{cmd}.asdf"));
            let o = out.to_str().unwrap();
            let mut args = vec![cmd, s, "-o", o];
            args.extend(extra);
            assert_eq!(asdftool(&args).status.code(), Some(0), "{args:?}");
            let d = asdftool(&["diff", s, o, "-i", "/asdf_library", "-i", "/history"]);
            assert_eq!(
                d.status.code(),
                Some(0),
                "{cmd} {s}:\n{}{}",
                text(&d.stdout),
                text(&d.stderr)
            );
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

fn common_example() -> PathBuf {
    asdf_test_data::repository_dir().join("examples/data/observation.asdf")
}

#[test]
fn ignore_takes_pythons_list_form() {
    let Some(dir) = asdf_test_data::require_dir("python-asdf") else {
        return;
    };
    let (a, b) = (dir.join("frames0.asdf"), dir.join("frames1.asdf"));
    let out = asdftool(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-i",
        "[asdf_library,frames[*].reference_frame]",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stdout),
        "/frames/0/axes_names: sequences of 2 and 3 items (item 2 only in the second file)\n"
    );
}
