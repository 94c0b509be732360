//! libasdf's test files (`tests/data/libasdf/`, copied from the C implementation): each reads
//! as python asdf 6.0.0 reads it (its `.expect.json`), the two with blank lines after the
//! header as python reads them without those lines (asdf-rs reads them on purpose), and the
//! five that python refuses are refused here too, with a typed error.

use crate::common;

use std::path::Path;

use asdf_core::{AsdfFile, Error};

/// Refused by python asdf and by asdf-rs (`tests/data/libasdf/HAND_WRITTEN.md`).
const REFUSED: [&str; 5] = [
    "255-no-newline-before-tree.asdf",
    "custom-tag-handle.asdf",
    "ndarray-out.asdf",
    "parse-unsupported-directive.asdf",
    "malformatted_yaml.asdf.bad",
];

fn read_all(path: &Path) -> Result<String, Error> {
    let file = AsdfFile::open(path)?;
    asdf_core::unstable::canonical::to_json(&file)
}

#[test]
fn every_libasdf_file_reads_as_python_reads_it_or_is_refused_alike() {
    let dir = common::data_dir(asdf_test_data::LIBASDF);
    let files = common::files_with_suffix(&dir, &[".asdf", ".asdf.bad"]);
    assert_eq!(files.len(), 40, "libasdf's files: {files:?}");
    let (mut same, mut refused, mut failures) = (0, 0, Vec::new());
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if REFUSED.contains(&name.as_str()) {
            match read_all(&file) {
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    refused += 1;
                }
                Ok(_) => failures.push(format!("{name}: read, but python asdf refuses it")),
            }
            continue;
        }
        let sidecar = dir.join(name.replace(".asdf", ".expect.json"));
        let expected = common::parse_json(&std::fs::read_to_string(&sidecar).unwrap()).unwrap();
        match read_all(&file) {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok(text) => {
                let actual = common::parse_json(&text).unwrap();
                let diffs = common::compare(&expected, &actual, &[]);
                if diffs.is_empty() {
                    same += 1;
                } else {
                    failures.push(format!("{name}:\n  {}", diffs.join("\n  ")));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!((same, refused), (35, 5));
}

#[test]
fn a_file_without_a_tree_is_an_empty_core_asdf_mapping() {
    let dir = common::data_dir(asdf_test_data::LIBASDF);
    for (name, blocks) in [
        ("parse-minimal.asdf", 0),
        ("parse-minimal-extra-comment.asdf", 0),
        ("255-no-tree.asdf", 1),
        ("255-2-blocks.asdf", 2),
    ] {
        let f = AsdfFile::open(dir.join(name)).unwrap();
        assert_eq!(
            f.tree().tag(),
            Some("tag:stsci.edu:asdf/core/asdf-1.1.0"),
            "{name}"
        );
        assert_eq!(f.tree().as_map().map(<[_]>::len), Some(0), "{name}");
        assert_eq!(f.blocks().len(), blocks, "{name}");
    }
    // before standard 1.2.0, or with no #ASDF_STANDARD line: core/asdf-1.0.0, as python
    for (text, tag) in [
        (&b"#ASDF 1.0.0\n"[..], "tag:stsci.edu:asdf/core/asdf-1.0.0"),
        (
            b"#ASDF 1.0.0\n#ASDF_STANDARD 1.1.0\n",
            "tag:stsci.edu:asdf/core/asdf-1.0.0",
        ),
        (
            b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n",
            "tag:stsci.edu:asdf/core/asdf-1.1.0",
        ),
    ] {
        let f = AsdfFile::from_bytes(text.to_vec()).unwrap();
        assert_eq!(f.tree().tag(), Some(tag));
    }
    // an empty file without the header is plain (empty) YAML: a null tree
    assert!(AsdfFile::from_bytes(Vec::new())
        .map(|f| f.tree().is_null())
        .unwrap_or(true));
}
