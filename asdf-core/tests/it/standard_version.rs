//! One type for the ASDF Standard version a file states and the one a writer writes.

use crate::common;

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

/// The tree text of a written file (before its end marker).
fn tree_text(bytes: &[u8]) -> String {
    let end = bytes
        .windows(4)
        .position(|w| w == b"\n...")
        .expect("an end marker");
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// A tree read from a file of one standard, written in another: the `core/integer` nodes
/// (big integers) take the written standard's tag version, as their `words` arrays take its
/// ndarray version; the file validates under its standard and reads back to the same values.
/// `standard-1.7.0/arrays.asdf` is python asdf 6.0.0's (two `core/integer-1.2.0` nodes);
/// `fixtures/typed_scalars.asdf` is a 1.6.0 file with `core/integer-1.1.0` nodes.
#[test]
fn integer_tags_follow_the_standard_written() {
    let cases = [
        (
            "standard-1.7.0/arrays.asdf",
            StandardVersion::V1_6_0,
            "1.1.0",
            "1.2.0",
        ),
        (
            "fixtures/typed_scalars.asdf",
            StandardVersion::V1_7_0,
            "1.2.0",
            "1.1.0",
        ),
        (
            "fixtures/typed_scalars.asdf",
            StandardVersion::V1_5_0,
            "1.0.0",
            "1.1.0",
        ),
    ];
    for (name, standard, want, gone) in cases {
        let Some(path) = asdf_test_data::require(name) else {
            continue;
        };
        let file = AsdfFile::open(&path).unwrap();
        let written = Writer::from_file(&file, WriteOptions::new().standard(standard.clone()))
            .write_to_vec(file.tree())
            .unwrap_or_else(|e| panic!("{name} as {}: {e}", standard.as_str()));
        let text = tree_text(&written);
        let ints = text.matches(&format!("!core/integer-{want}")).count();
        assert!(
            ints >= 1,
            "{name} as {}: no integer-{want}:\n{text}",
            standard.as_str()
        );
        assert!(
            !text.contains(&format!("core/integer-{gone}")),
            "{name} as {}: integer-{gone} kept:\n{text}",
            standard.as_str()
        );
        let back = AsdfFile::from_bytes(written).unwrap();
        assert_eq!(back.standard_version(), standard);
        back.validate()
            .unwrap_or_else(|e| panic!("{name} as {}: {e:?}", standard.as_str()));
        // the same integers: their words and signs read back equal
        for key in ["big", "neg", "big_neg", "big_pos"] {
            let (Some(a), Some(b)) = (file.tree().get(key), back.tree().get(key)) else {
                continue;
            };
            assert_eq!(
                a.get("sign").and_then(Node::as_str),
                b.get("sign").and_then(Node::as_str)
            );
            let words = format!("/{key}/words");
            let wa = file.dyn_array(&words).unwrap();
            let wb = back.dyn_array(&words).unwrap();
            assert_eq!(format!("{wa:?}"), format!("{wb:?}"), "{name} /{key}/words");
        }
    }
}
