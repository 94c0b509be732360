//! Inputs the `hdf5` fuzz target found (`fuzz/regressions/hdf5/`), replayed: each is now a
//! typed error (one was a 17 GB allocation and a timeout, one a panic, one an ASDF file our
//! own reader refused, one a conversion growing past 3 GB).

use asdf_hdf5::{to_asdf_bytes, ToAsdfOptions};

#[test]
fn fuzz_regressions_are_errors() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/hdf5");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let data = std::fs::read(&path).unwrap();
        let err = to_asdf_bytes(&data, &ToAsdfOptions::default())
            .expect_err(&name)
            .to_string();
        let expected = match name.as_str() {
            // a contiguous f8 dataset that declares 17 GB of data in a 14 KB file
            "contiguous-data-declared-beyond-the-file" => "does not hold the 17314087008 bytes",
            // a compound whose member offset lies past the compound's size (a panic before)
            "compound-member-beyond-its-size" => "whose members lie beyond its",
            // a complex compound whose `i` became a second `r`: a file our reader refused
            "compound-with-two-members-of-one-name" => "two members named \"r\"",
            // hard links to groups that contain links to them: each link copied the kept
            // entries under its object, copies included (16 KB grew past 3 GB)
            "hard-links-to-groups-that-link-back" => "hard links repeat the kept attributes",
            other => panic!("{other}: add what its error must say"),
        };
        assert!(err.contains(expected), "{name}: {err}");
        n += 1;
    }
    assert!(n >= 1);
}

#[test]
fn a_declared_size_above_the_limit_is_refused_before_reading() {
    let data = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/chunked.h5"),
    )
    .unwrap();
    // chunked.h5 holds a 100 x 60 float32 dataset (24,000 bytes), among others
    let opts = ToAsdfOptions {
        max_dataset_bytes: 10_000,
        ..ToAsdfOptions::default()
    };
    let err = to_asdf_bytes(&data, &opts).unwrap_err().to_string();
    assert!(err.contains("more than the limit of 10000"), "{err}");
    assert!(to_asdf_bytes(&data, &ToAsdfOptions::default()).is_ok());
}
