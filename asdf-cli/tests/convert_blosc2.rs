//! `asdftool convert x.b2nd y.asdf`: every python-blosc2 fixture becomes an ASDF file whose
//! `data` array holds the bytes numpy held, with the frame's metadata kept. With
//! `ASDF_WRITE_OUT=DIR` the files are left there for the python check (python asdf opens
//! them with validation and compares its canonical reading with ours).

use std::path::{Path, PathBuf};
use std::process::Command;

use asdf_core::AsdfFile;

fn frames() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../asdf-blosc2/tests/data/frames")
}

fn convert(input: &Path, output: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .arg("convert")
        .arg(input)
        .arg(output)
        .args(extra)
        .output()
        .expect("run asdftool")
}

#[test]
fn every_blosc2_fixture_converts_to_asdf_with_numpys_bytes() {
    let dir = std::env::temp_dir().join(format!("asdf-cv-b2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let oracle = std::env::var_os("ASDF_WRITE_OUT").map(PathBuf::from);
    let mut n = 0;
    for entry in std::fs::read_dir(frames()).unwrap() {
        let input = entry.unwrap().path();
        let Some(ext) = input.extension().and_then(|e| e.to_str()) else {
            continue;
        };
        if ext != "b2nd" && ext != "b2frame" {
            continue;
        }
        let stem = input.file_stem().unwrap().to_str().unwrap().to_string();
        let output = dir.join(format!("{stem}.asdf"));
        let out = convert(&input, &output, &["-c", "zlib"]);
        assert!(
            out.status.success(),
            "{stem}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want = std::fs::read(input.with_extension("bin")).unwrap();
        let f = AsdfFile::options()
            .verify_checksums(true)
            .open(&output)
            .unwrap();
        let a = f.dyn_array("/data").unwrap();
        assert_eq!(a.data, want, "{stem}");
        if ext == "b2nd" {
            assert_eq!(a.dtype.itemsize() * a.element_count(), want.len(), "{stem}");
        }
        if stem == "with_meta" {
            assert_eq!(
                f.get("/blosc2_vlmeta/author").and_then(|n| n.as_str()),
                Some("asdf-rs tests")
            );
            assert_eq!(
                f.get("/blosc2_meta/units").and_then(|n| n.as_str()),
                Some("m/s")
            );
        }
        if let Some(o) = &oracle {
            std::fs::create_dir_all(o).unwrap();
            let to = o.join(format!("blosc2_{stem}.asdf"));
            std::fs::copy(&output, &to).unwrap();
            let json = asdf_core::canonical::to_json(&AsdfFile::open(&to).unwrap()).unwrap();
            std::fs::write(o.join(format!("blosc2_{stem}.rust.json")), json).unwrap();
        }
        n += 1;
    }
    assert_eq!(n, 69, "fixtures converted");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_broken_frame_is_one_line_naming_the_file() {
    let dir = std::env::temp_dir().join(format!("asdf-cv-b2-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut bytes = std::fs::read(frames().join("zstd_shuffle.b2nd")).unwrap();
    bytes.truncate(bytes.len() / 2);
    let input = dir.join("cut.b2nd");
    std::fs::write(&input, &bytes).unwrap();
    let out = convert(&input, &dir.join("cut.asdf"), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("asdftool: ") && err.contains("cut.b2nd: bad frame length at byte 16"),
        "{err}"
    );
    assert!(!dir.join("cut.asdf").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
