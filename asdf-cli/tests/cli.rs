//! `asdftool` end to end: the binary on the shipped example and on broken input.

#[path = "../../asdf-core/tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

fn asdftool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .args(args)
        .output()
        .expect("run asdftool")
}

fn example() -> PathBuf {
    common::repo_root().join("examples/data/observation.asdf")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
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
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/file.asdf"));

    let dir = std::env::temp_dir().join(format!("asdftool-garbage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("garbage.asdf");
    std::fs::write(&path, b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: [1, 2\n...\n").unwrap();
    for cmd in ["info", "canonical"] {
        let out = asdftool(&[cmd, path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("asdftool: "), "{cmd}: {err}");
        assert!(
            err.contains("line"),
            "{cmd}: error names the position: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
