//! `asdftool` on ASDF in FITS (JWST products, `tests/data/asdf-in-fits/`): `info` lists the
//! HDUs, `validate` and `canonical` read the tree, `convert x.fits y.asdf` writes a plain ASDF
//! file whose arrays are the FITS arrays (with `ASDF_WRITE_OUT=DIR` the files are left there for
//! the python check: python asdf opens them with validation and compares its canonical reading
//! with ours), and converting to FITS is refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use asdf_core::AsdfFile;

fn fixtures() -> PathBuf {
    asdf_test_data::require_dir("asdf-in-fits")
        .unwrap_or_else(|| panic!("tests/data/asdf-in-fits is absent"))
}

fn asdftool(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .args(args)
        .output()
        .expect("run asdftool")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn info_lists_the_hdus_and_names_fits_sources() {
    let input = fixtures().join("image.fits");
    let text = ok(&asdftool(&["info".as_ref(), input.as_os_str()]));
    assert!(text.contains("FITS HDUs: 5"), "{text}");
    for line in [
        "SCI            1  image          (6, 7)  BITPIX -32",
        "DQ             1  image          (6, 7)  BITPIX 32",
        "ASDF           1  binary table",
    ] {
        assert!(text.contains(line), "{line:?} not in\n{text}");
    }
    assert!(text.contains("float32 (6, 7), FITS HDU SCI,1"), "{text}");
    let v = ok(&asdftool(&["validate".as_ref(), input.as_os_str()]));
    assert!(v.contains("valid"), "{v}");
}

#[test]
fn every_fixture_converts_to_plain_asdf_with_the_same_arrays() {
    let dir = std::env::temp_dir().join(format!("asdf-cv-fits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut n = 0;
    for input in asdf_test_data::files_with_suffix(&fixtures(), &[".fits"]) {
        let stem = input.file_stem().unwrap().to_str().unwrap().to_string();
        let output = dir.join(format!("{stem}.asdf"));
        let out = asdftool(&[
            "convert".as_ref(),
            input.as_os_str(),
            output.as_os_str(),
            "-c".as_ref(),
            "zlib".as_ref(),
        ]);
        let msg = ok(&out);
        assert!(msg.contains("wrote"), "{msg}");
        let fits = AsdfFile::open(&input).unwrap();
        let plain = AsdfFile::options()
            .verify_checksums(true)
            .open(&output)
            .unwrap();
        assert!(plain.fits_hdus().is_none());
        let arrays = fits.arrays();
        assert!(!arrays.is_empty(), "{stem}");
        for (path, _) in arrays {
            let a = fits.dyn_array(&path).unwrap();
            let b = plain.dyn_array(&path).unwrap();
            assert_eq!((&a.dtype, &a.shape), (&b.dtype, &b.shape), "{stem}{path}");
            assert_eq!(a.data, b.data, "{stem}{path}");
            let source = plain.get(&format!("{path}/source")).unwrap();
            assert!(
                source.as_str().is_none(),
                "{stem}{path}: a block, not {source:?}"
            );
        }
        asdf_test_data::leave_for_oracle(&format!("fits_{stem}"), &output, |p| {
            asdf_core::unstable::canonical::to_json(&AsdfFile::open(p).unwrap()).unwrap()
        });
        n += 1;
    }
    assert_eq!(n, 6, "fixtures converted");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn writing_fits_is_refused_and_a_bad_fits_file_is_one_line() {
    let dir = std::env::temp_dir().join(format!("asdf-cv-fits-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("plain.asdf");
    std::fs::write(&plain, b"#ASDF 1.0.0\n%YAML 1.1\n---\nx: 1\n...\n").unwrap();
    let out = asdftool(&[
        "convert".as_ref(),
        plain.as_os_str(),
        dir.join("x.fits").as_os_str(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("writing FITS is not supported"), "{err}");
    assert!(!dir.join("x.fits").exists());

    // a product cut inside its SCI data
    let bytes = std::fs::read(fixtures().join("image.fits")).unwrap();
    let cut = dir.join("cut.fits");
    std::fs::write(&cut, &bytes[..2880 * 2 + 10]).unwrap();
    for cmd in ["info", "canonical", "validate"] {
        let out = asdftool(&[cmd.as_ref(), cut.as_os_str()]);
        assert!(!out.status.success(), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("HDU 1 at byte 2880") && err.contains("ends inside its data"),
            "{cmd}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{cmd}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(Path::new(&fixtures()).is_dir());
}
