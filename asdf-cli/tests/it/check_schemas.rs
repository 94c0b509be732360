//! `asdftool check-schemas DIR` end to end: the bundled schemas and the examples' schema
//! pass; the corpus of `tests/schema-check` gets python asdf's verdicts
//! (`tests/schema-check/expected.json`), reported one line per problem.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn check_schemas(dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .arg("check-schemas")
        .arg(dir)
        .output()
        .expect("run asdftool")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_bundled_schemas_pass() {
    let dir = repo("asdf-core/schemas");
    let out = check_schemas(&dir);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let line = text(&out.stdout);
    let prefix = format!("{}: ok (56 schema files, ", dir.display());
    assert!(line.starts_with(&prefix), "{line}");
    assert!(line.ends_with(" examples)\n"), "{line}");
}

#[test]
fn the_examples_schema_passes() {
    let dir = repo("examples/schemas");
    let out = check_schemas(&dir);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{}: ok (1 schema file, 0 examples)\n", dir.display())
    );
}

#[test]
fn the_corpus_gets_python_asdf_verdicts_one_line_per_problem() {
    let dir = repo("tests/schema-check/corpus");
    let out = check_schemas(&dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    let mut lines = err.lines();
    let head = lines.next().unwrap();
    assert!(
        head.starts_with(&format!("asdftool: {}: ", dir.display()))
            && head.contains(" problems found (15 schema files, 24 examples)"),
        "{head}"
    );
    // (file, None) for a schema problem, (file, Some(i)) for a problem of example i
    let mut failed: BTreeSet<(String, Option<usize>)> = BTreeSet::new();
    let root = format!("{}/", dir.display());
    for line in lines {
        let rest = line
            .strip_prefix(&root)
            .unwrap_or_else(|| panic!("line does not name a corpus file: {line}"));
        let (file, rest) = rest.split_once(": ").unwrap();
        let example = rest.strip_prefix("example ").map(|r| {
            r.split([' ', ':'])
                .next()
                .unwrap()
                .parse::<usize>()
                .unwrap()
        });
        if example.is_none() {
            assert!(rest.starts_with('/'), "no tree path: {line}");
        } else {
            assert!(rest.contains(": /"), "no tree path: {line}");
        }
        failed.insert((file.to_string(), example));
    }
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo("tests/schema-check/expected.json")).unwrap(),
    )
    .unwrap();
    let mut want: BTreeSet<(String, Option<usize>)> = BTreeSet::new();
    for (file, v) in expected["verdicts"].as_object().unwrap() {
        if v["schema"] == "invalid" {
            want.insert((file.clone(), None));
        }
        for (i, e) in v["examples"].as_array().into_iter().flatten().enumerate() {
            if e == "invalid" {
                want.insert((file.clone(), Some(i)));
            }
        }
    }
    assert_eq!(failed, want);
}

#[test]
fn a_missing_folder_is_an_error() {
    let dir = repo("tests/schema-check/no-such-folder");
    let out = check_schemas(&dir);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "asdftool: cannot read schema file {}",
            dir.display()
        )),
        "{err}"
    );
}
