//! Runs the writing examples; with `ASDF_WRITE_OUT=DIR` their files are left there for the
//! python check (`tests/oracle/check_written.py`), which opens each in python asdf 6.0.0
//! with validation, checksums and warnings as errors.

use std::path::PathBuf;

#[allow(dead_code)]
#[path = "../typed_observation.rs"]
mod typed_observation;

#[allow(dead_code)]
#[path = "../keep_unknown.rs"]
mod keep_unknown;

#[allow(dead_code)]
#[path = "../write_observation.rs"]
mod write_observation;

fn out_path(name: &str) -> PathBuf {
    let dir = std::env::var_os("ASDF_WRITE_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("asdf-examples-{}", std::process::id()))
        });
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("example_{name}.asdf"))
}

#[test]
fn typed_observation_writes_reads_and_validates() {
    let out = out_path("typed_observation");
    typed_observation::run(&out).unwrap();
    // the file carries our tag, and an observation breaking the schema is refused
    let f = asdf_core::AsdfFile::open(&out).unwrap();
    assert_eq!(
        f.node("/observation").unwrap().tag(),
        Some(asdf_examples::typed::OBSERVATION_TAG)
    );
    let mut bad: asdf_examples::typed::Observation = f.read_as("/observation").unwrap();
    bad.meta.exposure_time = -1.0;
    bad.meta.instrument = "CAMERA".into();
    let mut w = asdf_core::write::Writer::new(asdf_core::write::WriteOptions::default());
    let e = w.add_value(&bad).unwrap_err().to_string();
    assert!(
        e.contains("/meta/exposure_time") && e.contains("/meta/instrument"),
        "{e}"
    );
}

#[test]
fn keep_unknown_keeps_what_the_struct_does_not_model() {
    keep_unknown::run(&out_path("keep_unknown")).unwrap();
}

#[test]
fn write_observation_writes_and_reads_back() {
    write_observation::run(&out_path("write_observation")).unwrap();
}
