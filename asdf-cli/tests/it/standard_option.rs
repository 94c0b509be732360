//! `--standard` on `asdftool convert` and `asdftool extract`: the ASDF Standard version of an
//! ASDF output, from every input format that converts to ASDF (ASDF, ASDF in FITS, Blosc2,
//! HDF5); refused when the output is not ASDF (issue 31 item 5). The outputs are opened by
//! our reader, which must report the version, find its ndarray tags and validate the file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use asdf_core::{AsdfFile, StandardVersion};

fn asdftool(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .args(args)
        .output()
        .expect("run asdftool")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("asdf-std-opt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A fixture: the test data's through its locator (`tests/data` or `$ASDF_TEST_DATA`), a
/// crate's own from the repository. `None`: the test data is missing and may be skipped.
fn repo(rel: &str) -> Option<PathBuf> {
    match rel.strip_prefix("tests/data/") {
        Some(name) => asdf_test_data::require(name),
        None => Some(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(rel),
        ),
    }
}

/// The tree text of an ASDF file, up to its end marker.
fn tree_text(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let end = bytes
        .windows(4)
        .position(|w| w == b"\n...")
        .expect("an end marker");
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// `out` was written in `version`: the header says so, every ndarray tag is that version's,
/// and the file validates under it.
fn assert_written_in(out: &Path, version: &str, ndarray: &str, what: &str) {
    let text = tree_text(out);
    assert!(
        text.contains(&format!("#ASDF_STANDARD {version}\n")),
        "{what}: header\n{text}"
    );
    let tags: Vec<&str> = text
        .match_indices("!core/ndarray-")
        .map(|(i, _)| &text[i + "!core/ndarray-".len()..i + "!core/ndarray-".len() + 5])
        .collect();
    assert!(!tags.is_empty(), "{what}: no ndarray\n{text}");
    assert!(
        tags.iter().all(|t| *t == ndarray),
        "{what}: {tags:?}\n{text}"
    );
    let f = AsdfFile::open(out).unwrap();
    assert_eq!(f.standard_version().as_str(), version, "{what}");
    f.validate().unwrap_or_else(|e| panic!("{what}: {e:?}"));
}

#[test]
fn convert_writes_the_standard_asked_from_every_input_format() {
    let dir = scratch("convert");
    let inputs = [
        ("asdf", "tests/data/standard-1.7.0/arrays.asdf"),
        ("fits", "tests/data/asdf-in-fits/image.fits"),
        ("b2nd", "asdf-blosc2/tests/data/frames/always_split.b2nd"),
        ("h5", "asdf-hdf5/tests/data/chunked.h5"),
    ];
    for (kind, rel) in inputs {
        let Some(input) = repo(rel) else {
            continue;
        };
        assert!(input.exists(), "{}", input.display());
        for (version, ndarray) in [("1.5.0", "1.0.0"), ("1.6.0", "1.1.0"), ("1.7.0", "1.2.0")] {
            let out = dir.join(format!("{kind}-{version}.asdf"));
            let o = asdftool(&[
                "convert".as_ref(),
                input.as_os_str(),
                out.as_os_str(),
                "--standard".as_ref(),
                version.as_ref(),
            ]);
            assert!(
                o.status.success(),
                "{kind} {version}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert_written_in(
                &out,
                version,
                ndarray,
                &format!("convert {kind} --standard {version}"),
            );
        }
    }
    // without --standard: the default, or the input's when later
    let Some(v17) = repo("tests/data/standard-1.7.0/arrays.asdf") else {
        return;
    };
    let out = dir.join("default.asdf");
    let o = asdftool(&[
        "convert".as_ref(),
        repo("asdf-hdf5/tests/data/chunked.h5").unwrap().as_os_str(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let default = StandardVersion::default();
    assert_eq!(AsdfFile::open(&out).unwrap().standard_version(), default);
    let out = dir.join("kept.asdf");
    let o = asdftool(&["convert".as_ref(), v17.as_os_str(), out.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_written_in(
        &out,
        "1.7.0",
        "1.2.0",
        "convert of a 1.7.0 file without --standard",
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn extract_writes_the_standard_asked_whole_and_by_region() {
    let dir = scratch("extract");
    let Some(input) = repo("tests/data/standard-1.7.0/arrays.asdf") else {
        return;
    };
    for (version, ndarray) in [("1.6.0", "1.1.0"), ("1.7.0", "1.2.0")] {
        let whole = dir.join(format!("whole-{version}.asdf"));
        let o = asdftool(&[
            "extract".as_ref(),
            input.as_os_str(),
            "/image".as_ref(),
            "-o".as_ref(),
            whole.as_os_str(),
            "--standard".as_ref(),
            version.as_ref(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_written_in(
            &whole,
            version,
            ndarray,
            &format!("extract --standard {version}"),
        );
        let region = dir.join(format!("region-{version}.asdf"));
        let o = asdftool(&[
            "extract".as_ref(),
            input.as_os_str(),
            "/image".as_ref(),
            "-o".as_ref(),
            region.as_os_str(),
            "--slice".as_ref(),
            "1:, :2".as_ref(),
            "--standard".as_ref(),
            version.as_ref(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_written_in(
            &region,
            version,
            ndarray,
            &format!("extract --slice --standard {version}"),
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn standard_is_refused_where_the_output_is_not_asdf_or_the_version_unknown() {
    let dir = scratch("refused");
    let Some(asdf) = repo("tests/data/standard-1.7.0/arrays.asdf") else {
        return;
    };
    let cases: Vec<(Vec<&std::ffi::OsStr>, PathBuf, &str)> = vec![
        (
            vec!["convert".as_ref(), asdf.as_os_str()],
            dir.join("out.h5"),
            "--standard applies only when the output is ASDF",
        ),
        (
            vec![
                "extract".as_ref(),
                asdf.as_os_str(),
                "/image".as_ref(),
                "-o".as_ref(),
            ],
            dir.join("out.npy"),
            "--standard applies only when the output is ASDF",
        ),
    ];
    for (args, out, want) in cases {
        let mut all = args.clone();
        all.push(out.as_os_str());
        all.push(std::ffi::OsStr::new("--standard"));
        all.push(std::ffi::OsStr::new("1.6.0"));
        let o = asdftool(&all);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{err}");
        assert!(!out.exists(), "{} written", out.display());
    }
    let out = dir.join("never.asdf");
    let o = asdftool(&[
        "convert".as_ref(),
        asdf.as_os_str(),
        out.as_os_str(),
        "--standard".as_ref(),
        "1.9.0".as_ref(),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("1.9.0"));
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).ok();
}
