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

fn canonical(p: &Path) -> String {
    asdf_core::unstable::canonical::to_json(&AsdfFile::open(p).unwrap()).unwrap()
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
    let oracle = asdf_test_data::write_out_dir();
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
        // and back: the same array and metadata in a frame python-blosc2 reads
        let back = dir.join(format!("{stem}.back.{ext}"));
        let out = convert(&output, &back, &[]);
        assert!(
            out.status.success(),
            "{stem} back: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let sparse = input.is_dir();
        let orig = std::fs::read(if sparse {
            input.join("chunks.b2frame")
        } else {
            input.clone()
        })
        .unwrap();
        let orig = if sparse {
            asdf_blosc2::Frame::parse_sparse(&orig, &input, u64::MAX).unwrap()
        } else {
            asdf_blosc2::Frame::parse(&orig).unwrap()
        };
        let again = std::fs::read(&back).unwrap();
        let again = asdf_blosc2::Frame::parse(&again).unwrap();
        match (orig.b2nd(), again.b2nd()) {
            (Some(o), Some(g)) => {
                let (o, g) = (o.unwrap(), g.unwrap());
                assert_eq!(o.shape, g.shape, "{stem}");
                let dt = asdf_core::array::DType::from_numpy_str;
                assert_eq!(
                    dt(&o.dtype),
                    dt(&g.dtype),
                    "{stem}: {} vs {}",
                    o.dtype,
                    g.dtype
                );
                assert_eq!(again.b2nd_array(&g).unwrap(), want, "{stem}");
            }
            (None, None) => assert_eq!(again.decode_all().unwrap(), want, "{stem}"),
            _ => panic!("{stem}: b2nd metalayer lost or made up"),
        }
        assert_eq!(again.vlmeta().unwrap(), orig.vlmeta().unwrap(), "{stem}");
        for (name, _) in orig.metalayers.iter().filter(|(n, _)| n != "b2nd") {
            assert_eq!(
                again.meta(name).map(Result::unwrap),
                orig.meta(name).map(Result::unwrap),
                "{stem} {name}"
            );
        }
        if let Some(o) = &oracle {
            let frames = o.join("blosc2-frames");
            std::fs::create_dir_all(&frames).unwrap();
            if ext == "b2nd" {
                std::fs::copy(&back, frames.join(format!("cli_{stem}.b2nd"))).unwrap();
                std::fs::write(frames.join(format!("cli_{stem}.bin")), &want).unwrap();
            }
        }
        asdf_test_data::leave_for_oracle(&format!("blosc2_{stem}"), &output, canonical);
        n += 1;
    }
    assert_eq!(n, 71, "fixtures converted");
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

#[test]
fn a_file_with_several_arrays_needs_array() {
    let dir = std::env::temp_dir().join(format!("asdf-cv-b2-many-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/data/observation.asdf");
    let out = convert(&src, &dir.join("x.b2nd"), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("arrays (") && err.contains("choose one with --array"),
        "{err}"
    );
    let f = AsdfFile::open(&src).unwrap();
    let mut first = None;
    for key in ["/data", "/sci", "/image", "/flux"] {
        if f.dyn_array(key).is_ok() {
            first = Some(key);
            break;
        }
    }
    let key = first.expect("an array at a top-level key of the example");
    let out = convert(&src, &dir.join("x.b2nd"), &["--array", key]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(dir.join("x.b2nd")).unwrap();
    let fr = asdf_blosc2::Frame::parse(&bytes).unwrap();
    let nd = fr.b2nd().unwrap().unwrap();
    let a = f.dyn_array(key).unwrap();
    assert_eq!(nd.dtype, a.dtype.to_numpy_str());
    assert_eq!(fr.b2nd_array(&nd).unwrap(), a.data);
    let _ = std::fs::remove_dir_all(&dir);
}
