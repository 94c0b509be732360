//! `asdftool codegen`: the types of asdf-codegen's test schemas, as the library generates
//! them (its committed output), warnings on standard error, errors with exit status 2.

use std::path::{Path, PathBuf};
use std::process::Command;

fn codegen_tests() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../asdf-codegen/tests")
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("asdftool-codegen-{}-{name}", std::process::id()))
}

#[test]
fn writes_the_types_of_a_schema_folder() {
    let out = scratch("types.rs");
    let run = Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .arg("codegen")
        .arg(codegen_tests().join("schemas"))
        .arg("-o")
        .arg(&out)
        .output()
        .expect("asdftool runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains(": 9 schemas (1 manifest read), 2 warnings"),
        "{stdout}"
    );
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(warnings.iter().all(|w| w.starts_with(
        "warning: asdf://example.org/codegen/schemas/observation-1.1.0#/properties/"
    )));
    let written = std::fs::read_to_string(&out).expect("the output file");
    let _ = std::fs::remove_file(&out);
    let expected = std::fs::read_to_string(codegen_tests().join("generated/example.rs"))
        .expect("asdf-codegen's committed output");
    assert!(
        written == expected,
        "asdftool codegen differs from asdf-codegen's output"
    );
}

#[test]
fn a_missing_input_is_an_error() {
    let out = scratch("never.rs");
    let run = Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .args(["codegen", "no/such/schema.yaml", "-o"])
        .arg(&out)
        .output()
        .expect("asdftool runs");
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("no/such/schema.yaml: cannot read"));
    assert!(!out.exists());
}
