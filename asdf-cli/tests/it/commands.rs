//! `asdftool search`, `extract`, `info --json`, `tags` and `schema` on real files: their
//! output and exit codes.

use crate::common;
use crate::tool;

use tool::{asdftool, ok, stderr};

fn example() -> String {
    common::repo_root()
        .join("examples/data/observation.asdf")
        .display()
        .to_string()
}

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("asdftool-commands-{name}"))
}

// ---- search ----

#[test]
fn search_by_key_type_and_value() {
    let e = example();
    let by_key = ok(&asdftool(&["search", &e, "^(sci|err)$"]));
    assert_eq!(
        by_key,
        "/err !core/ndarray-1.1.0 float32 (64, 64), internal block 1, compression lz4\n\
         /sci !core/ndarray-1.1.0 float32 (64, 64), internal block 0, compression zlib\n"
    );
    let arrays = ok(&asdftool(&["search", &e, "--type", "ndarray"]));
    assert_eq!(arrays.lines().count(), 5, "{arrays}");
    // python's spellings
    let py = ok(&asdftool(&[
        "search",
        &e,
        "--type",
        "numpy.ndarray",
        "--key",
        "^sci$",
    ]));
    assert_eq!(py.lines().count(), 1, "{py}");
    let filter = ok(&asdftool(&["search", &e, "--value", "F2..W"]));
    assert_eq!(filter, "/meta/instrument/filter string: \"F200W\"\n");
    // numbers compare by value across integer and float
    let one = ok(&asdftool(&[
        "search", &e, "--value", "1.0", "--type", "int",
    ]));
    assert_eq!(one, "/meta/instrument/detector integer: 1\n");
    let both = ok(&asdftool(&["search", &e, "^name$", "--value", "^asdf$"]));
    assert_eq!(
        both,
        "/asdf_library/name string: \"asdf\"\n\
         /history/extensions/0/software/name string: \"asdf\"\n"
    );
    let tagged = ok(&asdftool(&["search", &e, "--type", "core/software"]));
    assert_eq!(tagged.lines().count(), 3, "{tagged}");
}

#[test]
fn search_without_a_match_exits_1_and_bad_patterns_exit_2() {
    let e = example();
    let none = asdftool(&["search", &e, "no_such_key"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(none.stdout.is_empty() && none.stderr.is_empty());
    let bad = asdftool(&["search", &e, "--type", "(oops"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).starts_with("asdftool: --type \"(oops\" is not a regular expression"));
    let missing = asdftool(&["search", "no-such-file.asdf", "x"]);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(stderr(&missing).lines().count(), 1);
}

// ---- extract ----

/// The parts of a `.npy` file: descr, shape text, data.
fn parse_npy(bytes: &[u8]) -> (String, String, Vec<u8>) {
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let n = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + n) % 64, 0, "header aligned to 64 bytes");
    let header = std::str::from_utf8(&bytes[10..10 + n]).unwrap();
    let descr = header.split("'descr': ").nth(1).unwrap();
    let descr = descr.split(", 'fortran_order'").next().unwrap().to_string();
    assert!(header.contains("'fortran_order': False"));
    let shape = header.split("'shape': ").nth(1).unwrap();
    let shape = shape[..=shape.find(')').unwrap()].to_string();
    (descr, shape, bytes[10 + n..].to_vec())
}

#[test]
fn extract_an_array_to_npy_and_a_subtree_to_asdf() {
    let dir = scratch("extract");
    let e = example();
    let file = asdf_core::AsdfFile::open(&e).unwrap();
    for (path, descr, shape) in [
        ("/sci", "'<f4'", "(64, 64)"),
        ("wavelengths_um", "'<f8'", "(11,)"),
        (
            "/sources",
            "[('id', '<i4'), ('x', '<f8'), ('y', '<f8'), ('kind', '|S8')]",
            "(3,)",
        ),
    ] {
        let npy = dir.join("a.npy");
        ok(&asdftool(&[
            "extract",
            &e,
            path,
            "-o",
            npy.to_str().unwrap(),
        ]));
        let (d, s, data) = parse_npy(&std::fs::read(&npy).unwrap());
        assert_eq!((d.as_str(), s.as_str()), (descr, shape), "{path}");
        let want = file
            .dyn_array(&format!("/{}", path.trim_start_matches('/')))
            .unwrap();
        assert_eq!(data, want.data, "{path}");
    }
    // a subtree becomes the root of a new file; an array alone sits under its key
    let meta = dir.join("meta.asdf");
    ok(&asdftool(&[
        "extract",
        &e,
        "/meta",
        "-o",
        meta.to_str().unwrap(),
    ]));
    let m = asdf_core::AsdfFile::open(&meta).unwrap();
    assert_eq!(
        m.get("/instrument/filter").and_then(|n| n.as_str()),
        Some("F200W")
    );
    let sci = dir.join("sci.asdf");
    ok(&asdftool(&[
        "extract",
        &e,
        "/sci",
        "-o",
        sci.to_str().unwrap(),
    ]));
    let s = asdf_core::AsdfFile::open(&sci).unwrap();
    assert_eq!(
        s.dyn_array("/sci").unwrap(),
        file.dyn_array("/sci").unwrap()
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn extract_refuses_what_it_cannot_do() {
    let dir = scratch("extract-bad");
    let e = example();
    let npy = dir.join("x.npy");
    let n = npy.to_str().unwrap();
    for (args, msg) in [
        (
            vec!["extract", &e, "/meta", "-o", n],
            "/meta is not an array",
        ),
        (
            vec!["extract", &e, "/nope", "-o", n],
            "no node at \"/nope\"",
        ),
        (
            vec!["extract", &e, "/sci", "-o", "x.txt"],
            "choose an output ending in .npy",
        ),
        (vec!["extract", &e, "/sci", "-o", &e], "replace the input"),
    ] {
        let o = asdftool(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1);
    }
    assert!(!npy.exists());
    let _ = std::fs::remove_dir_all(dir);
}

// ---- info --json ----

#[test]
fn info_json_is_the_outline_as_json() {
    let e = example();
    let text = ok(&asdftool(&["info", "--json", "--blocks", &e]));
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(v["standard_version"], "1.6.0");
    let tree = &v["tree"];
    assert_eq!(tree["kind"], "mapping");
    assert_eq!(tree["tag"], "tag:stsci.edu:asdf/core/asdf-1.1.0");
    let sci = &tree["children"]["sci"];
    assert_eq!(sci["kind"], "ndarray");
    assert_eq!(sci["datatype"], "float32");
    assert_eq!(sci["shape"], serde_json::json!([64, 64]));
    assert_eq!(sci["storage"], "internal");
    assert_eq!(sci["compression"], "zlib");
    assert_eq!(tree["children"]["wavelengths_um"]["storage"], "inline");
    assert_eq!(
        tree["children"]["meta"]["children"]["instrument"]["children"]["filter"]["value"],
        "F200W"
    );
    assert_eq!(v["blocks"].as_array().unwrap().len(), 4);
    // keys stay in the file's order
    let keys: Vec<&str> = text
        .split("\"children\": {")
        .nth(1)
        .unwrap()
        .split("\": {\"kind\"")
        .take(2)
        .collect();
    assert!(keys[0].ends_with("asdf_library"), "{keys:?}");
}

// ---- tags and schema ----

#[test]
fn tags_lists_each_tag_with_its_schema_status() {
    let e = example();
    let text = ok(&asdftool(&["tags", &e]));
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].ends_with(": 4 tags (ASDF Standard 1.6.0)"),
        "{text}"
    );
    assert!(lines.contains(
        &"tag:stsci.edu:asdf/core/ndarray-1.1.0  (5 nodes)  validated: http://stsci.edu/schemas/asdf/core/ndarray-1.1.0"
    ));
    // a tag no bundled schema knows, and one the file's standard does not map
    let dir = scratch("tags");
    let f = dir.join("t.asdf");
    std::fs::write(
        &f,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
         --- !core/asdf-1.1.0\nx: !<tag:example.org/thing-1.0.0> {a: 1}\n\
         y: !core/ndarray-1.0.0 {data: [1, 2]}\n...\n",
    )
    .unwrap();
    let text = ok(&asdftool(&["tags", f.to_str().unwrap()]));
    assert!(
        text.contains("tag:example.org/thing-1.0.0  (1 node)  not validated: tag of an extension"),
        "{text}"
    );
    assert!(
        text.contains("tag:stsci.edu:asdf/core/ndarray-1.0.0  (1 node)  not validated: no schema under standard 1.6.0"),
        "{text}"
    );
    // without a file: the tags of a standard
    let all = ok(&asdftool(&["tags", "--standard", "1.5.0"]));
    assert!(all.contains(
        "tag:stsci.edu:asdf/core/ndarray-1.0.0  http://stsci.edu/schemas/asdf/core/ndarray-1.0.0"
    ));
    let bad = asdftool(&["tags", "--standard", "9.9.9"]);
    assert_eq!(bad.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn schema_prints_the_bundled_schema() {
    let by_tag = ok(&asdftool(&["schema", "core/ndarray-1.0.0"]));
    assert!(by_tag.contains("id: \"http://stsci.edu/schemas/asdf/core/ndarray-1.0.0\""));
    let full = ok(&asdftool(&[
        "schema",
        "tag:stsci.edu:asdf/core/ndarray-1.0.0",
    ]));
    assert_eq!(full, by_tag);
    let by_id = ok(&asdftool(&[
        "schema",
        "http://stsci.edu/schemas/asdf/core/ndarray-1.0.0",
    ]));
    assert_eq!(by_id, by_tag);
    // the newest standard bundled is 1.7.0 (in development), with ndarray-1.2.0
    let newest = ok(&asdftool(&["schema", "core/ndarray"]));
    assert!(newest.contains("id: \"http://stsci.edu/schemas/asdf/core/ndarray-1.2.0\""));
    let stable = ok(&asdftool(&[
        "schema",
        "core/ndarray",
        "--standard",
        "1.6.0",
    ]));
    assert!(stable.contains("id: \"http://stsci.edu/schemas/asdf/core/ndarray-1.1.0\""));
    let old = ok(&asdftool(&[
        "schema",
        "core/ndarray",
        "--standard",
        "1.5.0",
    ]));
    assert!(old.contains("id: \"http://stsci.edu/schemas/asdf/core/ndarray-1.0.0\""));
    let unknown = asdftool(&["schema", "core/nothing-1.0.0"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(
        stderr(&unknown).trim(),
        "asdftool: no bundled schema for tag:stsci.edu:asdf/core/nothing-1.0.0 (`asdftool tags` lists the known tags)"
    );
}
