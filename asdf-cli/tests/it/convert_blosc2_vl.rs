//! `asdftool convert` of Blosc2 frames whose chunks have variable-length blocks (C-Blosc2
//! 3.x `vlblocks`: python-blosc2's `BatchArray`, C-Blosc2's own compatibility frames) and of
//! `.b2nd` arrays whose codec or filter is a C-Blosc2 plugin
//! (asdf-blosc2/tests/data/generate_vlblocks.py wrote the fixtures and python-blosc2's bytes).

use std::path::{Path, PathBuf};
use std::process::Command;

use asdf_core::AsdfFile;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../asdf-blosc2/tests/data")
}

fn convert(input: &Path, output: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .arg("convert")
        .arg(input)
        .arg(output)
        .output()
        .expect("run asdftool")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("asdf-cv-b2vl-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every frame of variable-length blocks converts to an ASDF array holding the bytes
/// python-blosc2 decodes from it: items of the frame's type size when the bytes are whole
/// items, else the bytes (`uint8`).
#[test]
fn vl_block_frames_convert_to_python_blosc2s_bytes() {
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(data().join("vlblocks/expected.json")).unwrap(),
    )
    .unwrap();
    let dir = scratch("frames");
    let mut n = 0;
    for (name, case) in expected["frames"].as_object().unwrap() {
        let input = data().join(case["file"].as_str().unwrap());
        let output = dir.join(format!("{name}.asdf"));
        let out = convert(&input, &output);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want = std::fs::read(data().join(format!("vlblocks/{name}.bin"))).unwrap();
        let f = AsdfFile::options()
            .verify_checksums(true)
            .open(&output)
            .unwrap();
        let a = f.dyn_array("/data").unwrap();
        assert!(a.data == want, "{name}: bytes differ");
        let ts = case["typesize"].as_u64().unwrap() as usize;
        let item = if want.len() % ts == 0 && ts <= 8 {
            ts
        } else {
            1
        };
        assert_eq!(a.dtype.itemsize(), item, "{name}");
        n += 1;
    }
    assert_eq!(n, 22);
}

/// A `.b2nd` array whose codec or filter is a plugin: exit status 2 and one line naming the
/// file, the plugin and its id, no output file.
#[test]
fn plugin_b2nd_arrays_are_refused_naming_the_plugin() {
    let listing: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(data().join("plugins/plugins.json")).unwrap(),
    )
    .unwrap();
    let dir = scratch("plugins");
    for (name, p) in listing.as_object().unwrap() {
        let input = data().join("plugins").join(p["file"].as_str().unwrap());
        let output = dir.join(format!("{name}.asdf"));
        let out = convert(&input, &output);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let line = format!(
            "asdftool: {}: Blosc2 {} {} (plugin id {}) is not supported\n",
            input.display(),
            p["kind"].as_str().unwrap(),
            p["plugin"].as_str().unwrap(),
            p["id"]
        );
        assert_eq!(stderr, line, "{name}");
        assert!(!output.exists(), "{name}");
    }
}

/// The input of C-Blosc2's ZFP plugin tests holds no plugin: its `b2nd` metalayer carries
/// C-Blosc2's default datatype `|u1` over 4-byte items, and the refusal says so.
#[test]
fn a_b2nd_array_of_unknown_datatype_is_refused_saying_why() {
    let input = data().join("c-blosc2/example_day_month_temp.b2nd");
    let output = scratch("u1").join("temp.asdf");
    let out = convert(&input, &output);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        format!(
            "asdftool: {}: datatype \"|u1\" is 1 bytes but the frame's items are 4 (C-Blosc2 \
             records \"|u1\" when it is not told the datatype: the items' type is unknown)\n",
            input.display()
        )
    );
    assert!(!stderr.contains("plugin"));
}
