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

/// `asdftool convert x.h5 y.asdf`: a dataset whose filter asdf-rs does not decode (bzip2, in
/// asdf-hdf5's plugins.h5 fixture) is left out: the file is written with the rest, the
/// dataset listed under `_hdf5/left_out`, one line for it, exit status 1; `--strict` refuses
/// the file (exit status 2, no output); `--strict` elsewhere is a usage error.
#[test]
fn a_dataset_with_no_form_is_left_out_with_exit_status_1_or_refused_with_strict() {
    let dir = Scratch(std::env::temp_dir().join(format!("asdf-cv-h5-lo-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../asdf-hdf5/tests/data/plugins.h5");
    let out = dir.0.join("out.asdf");
    let run = convert(&src, &out, &[]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("left out")).collect();
    assert_eq!(
        lines,
        [format!(
            "{}: /bzip2 left out: HDF5 filter 307 (bzip2) cannot be decoded",
            src.display()
        )],
        "{err}"
    );
    let file = AsdfFile::open(&out).unwrap();
    assert!(file.get("/bzip2").is_none());
    assert_eq!(
        file.get("/_hdf5/left_out/~1bzip2").and_then(Node::as_str),
        Some("HDF5 filter 307 (bzip2) cannot be decoded")
    );
    // the others converted, their values read
    let lz4 = file.get("/lz4").unwrap();
    assert_eq!(file.dyn_array_of(lz4, "/lz4").unwrap().shape, [1000]);
    std::fs::remove_file(&out).unwrap();

    let strict = convert(&src, &out, &["--strict"]);
    let err = String::from_utf8_lossy(&strict.stderr);
    assert_eq!(strict.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/bzip2: HDF5 filter 307 (bzip2) cannot be decoded"),
        "{err}"
    );
    assert!(!out.exists(), "--strict left an output");

    let misuse = convert(&out, &dir.0.join("b.asdf"), &["--strict"]);
    assert_eq!(misuse.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&misuse.stderr)
        .contains("--strict applies only when converting between HDF5 and ASDF"));
}

#[test]
fn the_way_back_lists_what_has_no_hdf5_form_with_exit_status_1_or_refuses_with_strict() {
    // vlen.h5 (asdf-hdf5's generate.py): its ragged datasets go back as HDF5 sequences, its
    // compound holding a sequence has no HDF5 form on the way back
    let dir = Scratch(std::env::temp_dir().join(format!("asdf-cv-h5-back-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../asdf-hdf5/tests/data/vlen.h5");
    let middle = dir.0.join("vlen.asdf");
    let run = convert(&src, &middle, &[]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let back = dir.0.join("back.h5");
    let run = convert(&middle, &back, &[]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("left out")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with(&format!("{}: /records left out: ", middle.display()))
            && lines[0].contains("no HDF5 form"),
        "{err}"
    );
    assert!(back.exists(), "the rest is written");
    std::fs::remove_file(&back).unwrap();

    let strict = convert(&middle, &back, &["--strict"]);
    let err = String::from_utf8_lossy(&strict.stderr);
    assert_eq!(strict.status.code(), Some(2), "{err}");
    assert!(err.contains("/records: "), "{err}");
    assert!(!back.exists(), "--strict left an output");
}
