//! `asdftool` end to end: the binary on the shipped example and on broken input.

use crate::common;
use crate::tool;

use tool::{asdftool, ok, stderr, stdout};

use std::path::PathBuf;
use std::process::Command;

fn example() -> PathBuf {
    common::repo_root().join("examples/data/observation.asdf")
}

#[test]
fn canonical_matches_the_oracle_sidecar() {
    let out = asdftool(&["canonical", example().to_str().unwrap()]);
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let actual = common::parse_json(&stdout(&out)).expect("canonical output is json");
    let sidecar = common::repo_root().join("examples/data/observation.expect.json");
    let expected =
        common::parse_json(&std::fs::read_to_string(sidecar).unwrap()).expect("sidecar json");
    let diffs = common::compare(&expected, &actual, &[]);
    assert!(diffs.is_empty(), "differences:\n{}", diffs.join("\n"));
}

#[test]
fn info_summarises_arrays_and_blocks() {
    let out = asdftool(&["info", example().to_str().unwrap(), "--blocks"]);
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    // Facts fixed by examples/data/make_example.py.
    for expected in [
        "sci !core/ndarray-1.1.0 float32 (64, 64), internal block 0, compression zlib",
        "err !core/ndarray-1.1.0 float32 (64, 64), internal block 1, compression lz4",
        "dq !core/ndarray-1.1.0 uint16 (64, 64), internal block 2, compression none",
        "wavelengths_um !core/ndarray-1.1.0 float64 (11), inline",
        "filter: \"F200W\"",
        "blocks: 4",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_start().starts_with('[') && l.contains("offset="))
            .count(),
        4
    );
}

#[test]
fn info_reads_no_block_data() {
    // Corrupt every byte after the tree: block data is garbage, headers too. `info` without
    // --blocks must still print the tree, while `canonical` must fail cleanly.
    let bytes = std::fs::read(example()).unwrap();
    let end = bytes.windows(5).position(|w| w == b"\n...\n").unwrap() + 5;
    let hdr = end + 6 + 48; // first block header: keep it, garble its data
    let mut broken = bytes.clone();
    for b in &mut broken[hdr..hdr + 1000] {
        *b ^= 0x5a;
    }
    let dir = std::env::temp_dir().join(format!("asdftool-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("broken.asdf");
    std::fs::write(&path, &broken).unwrap();
    let info = asdftool(&["info", path.to_str().unwrap()]);
    assert!(
        info.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&info.stderr)
    );
    assert!(stdout(&info).contains("sci !core/ndarray-1.1.0 float32 (64, 64)"));
    let canon = asdftool(&["canonical", path.to_str().unwrap()]);
    assert!(!canon.status.success());
    let err = String::from_utf8_lossy(&canon.stderr);
    assert!(err.contains("block 0"), "error names the block: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_a_clean_error() {
    let missing = asdftool(&["info", "/nonexistent/file.asdf"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/file.asdf"));

    let dir = std::env::temp_dir().join(format!("asdftool-garbage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("garbage.asdf");
    std::fs::write(&path, b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: [1, 2\n...\n").unwrap();
    for cmd in ["info", "canonical"] {
        let out = asdftool(&[cmd, path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("asdftool: "), "{cmd}: {err}");
        assert!(
            err.contains("line"),
            "{cmd}: error names the position: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("asdftool-cli-{name}"))
}

/// The canonical content of a file, as parsed JSON.
fn canonical_of(path: &std::path::Path) -> serde_json::Value {
    let out = asdftool(&["canonical", path.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    common::parse_json(&stdout(&out)).unwrap()
}

const WRITER_KEYS: [&str; 2] = ["/tree/value/asdf_library", "/tree/value/history"];

fn assert_same_content(a: &std::path::Path, b: &std::path::Path) {
    let diffs = common::compare(&canonical_of(a), &canonical_of(b), &WRITER_KEYS);
    assert!(
        diffs.is_empty(),
        "{} vs {}:\n{}",
        a.display(),
        b.display(),
        diffs.join("\n")
    );
}

#[test]
fn defragment_recompresses_and_keeps_content() {
    let dir = scratch("defrag");
    let input = example();
    let before = std::fs::read(&input).unwrap();
    let out = dir.join("zstd.asdf");
    let run = asdftool(&[
        "defragment",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "-c",
        "zstd",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        std::fs::read(&input).unwrap(),
        before,
        "the input is never modified"
    );
    assert_same_content(&input, &out);
    let info = ok(&asdftool(&["info", out.to_str().unwrap()]));
    // every array internal (the inline one too) and zstd-compressed
    assert_eq!(info.matches("compression zstd").count(), 5, "{info}");

    let plain = dir.join("plain.asdf");
    let run = asdftool(&[
        "defragment",
        input.to_str().unwrap(),
        "-o",
        plain.to_str().unwrap(),
        "-c",
        "none",
    ]);
    assert!(run.status.success());
    // info succeeds, and no array is compressed (an empty output would pass a bare check)
    let info = ok(&asdftool(&["info", plain.to_str().unwrap()]));
    assert_eq!(info.matches("compression none").count(), 5, "{info}");
    assert!(!info.contains("compression zlib"), "{info}");
    assert_same_content(&input, &plain);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn explode_then_implode_round_trips() {
    let dir = scratch("explode");
    let input = example();
    let exploded = dir.join("obs.asdf");
    let run = asdftool(&[
        "explode",
        input.to_str().unwrap(),
        "-o",
        exploded.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // every array (the inline one too) -> its own external file; no blocks in the tree file
    let externals: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("obs0"))
        .collect();
    assert_eq!(externals.len(), 5, "{externals:?}");
    assert!(ok(&asdftool(&["info", exploded.to_str().unwrap(), "--blocks"])).contains("blocks: 0"));
    assert_same_content(&input, &exploded);

    let imploded = dir.join("back.asdf");
    let run = asdftool(&[
        "implode",
        exploded.to_str().unwrap(),
        "-o",
        imploded.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(ok(&asdftool(&["info", imploded.to_str().unwrap(), "--blocks"])).contains("blocks: 5"));
    assert_same_content(&input, &imploded);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn to_yaml_inlines_every_array() {
    let dir = scratch("toyaml");
    let out = dir.join("obs.yaml");
    let run = asdftool(&[
        "to_yaml",
        example().to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read(&out).unwrap();
    assert!(
        !text.windows(4).any(|w| w == b"\xd3BLK"),
        "no binary blocks"
    );
    assert!(ok(&asdftool(&["info", out.to_str().unwrap()]))
        .contains("sci !core/ndarray-1.1.0 float32 (64, 64), inline"));
    assert_same_content(&example(), &out);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn conversions_refuse_bad_requests() {
    let dir = scratch("refuse");
    let copy = dir.join("obs.asdf");
    std::fs::copy(example(), &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let same = asdftool(&[
        "defragment",
        copy.to_str().unwrap(),
        "-o",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(same.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&same.stderr).contains("replace the input"));
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    let out = dir.join("x.asdf");
    let bad = asdftool(&[
        "defragment",
        copy.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "-c",
        "rar",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown compression \"rar\""));
    assert!(!out.exists());
    let missing = asdftool(&[
        "implode",
        "/nonexistent/in.asdf",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- asdftool validate ----

/// The `.asdf` files of the reference suite (`None`: skipped, see asdf-test-data).
fn reference_files() -> Option<Vec<PathBuf>> {
    let files = asdf_test_data::reference_files()?;
    Some(
        files
            .into_iter()
            .filter(|f| f.extension().is_some_and(|e| e == "asdf"))
            .collect(),
    )
}

fn validate_scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("asdftool-validate-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn validate_accepts_every_reference_file() {
    let Some(files) = reference_files() else {
        return;
    };
    assert_eq!(files.len(), 112, "reference .asdf files");
    let mut failures = Vec::new();
    for f in &files {
        let out = asdftool(&["validate", f.to_str().unwrap()]);
        if !out.status.success() || !stdout(&out).contains(": valid (ASDF Standard") {
            failures.push(format!("{}: {}{}", f.display(), stdout(&out), stderr(&out)));
        }
    }
    assert!(files.len() >= 30);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const INVALID_TREE: &str =
    "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
--- !core/asdf-1.1.0\nasdf_library: !core/software-1.0.0 {version: 6.0.0}\n\
data: !core/ndarray-1.1.0 {data: [1, 2, 3], byteorder: middle}\n...\n";

#[test]
fn validate_lists_every_problem_of_an_invalid_file() {
    // python asdf 6.0.0 rejects this tree too ('name' is a required property; see
    // asdf-core/tests/schema_validate_python.py).
    let dir = validate_scratch("invalid");
    let f = dir.join("bad.asdf");
    std::fs::write(&f, INVALID_TREE).unwrap();
    let out = asdftool(&["validate", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("2 problems found"), "{err}");
    assert!(
        err.contains("/asdf_library: required: expected property name, found it missing"),
        "{err}"
    );
    assert!(
        err.contains(
            "/data/byteorder: enum: expected one of [\"big\",\"little\"], found string \"middle\""
        ),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn validate_with_a_schema_file_or_uri() {
    let dir = validate_scratch("schema");
    let schema = dir.join("needs-title.yaml");
    std::fs::write(
        &schema,
        "%YAML 1.1\n---\nid: http://example.org/schemas/needs-title-1.0.0\ntype: object\n\
         properties:\n  title: {type: string}\nrequired: [title]\n...\n",
    )
    .unwrap();
    let without = dir.join("without.asdf");
    std::fs::write(
        &without,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- {x: 1}\n...\n",
    )
    .unwrap();
    let with = dir.join("with.asdf");
    std::fs::write(
        &with,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- {title: hello}\n...\n",
    )
    .unwrap();
    let s = schema.to_str().unwrap();
    let bad = asdftool(&["validate", without.to_str().unwrap(), "--schema", s]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("/: required: expected property title, found it missing"),
        "{}",
        stderr(&bad)
    );
    let good = asdftool(&["validate", with.to_str().unwrap(), "--schema", s]);
    assert!(good.status.success(), "{}", stderr(&good));
    assert!(stdout(&good).contains("schema http://example.org/schemas/needs-title-1.0.0"));
    // A bundled schema by URI.
    let software = dir.join("software.asdf");
    std::fs::write(
        &software,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- {name: tool, version: '1.0'}\n...\n",
    )
    .unwrap();
    let uri = "http://stsci.edu/schemas/asdf/core/software-1.0.0";
    let ok = asdftool(&["validate", software.to_str().unwrap(), "--schema", uri]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let no = asdftool(&["validate", with.to_str().unwrap(), "--schema", uri]);
    assert_eq!(no.status.code(), Some(1));
    assert!(stderr(&no).contains("/: required: expected property name, found it missing"));
    // Unknown URIs and broken schema files are reported, not crashes.
    let unknown = asdftool(&[
        "validate",
        with.to_str().unwrap(),
        "--schema",
        "http://nowhere.example/x",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("unknown schema http://nowhere.example/x"));
    let broken = dir.join("broken.yaml");
    std::fs::write(&broken, "type: [object\n").unwrap();
    let out = asdftool(&[
        "validate",
        with.to_str().unwrap(),
        "--schema",
        broken.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("invalid yaml"), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn validate_checks_checksums_unless_told_not_to() {
    let Some(src) = asdf_test_data::require("reference-files/1.6.0/basic.asdf") else {
        return;
    };
    let dir = validate_scratch("checksum");
    let f = dir.join("corrupt.asdf");
    let mut bytes = std::fs::read(&src).unwrap();
    let file = asdf_core::AsdfFile::open(&src).unwrap();
    let at = file.blocks()[0].data_offset() as usize;
    bytes[at] ^= 0xff;
    std::fs::write(&f, &bytes).unwrap();
    let out = asdftool(&["validate", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("checksum"), "{}", stderr(&out));
    let out = asdftool(&["validate", f.to_str().unwrap(), "--no-checksums"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn validate_never_crashes_on_garbage() {
    let dir = validate_scratch("garbage");
    let cases: [&[u8]; 5] = [
        b"",
        b"not asdf at all",
        b"#ASDF 1.0.0\n#ASDF_STANDARD 9.9.9\n%YAML 1.1\n--- [1, 2\n",
        b"#ASDF 1.0.0\n%YAML 1.1\n--- !core/ndarray-1.1.0 {source: 7, shape: [1]}\n...\n",
        b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
a: &x !core/ndarray-1.1.0 {data: [[1], [2, 3]], datatype: [{datatype: int8}]}\nb: *x\n...\n",
    ];
    for (i, c) in cases.iter().enumerate() {
        let f = dir.join(format!("g{i}.asdf"));
        std::fs::write(&f, c).unwrap();
        let out = asdftool(&["validate", f.to_str().unwrap()]);
        // 0, 1 or 2, never a panic (101) or a signal.
        assert!(
            matches!(out.status.code(), Some(0..=2)),
            "case {i}: {out:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- which other files a read may open ----

#[test]
fn external_files_stay_in_the_input_folder_unless_allowed() {
    // external0000.asdf holds arange(10, f8) in block 0 (written by python asdf; its sidecar
    // gives the hash). inner/main.asdf points at a copy one folder up with `../`.
    let Some(block_file) = asdf_test_data::require("fixtures/external0000.asdf") else {
        return;
    };
    let sidecar = asdf_test_data::path("fixtures/external.expect.json");
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sidecar).unwrap()).unwrap();
    let expected_sha = &sidecar["tree"]["value"]["a"]["$ndarray"]["sha256"];
    assert!(expected_sha.is_string(), "{sidecar}");

    let top = scratch("external");
    let inner = top.join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::copy(&block_file, top.join("outside.asdf")).unwrap();
    std::fs::copy(&block_file, inner.join("near.asdf")).unwrap();
    let tree = |source: &str| {
        format!(
            "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
             --- !core/asdf-1.1.0\n\
             x: !core/ndarray-1.0.0 {{source: {source}, datatype: float64, byteorder: little, shape: [10]}}\n...\n"
        )
    };
    let main = inner.join("main.asdf");
    std::fs::write(&main, tree("../outside.asdf")).unwrap();
    let main = main.to_str().unwrap();

    let out = asdftool(&["canonical", main]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("/x: refused to open \"../outside.asdf\""),
        "{}",
        stderr(&out)
    );
    let out = asdftool(&[
        "defragment",
        main,
        "-o",
        top.join("d.asdf").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("refused to open"), "{}", stderr(&out));

    for extra in [
        vec!["--external", "any"],
        vec!["--allow-dir", top.to_str().unwrap()],
    ] {
        let mut args = vec!["canonical", main];
        args.extend(extra.iter().copied());
        let out = asdftool(&args);
        assert!(out.status.success(), "{extra:?}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v["tree"]["value"]["x"]["$ndarray"]["sha256"], *expected_sha,
            "{extra:?}"
        );
    }

    // `none` refuses even a neighbour that the default admits.
    let near = inner.join("near-ref.asdf");
    std::fs::write(&near, tree("near.asdf")).unwrap();
    let near = near.to_str().unwrap();
    assert!(asdftool(&["canonical", near]).status.success());
    let out = asdftool(&["canonical", "--external", "none", near]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("refused to open \"near.asdf\""),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&top);
}

// ---- a reader while another process replaces the file ----

#[test]
fn a_reader_sees_the_old_or_the_new_file_while_another_process_replaces_it() {
    // Another process keeps replacing the target with one file, then another, through
    // `asdftool defragment` (temporary file, rename); each read sees one of them whole.
    let Some(a) = asdf_test_data::require("fixtures/codec_zlib.asdf") else {
        return;
    };
    let Some(b) = asdf_test_data::require("fixtures/dtypes_little.asdf") else {
        return;
    };
    let dir = scratch("replaced");
    let target = dir.join("t.asdf");
    // What defragment writes (its own library metadata) is what the reader may see.
    let expected: Vec<String> = [&a, &b]
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let out = dir.join(format!("expected{i}.asdf"));
            let o = asdftool(&[
                "defragment",
                p.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            let f = asdf_core::AsdfFile::open(&out).unwrap();
            asdf_core::unstable::canonical::to_json(&f).unwrap()
        })
        .collect();
    assert_ne!(expected[0], expected[1]);
    std::fs::copy(dir.join("expected0.asdf"), &target).unwrap();
    let exe = env!("CARGO_BIN_EXE_asdftool");
    let script = format!(
        "while :; do {exe:?} defragment {a:?} -o {t:?} >/dev/null && {exe:?} defragment {b:?} -o {t:?} >/dev/null || exit 1; done",
        a = a.display().to_string(),
        b = b.display().to_string(),
        t = target.display().to_string(),
    );
    /// Kills the replacing process however the test ends.
    struct Writer(std::process::Child);
    impl Drop for Writer {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut writer = Writer(Command::new("sh").arg("-c").arg(&script).spawn().unwrap());
    let mut seen = [0usize; 2];
    for i in 0..200 {
        let f = asdf_core::AsdfFile::options()
            .verify_checksums(true)
            .open(&target)
            .unwrap_or_else(|e| panic!("read {i}: {e}"));
        let json =
            asdf_core::unstable::canonical::to_json(&f).unwrap_or_else(|e| panic!("read {i}: {e}"));
        match expected.iter().position(|e| *e == json) {
            Some(k) => seen[k] += 1,
            None => panic!("read {i}: neither file"),
        }
    }
    assert!(
        writer.0.try_wait().unwrap().is_none(),
        "the replacing process stopped early"
    );
    drop(writer);
    assert_eq!(seen[0] + seen[1], 200);
    let _ = std::fs::remove_dir_all(&dir);
}
