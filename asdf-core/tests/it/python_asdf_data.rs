//! python asdf's own test files (`tests/data/python-asdf/`, from the asdf 6.0.0 wheel): each
//! reads as python asdf reads it. `frames0.asdf` (ASDF Standard 1.1.0) needs the schema
//! defaults python fills in for files before 1.6.0: its `wcs/icrs_coord-1.1.0` gives `ra` and
//! `dec` no `unit`, and both read as `unit: deg`.

use crate::common;

use asdf_core::AsdfFile;

#[test]
fn python_asdf_test_files_read_as_python_reads_them() {
    let dir = common::data_dir("python-asdf");
    let files = common::files_with_suffix(&dir, &[".asdf"]);
    assert_eq!(files.len(), 11, "{files:?}");
    let mut failures = Vec::new();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let sidecar = file.with_extension("expect.json");
        let expected = common::parse_json(&std::fs::read_to_string(&sidecar).unwrap()).unwrap();
        let text =
            asdf_core::unstable::canonical::to_json(&AsdfFile::open(&file).unwrap()).unwrap();
        let actual = common::parse_json(&text).unwrap();
        let diffs = common::compare(&expected, &actual, &[]);
        if !diffs.is_empty() {
            failures.push(format!("{name}:\n  {}", diffs.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The defaults are what makes `frames0.asdf` agree: without them, exactly the two units
/// python fills in are missing.
#[test]
fn frames0_agrees_because_of_the_filled_units() {
    let file = common::data_dir("python-asdf").join("frames0.asdf");
    let expected =
        common::parse_json(&std::fs::read_to_string(file.with_extension("expect.json")).unwrap())
            .unwrap();
    let raw = AsdfFile::options()
        .fill_defaults(false)
        .open(&file)
        .unwrap();
    let actual =
        common::parse_json(&asdf_core::unstable::canonical::to_json(&raw).unwrap()).unwrap();
    let paths: Vec<String> = common::compare(&expected, &actual, &[])
        .iter()
        .map(|d| d.split(':').next().unwrap_or(d).to_string())
        .collect();
    assert_eq!(
        paths,
        [
            "/tree/value/frames/5/value/reference_frame/galcen_coord/value/dec/unit",
            "/tree/value/frames/5/value/reference_frame/galcen_coord/value/ra/unit",
        ]
    );
    let filled = AsdfFile::open(&file).unwrap();
    let coord = "/frames/5/reference_frame/galcen_coord";
    for axis in ["ra", "dec"] {
        let unit = filled.get(&format!("{coord}/{axis}/unit"));
        assert_eq!(
            unit.and_then(asdf_core::Node::as_str),
            Some("deg"),
            "{axis}"
        );
    }
}

/// A tree read with filled defaults writes them back, as python asdf does (it writes the tree
/// it read): the written `frames0.asdf` holds the two units, and reads as python reads the
/// original, with or without filling.
#[test]
fn filled_defaults_are_written_back() {
    use asdf_core::write::{WriteOptions, Writer};
    let file = common::data_dir("python-asdf").join("frames0.asdf");
    let expected =
        common::parse_json(&std::fs::read_to_string(file.with_extension("expect.json")).unwrap())
            .unwrap();
    let read = AsdfFile::open(&file).unwrap();
    let standard = read.standard_version();
    assert!(standard.known(), "{standard}");
    let bytes = Writer::from_file(&read, WriteOptions::new().standard(standard))
        .write_to_vec(read.tree())
        .unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let coord = &text[text.find("galcen_coord").unwrap()..];
    let coord = &coord[..coord.find("galcen_distance").unwrap()];
    assert_eq!(coord.matches("unit: deg").count(), 2, "{coord}");
    for fill in [true, false] {
        let back = AsdfFile::options()
            .fill_defaults(fill)
            .open_bytes(bytes.clone(), ".")
            .unwrap();
        let actual =
            common::parse_json(&asdf_core::unstable::canonical::to_json(&back).unwrap()).unwrap();
        let ignore = ["/tree/value/asdf_library", "/tree/value/history"];
        assert_eq!(
            common::compare(&expected, &actual, &ignore),
            Vec::<String>::new()
        );
    }
}
