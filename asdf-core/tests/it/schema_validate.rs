//! Schema validation of whole files and trees with the bundled schemas.
//!
//! * Every official reference file validates under its own ASDF Standard version (the
//!   `#ASDF_STANDARD` line; the directory's version for the pure-YAML ones).
//! * Crafted invalid trees give the expected error lines. Each invalid case was also checked
//!   once against python asdf 6.0.0 (`asdf.open(..., validate on read)` /
//!   `asdf.schema.validate`), which rejects every one of them:
//!   `asdf-core/tests/schema_validate_python.py` checks that, and `.ci/run` runs it.
//! * The data-driven cases in `tests/schema/*.yaml` (`{schema, valid: [...], invalid: [...]}`),
//!   when present, hold for every bundled schema they name.

use crate::common;

use std::path::{Path, PathBuf};

use asdf_core::schema::{
    register_schema, validate_against, validate_tagged, validate_tree, DEFAULT_STANDARD,
};
use asdf_core::yaml::{emit, EmitOptions};
use asdf_core::yaml::{parse, YamlLimits};
use asdf_core::{AsdfFile, Node};

fn files_in(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == ext))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The bundled schemas must be found: every test below depends on them.
#[track_caller]
fn assert_bundled() {
    assert!(
        asdf_core::schema::bundled::schema_for_tag(
            "1.6.0",
            "tag:stsci.edu:asdf/core/ndarray-1.1.0"
        )
        .is_some(),
        "the bundled ndarray-1.1.0 schema of ASDF Standard 1.6.0 is not found"
    );
}

#[test]
fn bundled_schemas_are_found() {
    assert_bundled();
    for (version, tag) in [
        ("1.0.0", "tag:stsci.edu:asdf/core/ndarray-1.0.0"),
        ("1.5.0", "tag:stsci.edu:asdf/core/asdf-1.1.0"),
        ("1.6.0", "tag:stsci.edu:asdf/core/software-1.0.0"),
    ] {
        assert!(
            asdf_core::schema::bundled::schema_for_tag(version, tag).is_some(),
            "{tag} under {version}"
        );
    }
}

#[test]
fn reference_files_validate_under_their_standard() {
    // `None` only with ASDF_TEST_DATA_SKIP_MISSING set (the locator prints the skip).
    let Some(root) = asdf_test_data::require_dir(asdf_test_data::REFERENCE_FILES) else {
        return;
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut versions: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("reference dir readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    versions.sort();
    for vdir in versions {
        let version = vdir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for f in files_in(&vdir, "asdf") {
            checked += 1;
            match AsdfFile::options().validate(true).open(&f) {
                Ok(file) => {
                    assert_eq!(file.standard_version().as_str(), version, "{}", f.display());
                }
                Err(e) => failures.push(format!("{}: {e}", f.display())),
            }
        }
        for f in files_in(&vdir, "yaml") {
            checked += 1;
            let text = std::fs::read(&f).expect("readable");
            let doc = match parse(&text, &YamlLimits::default()) {
                Ok(d) => d,
                Err(e) => {
                    failures.push(format!("{}: {e}", f.display()));
                    continue;
                }
            };
            if let Err(e) = validate_tree(&doc.root, &version) {
                failures.push(format!("{}:\n{e}", f.display()));
            }
        }
    }
    assert_eq!(
        checked,
        asdf_test_data::REFERENCE_FILE_COUNT,
        "reference .asdf and .yaml files validated"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn tree(yaml: &str) -> Node {
    let text =
        format!("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{yaml}\n...\n");
    parse(text.as_bytes(), &YamlLimits::default())
        .expect("test yaml parses")
        .root
}

fn errors(yaml: &str) -> Vec<String> {
    match validate_tree(&tree(yaml), "1.6.0") {
        Ok(()) => Vec::new(),
        Err(e) => e.lines(),
    }
}

const LIB: &str = "asdf_library: !core/software-1.0.0 {name: asdf, version: 6.0.0}\n";

#[test]
fn valid_crafted_trees_pass() {
    assert_bundled();
    assert_eq!(errors(LIB), Vec::<String>::new());
    let ok = format!(
        "{LIB}data: !core/ndarray-1.1.0 {{source: 0, datatype: float64, byteorder: little, shape: [3]}}\n\
         inline: !core/ndarray-1.1.0 [[1, 2], [3, 4]]\n\
         c: !core/complex-1.0.0 1+2j\n\
         unknown: !<tag:example.org:nothing-1.0.0> {{whatever: 1}}"
    );
    assert_eq!(errors(&ok), Vec::<String>::new());
}

/// Each of these is rejected by python asdf 6.0.0 too (see the module docs).
#[test]
fn invalid_crafted_trees_give_the_expected_lines() {
    assert_bundled();
    // byteorder outside the enum
    assert_eq!(
        errors(&format!(
            "{LIB}data: !core/ndarray-1.1.0 {{source: 0, datatype: float64, byteorder: middle, shape: [3]}}"
        )),
        vec!["/data/byteorder: enum: expected one of [\"big\",\"little\"], found string \"middle\"".to_string()]
    );
    // unknown datatype name
    let e = errors(&format!(
        "{LIB}data: !core/ndarray-1.1.0 {{source: 0, datatype: float65, byteorder: little, shape: [3]}}"
    ));
    assert!(
        !e.is_empty() && e.iter().all(|l| l.starts_with("/data")),
        "{e:?}"
    );
    // negative shape entry
    let e = errors(&format!(
        "{LIB}data: !core/ndarray-1.1.0 {{source: 0, datatype: int8, byteorder: little, shape: [-3]}}"
    ));
    assert!(e.iter().any(|l| l.starts_with("/data/shape/0")), "{e:?}");
    // software without its required name
    assert_eq!(
        errors("asdf_library: !core/software-1.0.0 {version: 6.0.0}"),
        vec!["/asdf_library: required: expected property name, found it missing".to_string()]
    );
    // source without the datatype it depends on
    let e = errors(&format!(
        "{LIB}data: !core/ndarray-1.1.0 {{source: 0, byteorder: little, shape: [3]}}"
    ));
    assert!(
        e.iter()
            .any(|l| l.starts_with("/data: dependencies:") || l.contains("datatype")),
        "{e:?}"
    );
    // several problems in one tree are all listed
    let e = errors(
        "asdf_library: !core/software-1.0.0 {version: 6.0.0}\n\
         a: !core/ndarray-1.1.0 {source: 0, datatype: float64, byteorder: middle, shape: [3]}\n\
         b: [!core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: little, shape: [x]}]",
    );
    assert!(e.iter().any(|l| l.starts_with("/asdf_library:")), "{e:?}");
    assert!(e.iter().any(|l| l.starts_with("/a/byteorder:")), "{e:?}");
    assert!(e.iter().any(|l| l.starts_with("/b/0/shape/0:")), "{e:?}");
}

#[test]
fn open_with_validation_reports_every_problem() {
    assert_bundled();
    let bytes = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
--- !core/asdf-1.1.0\nasdf_library: !core/software-1.0.0 {version: 1}\n\
a: !core/ndarray-1.1.0 {data: [1, 2], byteorder: middle}\n...\n"
        .to_vec();
    // without validation the file opens
    let file = AsdfFile::from_bytes(bytes.clone()).expect("opens");
    let problems = file.validate().expect_err("invalid tree").lines();
    assert!(problems.len() >= 3, "{problems:?}");
    let err = AsdfFile::options()
        .validate(true)
        .open_bytes(bytes, ".")
        .expect_err("validation on open fails");
    let text = err.to_string();
    for p in &problems {
        assert!(text.contains(p.as_str()), "{text} lacks {p}");
    }
}

/// Data-driven cases: `tests/schema/*.yaml` of the repository, each
/// `{schema: URI or inline schema, standard: "1.6.0", valid: [trees], invalid: [trees]}`.
/// A tree is valid when it satisfies the schema and every tagged node in it satisfies its
/// tag's schema under `standard` (as `tests/schema/check_with_python.py` checks with python
/// asdf).
#[test]
fn data_driven_schema_cases() {
    assert_bundled();
    let dir = common::repo_root().join("tests").join("schema");
    let files = files_in(&dir, "yaml");
    assert_eq!(files.len(), 58, "case files in {}", dir.display());
    let mut failures = Vec::new();
    let mut cases = 0;
    for f in &files {
        let text = std::fs::read(f).expect("readable");
        let doc = match parse(&text, &YamlLimits::default()) {
            Ok(d) => d,
            Err(e) => {
                failures.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        let root = &doc.root;
        let standard = root
            .get("standard")
            .and_then(Node::as_str)
            .unwrap_or(DEFAULT_STANDARD);
        let uri = match root.get("schema") {
            Some(s) if s.as_str().is_some() => s.as_str().unwrap_or_default().to_string(),
            Some(s) => {
                let uri = format!("http://example.org/data-driven/{}", f.display());
                let yaml = emit(s, &EmitOptions::default()).expect("schema emits");
                if let Err(e) = register_schema(&uri, &yaml) {
                    failures.push(format!("{}: {e}", f.display()));
                    continue;
                }
                uri
            }
            None => {
                failures.push(format!("{}: no schema key", f.display()));
                continue;
            }
        };
        let check = |case: &Node| -> Result<(), String> {
            let mut lines = Vec::new();
            if let Err(e) = validate_against(&uri, case) {
                lines.extend(e.lines());
            }
            if let Err(e) = validate_tagged(case, standard) {
                lines.extend(e.lines());
            }
            if lines.is_empty() {
                Ok(())
            } else {
                Err(lines.join("\n    "))
            }
        };
        let list = |key: &str| root.get(key).and_then(Node::as_seq).unwrap_or(&[]).to_vec();
        for (i, case) in list("valid").iter().enumerate() {
            cases += 1;
            if let Err(e) = check(case) {
                failures.push(format!("{} valid[{i}]:\n    {e}", f.display()));
            }
        }
        for (i, case) in list("invalid").iter().enumerate() {
            cases += 1;
            if check(case).is_ok() {
                failures.push(format!("{} invalid[{i}] passes: {case:?}", f.display()));
            }
        }
    }
    // The entries of every `valid:` and `invalid:` list of the case files.
    assert_eq!(cases, 691, "schema cases checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn writing_validates_the_final_tree_by_default() {
    use asdf_core::write::{WriteError, WriteOptions, Writer};
    assert_bundled();
    // python asdf 6.0.0 refuses to write this too ('name' is a required property).
    let root = Node::map([(
        "tool",
        Node::tagged(
            "tag:stsci.edu:asdf/core/software-1.0.0",
            asdf_core::Value::Map(vec![(Node::str("version"), Node::str("1.0"))]),
        ),
    )]);
    let dir = std::env::temp_dir().join(format!("asdf-validate-write-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("out.asdf");
    let writer = Writer::new(WriteOptions::default());
    match writer.write_to_path(&root, &path) {
        Err(WriteError::Invalid(errors)) => assert_eq!(
            errors.lines(),
            vec!["/tool: required: expected property name, found it missing".to_string()]
        ),
        other => panic!("expected a validation failure, got {other:?}"),
    }
    assert!(!path.exists(), "nothing is written when validation fails");
    // Arrays and the library's own metadata validate.
    let mut writer = Writer::new(WriteOptions::default());
    let arr = writer.add_array(ndarray::arr1(&[1.0f64, 2.0]).into_dyn());
    let good = Node::map([("data", arr.clone())]);
    assert!(writer.write_to_vec(&good).is_ok());
    // The ndarray nodes the writer builds itself are not validated again; everything else in
    // the same tree still is.
    let tool = root.get("tool").expect("tool").clone();
    let mixed = Node::map([("data", arr), ("tool", tool)]);
    match writer.write_to_vec(&mixed) {
        Err(WriteError::Invalid(errors)) => assert_eq!(
            errors.lines(),
            vec!["/tool: required: expected property name, found it missing".to_string()]
        ),
        other => panic!("expected a validation failure, got {other:?}"),
    }
    // A hand-built ndarray node is not one of the writer's own: it is checked (by the array
    // layer, which reads it to write its data).
    let hand = Node::map([(
        "data",
        Node::tagged(
            "tag:stsci.edu:asdf/core/ndarray-1.1.0",
            asdf_core::Value::Map(vec![
                (Node::str("data"), Node::seq([Node::int(1), Node::int(2)])),
                (Node::str("datatype"), Node::str("int64")),
                (Node::str("shape"), Node::seq([Node::int(2)])),
                (Node::str("strides"), Node::str("none")),
            ]),
        ),
    )]);
    let r = Writer::new(WriteOptions::default()).write_to_vec(&hand);
    assert!(
        matches!(&r, Err(WriteError::Source { path, .. }) if path == "/data"),
        "{r:?}"
    );
    // Opting out writes the invalid tree.
    let lax = Writer::new(WriteOptions::default().validate(false));
    assert!(lax.write_to_vec(&root).is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A schema file with a top-level `tag` is bound to that tag when registered: a node with
/// the tag is validated against it, with no `register_tag` call.
#[test]
fn a_registered_schema_file_binds_its_own_tag() {
    let dir = std::env::temp_dir().join(format!("asdf-schema-bind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bound-1.0.0.yaml");
    std::fs::write(
        &file,
        "%YAML 1.1\n---\n$schema: http://stsci.edu/schemas/yaml-schema/draft-01\n\
         id: asdf://example.org/schemas/bound-1.0.0\n\
         tag: asdf://example.org/tags/bound-1.0.0\n\
         type: object\nproperties:\n  n: {type: integer, minimum: 0}\nrequired: [n]\n...\n",
    )
    .unwrap();
    let t = |n: &str| {
        tree(&format!(
            "{LIB}x: !<asdf://example.org/tags/bound-1.0.0>\n  n: {n}"
        ))
    };
    let uri = asdf_core::schema::register_schema_file(&file).unwrap();
    assert_eq!(uri, "asdf://example.org/schemas/bound-1.0.0");
    assert!(validate_tree(&t("3"), "1.6.0").is_ok());
    let e = validate_tree(&t("-1"), "1.6.0").unwrap_err().to_string();
    assert!(e.contains("/x/n") && e.contains("minimum"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every `.asdf` file of the test data that python asdf 6.0.0 reads gets python's verdict
/// when opened with validation (schema defaults filled first for standards before 1.6.0):
/// `tests/oracle/validation-verdicts.json`, written by `tests/oracle/validation_verdicts.py`.
#[test]
fn test_data_validates_as_python_validates_it() {
    let path = common::repo_root().join("tests/oracle/validation-verdicts.json");
    let text = std::fs::read_to_string(&path).expect("validation-verdicts.json");
    let verdicts = common::parse_json(&text).expect("json");
    let verdicts = verdicts.as_object().expect("an object");
    assert!(verdicts.len() >= 250, "{} verdicts", verdicts.len());
    let (mut checked, mut failures) = (0, Vec::new());
    for (rel, expected) in verdicts {
        let expected = expected.as_str().expect("a string");
        if expected == "unreadable" {
            continue;
        }
        let Some(file) = asdf_test_data::require(rel) else {
            continue;
        };
        let got = match AsdfFile::options().validate(true).open(&file) {
            Ok(_) => "valid".to_string(),
            Err(e) if matches!(e.without_file(), asdf_core::Error::Validation(_)) => {
                "invalid".to_string()
            }
            Err(e) => format!("unreadable ({e})"),
        };
        checked += 1;
        if got != expected {
            failures.push(format!("{rel}: python {expected}, asdf-rs {got}"));
        }
    }
    assert!(checked >= 240, "only {checked} files checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
