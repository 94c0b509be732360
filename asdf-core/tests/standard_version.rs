//! One type for the ASDF Standard version a file states and the one a writer writes.

mod common;

use asdf_core::write::{update_with, UpdateMode, WriteError, WriteOptions, Writer};
use asdf_core::{AsdfFile, Node, StandardVersion};

fn file_stating(line: &str) -> Vec<u8> {
    format!(
        "#ASDF 1.0.0\n{line}\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
         --- !core/asdf-1.1.0\nx: 1\n...\n"
    )
    .into_bytes()
}

#[test]
fn a_known_version_compares_equal_to_its_constant() {
    let file = AsdfFile::from_bytes(file_stating("#ASDF_STANDARD 1.3.0")).unwrap();
    let v = file.standard_version();
    assert_eq!(v, StandardVersion::V1_3_0);
    assert!(v.known());
    assert!(v < StandardVersion::V1_6_0);
}

#[test]
fn a_file_stating_an_unknown_version_opens_and_reports_it() {
    for version in ["1.8.0", "2.0.0", "1.10.0"] {
        let bytes = file_stating(&format!("#ASDF_STANDARD {version}"));
        let file = AsdfFile::from_bytes(bytes).unwrap();
        let v = file.standard_version();
        assert_eq!(v.as_str(), version);
        assert_eq!(v.to_string(), version);
        assert!(!v.known());
        assert!(!StandardVersion::ALL.contains(&v));
        assert!(v > StandardVersion::V1_6_0, "{v}");
        assert_eq!(file.node("/x").unwrap().as_i64(), Some(1));
    }
}

#[test]
fn a_line_that_states_no_version_is_ignored() {
    // python asdf skips an `#ASDF_STANDARD` comment it cannot parse; the default applies
    let file = AsdfFile::from_bytes(file_stating("#ASDF_STANDARD draft")).unwrap();
    assert_eq!(file.standard_version(), StandardVersion::default());
    assert_eq!(file.standard_version(), StandardVersion::V1_6_0);
}

#[test]
fn writing_an_unknown_version_is_refused() {
    let later = StandardVersion::parse("1.8.0").unwrap();
    let w = Writer::new(WriteOptions::default().standard(later.clone()));
    let err = w.write_to_vec(&Node::map(vec![("x", Node::str("y"))]));
    match err {
        Err(WriteError::UnknownStandard(v)) => assert_eq!(v, later),
        other => panic!("expected UnknownStandard, got {other:?}"),
    }
}

#[test]
fn rewriting_a_file_of_an_unknown_version_with_its_version_is_refused() {
    let dir = common::Scratch::new("standard-version");
    let path = dir.join("later.asdf");
    let bytes = file_stating("#ASDF_STANDARD 1.8.0");
    std::fs::write(&path, &bytes).unwrap();
    let file = AsdfFile::open(&path).unwrap();
    let opts = WriteOptions::default().standard(file.standard_version());
    let root = file.tree().clone();
    drop(file);
    let err = update_with(&path, &root, opts, UpdateMode::InPlace).unwrap_err();
    assert!(
        matches!(&err, WriteError::UnknownStandard(v) if v.as_str() == "1.8.0"),
        "{err}"
    );
    // nothing was written
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}
