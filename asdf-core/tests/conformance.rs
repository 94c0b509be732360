//! Conformance: the canonical JSON (`asdf-canonical/1`) that asdf-core produces for every corpus
//! file must equal the file's sidecar (`NAME.expect.json`, made by python asdf 6.0.0 through
//! `shared/conformance/dump_expect.py`, or hand-written where noted).
//!
//! Corpora:
//! * the official reference files: `$ASDF_REFERENCE_FILES`, by default
//!   `<workspace>/../shared/asdf-reference-files` (every `*.asdf` and `*.yaml` with a sidecar);
//!   a missing directory fails the test unless `ASDF_ALLOW_MISSING_REFERENCE=1`;
//! * `tests/data/fixtures` (python asdf 6.0.0 output, `tests/data/generate.py`);
//! * `tests/data/layouts` (hand-assembled layouts, `tests/data/make_layouts.py`).
//!
//! Each test collects every failure, prints each with its JSON path, and fails once at the end.
//! `ASDF_CONFORMANCE_ONLY=<substring>` restricts the run to files whose path contains it
//! (the minimum-count checks are then skipped), e.g.
//! `ASDF_CONFORMANCE_ONLY=codec_lz4 cargo test -p asdf-core --test conformance -- --nocapture`.

mod common;

use std::path::{Path, PathBuf};

/// Differences shown per file (the rest are counted).
const SHOWN_PER_FILE: usize = 25;

/// The reference-file directory, or `None` when it is missing.
fn reference_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("ASDF_REFERENCE_FILES") {
        let dir = PathBuf::from(dir);
        return dir.is_dir().then_some(dir);
    }
    let default = common::repo_root()
        .join("..")
        .join("shared")
        .join("asdf-reference-files");
    if default.is_dir() {
        return Some(default);
    }
    // a git worktree may sit deeper than the main checkout: look further up
    common::repo_root()
        .ancestors()
        .map(|a| a.join("shared").join("asdf-reference-files"))
        .find(|p| p.is_dir())
}

/// Checks one file against its sidecar; returns the failure report, if any.
fn check_file(file: &Path, sidecar: &Path) -> Option<String> {
    let expected_text = match std::fs::read_to_string(sidecar) {
        Ok(t) => t,
        Err(e) => return Some(format!("{}: cannot read sidecar: {e}", sidecar.display())),
    };
    let expected = match common::parse_json(&expected_text) {
        Ok(v) => v,
        Err(e) => return Some(format!("{}: sidecar: {e}", sidecar.display())),
    };
    let actual_text = match asdf_core::canonical::document_json(file) {
        Ok(t) => t,
        Err(e) => return Some(format!("{}: error: {e} ({e:?})", file.display())),
    };
    let actual = match common::parse_json(&actual_text) {
        Ok(v) => v,
        Err(e) => return Some(format!("{}: output is not JSON: {e}", file.display())),
    };
    let diffs = common::compare(&expected, &actual, &[]);
    if diffs.is_empty() {
        return None;
    }
    let mut report = format!("{}: {} difference(s)", file.display(), diffs.len());
    for d in diffs.iter().take(SHOWN_PER_FILE) {
        report.push_str("\n    ");
        report.push_str(d);
    }
    if diffs.len() > SHOWN_PER_FILE {
        report.push_str(&format!("\n    ... {} more", diffs.len() - SHOWN_PER_FILE));
    }
    Some(report)
}

/// Runs every `(file, sidecar)` pair of a corpus; panics once at the end if any failed.
fn run_corpus(name: &str, mut files: Vec<PathBuf>, mut min_expected: usize) {
    if let Ok(only) = std::env::var("ASDF_CONFORMANCE_ONLY") {
        files.retain(|f| f.to_string_lossy().contains(only.as_str()));
        min_expected = 0;
    }
    let mut checked = 0usize;
    let mut failures = Vec::new();
    let mut without_sidecar = Vec::new();
    for file in files {
        let Some(sidecar) = common::sidecar_of(&file) else {
            continue;
        };
        if !sidecar.is_file() {
            without_sidecar.push(file);
            continue;
        }
        checked += 1;
        if let Some(report) = check_file(&file, &sidecar) {
            failures.push(report);
        }
    }
    for f in &without_sidecar {
        eprintln!("{name}: no sidecar, not checked: {}", f.display());
    }
    for f in &failures {
        eprintln!("FAIL {f}");
    }
    eprintln!(
        "{name}: {checked} file(s) checked, {} failed",
        failures.len()
    );
    assert!(
        checked >= min_expected,
        "{name}: only {checked} file(s) with a sidecar found, expected at least {min_expected}"
    );
    assert!(
        failures.is_empty(),
        "{name}: {} of {checked} file(s) do not match their sidecar",
        failures.len()
    );
}

#[test]
fn reference_files_conform() {
    let Some(dir) = reference_dir() else {
        if std::env::var("ASDF_ALLOW_MISSING_REFERENCE").as_deref() == Ok("1") {
            eprintln!("reference files not found; skipped (ASDF_ALLOW_MISSING_REFERENCE=1)");
            return;
        }
        panic!(
            "reference files not found: set ASDF_REFERENCE_FILES to shared/asdf-reference-files \
             (or ASDF_ALLOW_MISSING_REFERENCE=1 to skip)"
        );
    };
    let files = common::files_with_suffix(&dir, &[".asdf", ".yaml"]);
    run_corpus("reference files", files, 1);
}

#[test]
fn python_fixtures_conform() {
    let files = common::files_with_suffix(&common::data_dir("fixtures"), &[".asdf"]);
    run_corpus("tests/data/fixtures", files, 50);
}

#[test]
fn layouts_conform() {
    let files = common::files_with_suffix(&common::data_dir("layouts"), &[".asdf"]);
    run_corpus("tests/data/layouts", files, 25);
}

#[test]
fn every_sidecar_parses_and_equals_itself() {
    // guards the comparer against the real corpus: big ints, nested $map, unicode, -0.0
    let mut dirs = vec![common::data_dir("fixtures"), common::data_dir("layouts")];
    dirs.extend(reference_dir());
    let mut n = 0;
    for dir in dirs {
        for side in common::files_with_suffix(&dir, &[".expect.json"]) {
            let text = std::fs::read_to_string(&side)
                .unwrap_or_else(|e| panic!("{}: {e}", side.display()));
            let a = common::parse_json(&text).unwrap_or_else(|e| panic!("{}: {e}", side.display()));
            let b = common::parse_json(&text).unwrap_or_else(|e| panic!("{}: {e}", side.display()));
            assert_eq!(
                common::compare(&a, &b, &[]),
                Vec::<String>::new(),
                "{}",
                side.display()
            );
            assert_eq!(
                a.get("format").and_then(|f| f.as_str()),
                Some("asdf-canonical/1"),
                "{}",
                side.display()
            );
            n += 1;
        }
    }
    assert!(n > 80, "only {n} sidecars");
}
