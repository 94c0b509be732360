//! Inputs the `hdf5` fuzz target found (`fuzz/regressions/hdf5/`), replayed: each is now a
//! typed error (one was a 17 GB allocation and a timeout, one a panic, one an ASDF file our
//! own reader refused, one a conversion growing past 3 GB, one a 21 GB allocation), and h5py
//! 3.16.0 (the oracle) refuses each too, as noted beside it; or converts to a file our reader
//! reads, every array of it, with the values h5py reads (or, where h5py cannot read the
//! value, the bytes the file holds) (`CONVERTS`).

use asdf_hdf5::{to_asdf_bytes, Hdf5Error, ToAsdfOptions};

/// The error each input must give, whole: `Read` (the HDF5 reader refused the object, at the
/// path, saying the message) or `Unsupported` (a datatype with no ASDF equivalent, at the
/// path, described).
#[derive(Debug)]
enum Want {
    Read(&'static str, &'static str),
    Unsupported(&'static str, &'static str),
}

const REGRESSIONS: [(&str, Want); 5] = [
    // a contiguous f8 dataset that declares 17 GB of data in a 14 KB file (h5py: "dataspace
    // dim 1 size of 721420292 is greater than maxdim size of 4" opening a dataset of /big)
    (
        "contiguous-data-declared-beyond-the-file",
        Want::Read(
            "/big/f8",
            "its contiguous data (96 bytes at 3512) does not hold the 17314087008 bytes it \
             declares within the file's 14480",
        ),
    ),
    // a compound whose member offset lies past the compound's size, a panic before (h5py:
    // "member type extends outside its parent compound type")
    (
        "compound-member-beyond-its-size",
        Want::Unsupported("/big/c16", "compound whose members lie beyond its 16 bytes"),
    ),
    // a complex compound whose `i` became a second `r`: a file our reader refused (h5py:
    // "duplicated compound field name 'r', for fields 0 and 1")
    (
        "compound-with-two-members-of-one-name",
        Want::Unsupported("/big/c16", "compound with two members named \"r\""),
    ),
    // hard links to groups that contain links to them: each link copied the kept entries
    // under its object, copies included (16 KB grew past 3 GB); the path is the link's, in
    // groups with empty names (h5py: "bad superblock status flags", the file does not open)
    (
        "hard-links-to-groups-that-link-back",
        Want::Read(
            "///////////////////",
            "hard links repeat the kept attributes and properties of their objects more than \
             1048576 times (64 MiB of paths): links to groups that contain links to them",
        ),
    ),
    // an 8 KB file whose variable-length string dataset /vlen_ascii declares 1,330,136,145
    // strings (21 GB of references) in 32 bytes of contiguous data: `asdftool convert` peaked
    // at 20.8 GB and ran 27 s before refusing, and the fuzz target (2 GB limit) reported it as
    // out-of-memory after 16,920 executions, seeded with other libraries' HDF5 test files
    // (issue 31 item 7; main at 9e1d7a8, 2026-11-27). Now refused before the strings are
    // read, with the declared size and the file's (h5py: "dataspace dim 0 size of 1330136145
    // is greater than maxdim size of 2" opening /vlen_ascii)
    (
        "vlen-strings-declared-beyond-the-file",
        Want::Read(
            "/vlen_ascii",
            "its contiguous data (32 bytes at 8274) does not hold the 21282178320 bytes it \
             declares within the file's 8386",
        ),
    ),
];

/// What a converted input holds at the node the finding was about.
#[derive(Debug)]
enum Holds {
    /// A number (a YAML number or a 0-d array).
    Number(f64),
    /// A `uint8` array of this shape and these bytes.
    Bytes(&'static [usize], &'static [u8]),
}

/// Inputs the target found that must convert, to a file our reader reads: the file, the
/// node the finding was about, and what it holds.
const CONVERTS: [(&str, &str, Holds); 2] = [
    // a null dataspace mutated into a scalar one, its storage never allocated: the scalar
    // became a 0-d array over an empty block, a file our own reader refused ("needed_end: 8,
    // block_len: 0"; the `hdf5` target's invariant, 312,779 executions into a campaign on
    // main at 2ada728). h5py reads the fill value, 0.0
    (
        "scalar-dataset-never-written",
        "/empty_float64",
        Holds::Number(0.0),
    ),
    // the fixed-length string attribute `when` of /void4, two strings of 8 bytes declared
    // ASCII (a mutated datatype message: version 15, padding 15, character set 14, which
    // hdf5-reader reads as ASCII and null-padded) holding bytes above 0x7F: written as an
    // inline `[ascii, 8]` array our own reader refused ("'×' is not ascii"; the `hdf5`
    // target's invariant, 1.6 million executions into a campaign on main at 99d286d). Now
    // the bytes form (docs/hdf5.md), the 16 bytes of the attribute's data at offset 1880 of
    // the file. h5py cannot read it ("bad version number for datatype message")
    (
        "ascii-attribute-with-non-ascii-bytes",
        "/_hdf5/attrs/~1void4/when",
        Holds::Bytes(
            &[2, 8],
            &[
                0x00, 0x65, 0x57, 0xd7, 0x35, 0x9a, 0xe5, 0x15, 0, 0, 0, 0, 0, 0, 0, 0,
            ],
        ),
    ),
];

#[test]
fn fuzz_regressions_that_convert_read_back() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/hdf5");
    for (name, path, holds) in &CONVERTS {
        let data = std::fs::read(dir.join(name)).unwrap();
        let bytes = to_asdf_bytes(&data, &ToAsdfOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let file = asdf_core::AsdfFile::from_bytes(bytes).unwrap();
        let node = file
            .get(path)
            .unwrap_or_else(|| panic!("{name}: no {path}"));
        match holds {
            // a 0-d dataset becomes a YAML number (or a 0-d array)
            Holds::Number(value) => {
                let got = match node.as_f64() {
                    Some(v) => v,
                    None => {
                        let a = file
                            .array::<f64>(path)
                            .unwrap_or_else(|e| panic!("{name} {path}: {e}"));
                        assert_eq!(a.len(), 1, "{name} {path}");
                        a.iter().copied().next().unwrap_or(f64::NAN)
                    }
                };
                assert_eq!(got, *value, "{name} {path}");
            }
            Holds::Bytes(shape, bytes) => {
                let a = file
                    .dyn_array(path)
                    .unwrap_or_else(|e| panic!("{name} {path}: {e}"));
                assert_eq!(a.dtype.name(), "uint8", "{name} {path}");
                assert_eq!(
                    (a.shape.as_slice(), a.data.as_slice()),
                    (*shape, *bytes),
                    "{name} {path}"
                );
            }
        }
        // and every array of the file reads
        let arrays = file.arrays();
        assert!(!arrays.is_empty(), "{name}");
        for (p, _) in arrays {
            file.dyn_array(&p)
                .unwrap_or_else(|e| panic!("{name} {p}: {e}"));
        }
    }
}

#[test]
fn fuzz_regressions_are_errors() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/hdf5");
    // the folder holds these inputs and no other (a new one needs its error here)
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut known: Vec<&str> = REGRESSIONS.iter().map(|(n, _)| *n).collect();
    known.extend(CONVERTS.iter().map(|(n, ..)| *n));
    known.sort();
    assert_eq!(names, known, "fuzz/regressions/hdf5 against REGRESSIONS");
    for (name, want) in &REGRESSIONS {
        let data = std::fs::read(dir.join(name)).unwrap();
        // strict: a datatype with no ASDF form is the error (by default such a dataset is
        // left out and listed, and the rest converts)
        let strict = ToAsdfOptions {
            strict: true,
            ..ToAsdfOptions::default()
        };
        let err = match to_asdf_bytes(&data, &strict) {
            Ok(bytes) => panic!("{name}: converted to {} bytes", bytes.len()),
            Err(e) => e,
        };
        if let Want::Unsupported(path, _) = want {
            // not strict: the file converts without the dataset, listed under _hdf5
            let bytes = to_asdf_bytes(&data, &ToAsdfOptions::default())
                .unwrap_or_else(|e| panic!("{name}, not strict: {e}"));
            let file = asdf_core::AsdfFile::from_bytes(bytes).unwrap();
            let key = path.replace('~', "~0").replace('/', "~1");
            assert!(file.get(path).is_none(), "{name}: {path} converted");
            assert!(
                file.get(&format!("/_hdf5/left_out/{key}")).is_some(),
                "{name}: {path} not listed as left out"
            );
        }
        let got = match (&err, want) {
            (Hdf5Error::Read { path, message }, Want::Read(..)) => (path, message),
            (Hdf5Error::Unsupported { path, what }, Want::Unsupported(..)) => (path, what),
            _ => panic!("{name}: {err:?}, want {want:?}"),
        };
        let (Want::Read(path, text) | Want::Unsupported(path, text)) = want;
        assert_eq!(
            (got.0.as_str(), got.1.as_str()),
            (*path, *text),
            "{name}: {err:?}"
        );
    }
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
