//! `asdftool convert x.asdf y.h5 --verify-checksums`: a block whose bytes no longer match its
//! MD5 fails the conversion (exit status 2, one line naming the block, no output file); the
//! same file converts without the flag, and the flag is refused where it does not apply.

use std::path::Path;
use std::process::Command;

use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{AsdfFile, Node, Value};

fn convert(input: &Path, output: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .arg("convert")
        .arg(input)
        .arg(output)
        .args(extra)
        .output()
        .expect("run asdftool")
}

/// A folder removed when the test ends.
struct Scratch(std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn verify_checksums_fails_on_a_corrupted_block_naming_it() {
    let dir = Scratch(std::env::temp_dir().join(format!("asdf-cv-h5-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let src = dir.0.join("in.asdf");
    let mut w = Writer::new(WriteOptions::new());
    let a = w.add_array(ndarray::Array1::from_iter(0..1000i32));
    let b = w.add_array(ndarray::Array1::from_iter(
        (0..2000).map(|i| i as f64 * 0.5),
    ));
    let tree = Node::new(Value::Map(vec![(Node::str("a"), a), (Node::str("b"), b)]));
    w.write_to_path(&tree, &src).unwrap();
    let out = dir.0.join("out.h5");
    // intact: converts with the flag
    let ok = convert(&src, &out, &["--verify-checksums"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    std::fs::remove_file(&out).unwrap();
    // one byte of the second block changed
    let at = AsdfFile::open(&src).unwrap().blocks()[1].data_offset() + 100;
    let mut bytes = std::fs::read(&src).unwrap();
    bytes[at as usize] ^= 0x40;
    std::fs::write(&src, bytes).unwrap();
    let bad = convert(&src, &out, &["--verify-checksums"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("block 1") && lines[0].contains("checksum"),
        "{err}"
    );
    assert!(!out.exists(), "an output file was left");
    // without the flag the corruption goes unnoticed (the flag is what checks)
    let unchecked = convert(&src, &out, &[]);
    assert!(
        unchecked.status.success(),
        "{}",
        String::from_utf8_lossy(&unchecked.stderr)
    );
    // from HDF5 the flag does not apply
    let back = dir.0.join("back.asdf");
    let refused = convert(&out, &back, &["--verify-checksums"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--verify-checksums applies only"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!back.exists());
}
