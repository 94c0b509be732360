//! ASDF in FITS (JWST products): the fixtures of `tests/data/asdf-in-fits/` (written by
//! stdatamodels 6.0.0 and astropy 8.0.2, `generate.py` there) read as the FITS oracle reads
//! them (`tests/oracle/fits_oracle.py` made each `.expect.json`), typed arrays hold the values
//! the generator wrote, a cut file is an error and never a partial read, and the format is
//! read-only: an update is refused, a rewrite makes a plain ASDF file.

use crate::common;

use std::path::PathBuf;

use asdf_core::file::{FitsError, HduKind};
use asdf_core::write::{CompressionChoice, Storage, WriteError, WriteOptions, Writer};
use asdf_core::{AsdfFile, Error};

const FOLDER: &str = "asdf-in-fits";
const FIXTURES: [&str; 6] = [
    "cube",
    "image",
    "image_extension",
    "scaled",
    "spectra",
    "table_types",
];

fn fixture(name: &str) -> PathBuf {
    common::data_dir(FOLDER).join(format!("{name}.fits"))
}

fn canonical(file: &AsdfFile) -> serde_json::Value {
    common::parse_json(&asdf_core::unstable::canonical::to_json(file).unwrap()).unwrap()
}

#[test]
fn every_fixture_reads_as_astropy_and_python_asdf_read_it() {
    let dir = common::data_dir(FOLDER);
    let found = common::files_with_suffix(&dir, &[".fits"]);
    assert_eq!(found.len(), FIXTURES.len(), "fixtures: {found:?}");
    for name in FIXTURES {
        let path = fixture(name);
        let expected = std::fs::read_to_string(path.with_extension("expect.json")).unwrap();
        let expected = common::parse_json(&expected).unwrap();
        let file = AsdfFile::open(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let diffs = common::compare(&expected, &canonical(&file), &[]);
        assert!(diffs.is_empty(), "{name}:\n{}", diffs.join("\n"));
        // a memory-mapped open reads the same
        let mapped = AsdfFile::options().mmap(true).open(&path).unwrap();
        assert_eq!(canonical(&mapped), canonical(&file), "{name} mapped");
    }
}

#[test]
fn image_product_arrays_and_hdus() {
    let file = AsdfFile::open(fixture("image")).unwrap();
    let hdus = file.fits_hdus().expect("a FITS file");
    let names: Vec<(&str, &HduKind)> = hdus.iter().map(|h| (h.name.as_str(), &h.kind)).collect();
    assert_eq!(
        names,
        [
            ("PRIMARY", &HduKind::Primary),
            ("SCI", &HduKind::Image),
            ("DQ", &HduKind::Image),
            ("ERR", &HduKind::Image),
            ("ASDF", &HduKind::BinTable),
        ]
    );
    let data = file.array::<f32>("/data").unwrap();
    assert_eq!(data.shape(), [6, 7]);
    assert!(data[[0, 0]].is_nan(), "the generator wrote NaN at [0, 0]");
    // DQ is stored as int32 with BZERO = 2^31 and read as uint32
    let dq = file.array::<u32>("/dq").unwrap();
    assert_eq!([dq[[0, 0]], dq[[0, 1]], dq[[0, 2]]], [0, 1 << 31, u32::MAX]);
    assert_eq!(
        file.get("/meta/telescope").and_then(|n| n.as_str()),
        Some("JWST")
    );
    // the tree's own key survives
    assert!(file.get("/_fits_hash").is_some());
    // the arrays of a plain ASDF file are not FITS
    assert!(
        AsdfFile::from_bytes(b"#ASDF 1.0.0\n%YAML 1.1\n---\nx: 1\n...\n".to_vec())
            .unwrap()
            .fits_hdus()
            .is_none()
    );
}

#[test]
fn scaled_integers_follow_the_fits_rules() {
    let file = AsdfFile::open(fixture("scaled")).unwrap();
    // int16 × 0.25 + 100 as float32, BLANK = -32768 at [1, 1] becomes NaN
    let sci = file.array::<f32>("/sci").unwrap();
    assert_eq!(sci.shape(), [4, 5]);
    assert!(sci[[1, 1]].is_nan());
    assert!(sci.iter().filter(|v| v.is_nan()).count() == 1);
    // stored int64 with BZERO = 2^63 reads as uint64: -2^63 → 0, -1 → 2^63 - 1, ...
    assert_eq!(
        file.array::<u64>("/big")
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        [0, (1 << 63) - 1, 1 << 63, u64::MAX]
    );
    // stored bytes with BZERO = -128 read as int8
    assert_eq!(
        file.array::<i8>("/sbyte")
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        [-128, -127, -1, 0, 127]
    );
    // int32 + 10 becomes float64
    assert_eq!(
        file.array::<f64>("/offset")
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        [11.0, 12.0, 13.0, 6.0]
    );
    // float32 × 2 + 1 stays float32
    assert_eq!(
        file.array::<f32>("/fscale")
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        [4.0, -3.0, f32::INFINITY]
    );
    // BLANK = 0 converts to float32 but blanks nothing (astropy tests `if BLANK:`)
    assert_eq!(
        file.array::<f32>("/blank0")
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        [0.0, 1.0, 2.0]
    );
    assert_eq!(
        file.array::<f32>("/bscaled")
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        [0.0, 0.5, 100.0]
    );
    // the wrong element type is the usual datatype error
    assert!(matches!(
        file.array::<i16>("/sci"),
        Err(Error::Convert { .. })
    ));
}

#[test]
fn old_style_extension_index_sources_and_embedded_blocks() {
    let file = AsdfFile::open(fixture("image_extension")).unwrap();
    assert_eq!(file.fits_hdus().unwrap()[3].kind, HduKind::Image);
    // fits:1 is the HDU at index 1, fits:sci,2 the second SCI (names match without case)
    assert_eq!(file.array::<f64>("/by_index").unwrap().shape(), [2, 3]);
    assert_eq!(
        file.array::<i32>("/by_name")
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        [0, 1, 2, 3, 4, 5]
    );
    // an ASDF block inside the ASDF extension
    assert_eq!(file.blocks().len(), 1);
    assert_eq!(
        file.array::<i16>("/local")
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        (0..10).collect::<Vec<i16>>()
    );
    file.verify_checksums().unwrap();
}

#[test]
fn binary_table_fields_as_astropy_converts_them() {
    let file = AsdfFile::open(fixture("table_types")).unwrap();
    let table = file.dyn_array("/table").unwrap();
    assert_eq!(table.shape, [4]);
    let asdf_core::array::DType::Record(fields) = &table.dtype else {
        panic!("{:?}", table.dtype)
    };
    let described: Vec<(String, String, Vec<usize>)> = fields
        .iter()
        .map(|f| (f.name.clone(), f.dtype.name(), f.shape.clone()))
        .collect();
    let expect = |n: &str, t: &str, s: &[usize]| (n.to_string(), t.to_string(), s.to_vec());
    assert_eq!(
        described,
        [
            expect("i32", "int32", &[]),
            expect("u32", "uint32", &[]),
            expect("u16", "uint16", &[]),
            expect("scaled", "float64", &[]),
            expect("logical", "bool8", &[]),
            expect("text", "ascii[6]", &[]),
            expect("vec", "float32", &[3]),
            expect("matrix", "uint8", &[2, 3]),
            expect("i64", "int64", &[]),
            expect("byte", "uint8", &[]),
            expect("c64", "complex64", &[]),
            expect("c128", "complex128", &[]),
            expect("bits", "bool8", &[10]),
            expect("f64", "float64", &[]),
            expect("words", "ascii[4]", &[2]),
        ]
    );
}

/// A FITS file of `hdus` (each a list of cards and its data), padded as FITS requires.
fn fits_bytes(hdus: &[(&[&str], &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (cards, data) in hdus {
        for c in cards.iter().chain(std::iter::once(&"END")) {
            let mut card = c.as_bytes().to_vec();
            card.resize(80, b' ');
            out.extend(card);
        }
        out.resize(out.len().next_multiple_of(2880), b' ');
        out.extend(*data);
        out.resize(out.len().next_multiple_of(2880), 0);
    }
    out
}

fn asdf_hdu(asdf: &[u8]) -> (Vec<String>, Vec<u8>) {
    let cards = vec![
        "XTENSION= 'IMAGE   '".to_string(),
        "BITPIX  = 8".into(),
        "NAXIS   = 1".into(),
        format!("NAXIS1  = {}", asdf.len()),
        "PCOUNT  = 0".into(),
        "GCOUNT  = 1".into(),
        "EXTNAME = 'ASDF'".into(),
    ];
    (cards, asdf.to_vec())
}

fn fits_error(e: Error) -> FitsError {
    match e {
        Error::Fits { error, .. } => error,
        other => panic!("not a FITS error: {other:?}"),
    }
}

#[test]
fn missing_extension_hdu_or_fits_context_are_typed_errors() {
    let primary: &[&str] = &["SIMPLE  = T", "BITPIX  = 8", "NAXIS   = 0", "EXTEND  = T"];
    let bytes = fits_bytes(&[(primary, &[])]);
    let err = fits_error(AsdfFile::from_bytes(bytes).unwrap_err());
    assert!(
        matches!(err, FitsError::NoAsdfExtension { hdus: 1 }),
        "{err:?}"
    );
    assert!(err.to_string().contains("no ASDF extension"), "{err}");

    let tree = b"#ASDF 1.0.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
a: !core/ndarray-1.1.0 {source: 'fits:SCI,1', datatype: float32, byteorder: big, shape: [1]}\n...\n";
    let (cards, data) = asdf_hdu(tree);
    let cards: Vec<&str> = cards.iter().map(String::as_str).collect();
    let file = AsdfFile::from_bytes(fits_bytes(&[(primary, &[]), (&cards, &data)])).unwrap();
    let e = file.array::<f32>("/a").unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("/a") && text.contains("fits:SCI,1") && text.contains("names no HDU"),
        "{text}"
    );
    assert!(matches!(
        fits_error(e),
        FitsError::NoSuchHdu { hdus: 2, .. }
    ));

    // the same tree in a plain ASDF file
    let file = AsdfFile::from_bytes(tree.to_vec()).unwrap();
    let e = fits_error(file.array::<f32>("/a").unwrap_err());
    assert!(matches!(e, FitsError::NotInFits { .. }), "{e:?}");
}

#[test]
fn a_cut_fits_file_fails_or_reads_whole() {
    for name in ["image", "image_extension", "table_types"] {
        let bytes = std::fs::read(fixture(name)).unwrap();
        let whole = AsdfFile::from_bytes(bytes.clone()).unwrap();
        let data_end = whole
            .fits_hdus()
            .unwrap()
            .iter()
            .map(|h| h.data_end())
            .max()
            .unwrap();
        let full = canonical(&whole);
        // every byte of the first two records and around the data end, then every 61st
        let cuts = (0..bytes.len())
            .filter(|&n| n < 5760 || (n as u64).abs_diff(data_end) < 200 || n % 61 == 0);
        for n in cuts {
            let opened = AsdfFile::from_bytes(bytes[..n].to_vec());
            if n < 30 {
                // too short to be told from a pure-YAML file: read as one (or refused)
                continue;
            }
            match opened {
                Ok(f) => {
                    assert!(n as u64 >= data_end, "{name} cut at {n} opened");
                    assert_eq!(canonical(&f), full, "{name} cut at {n} in the padding");
                }
                Err(Error::Fits { .. }) => {
                    assert!((n as u64) < data_end, "{name} cut at {n} failed")
                }
                Err(e) => panic!("{name} cut at {n}: unexpected error {e:?}"),
            }
        }
    }
}

#[test]
fn fits_is_read_only_and_rewrites_as_plain_asdf() {
    let dir = std::env::temp_dir().join(format!("asdf-in-fits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("image.fits");
    std::fs::copy(fixture("image"), &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let file = AsdfFile::open(&path).unwrap();
    let err = asdf_core::write::update(&path, file.tree(), WriteOptions::new()).unwrap_err();
    assert!(matches!(err, WriteError::ReadOnlyFormat { .. }), "{err:?}");
    assert!(err.to_string().contains("read-only"), "{err}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file is untouched"
    );
    std::fs::remove_dir_all(&dir).unwrap();

    // every fits: array becomes a block of a plain ASDF file with the same content
    for (name, compression) in [
        ("image", CompressionChoice::Input),
        ("table_types", CompressionChoice::Input),
        (
            "image_extension",
            CompressionChoice::Codec("zlib".parse().unwrap()),
        ),
        ("spectra", CompressionChoice::Input),
    ] {
        let file = AsdfFile::open(fixture(name)).unwrap();
        let opts = WriteOptions::new()
            .storage(Storage::Internal)
            .compression(compression);
        let bytes = Writer::from_file(&file, opts)
            .write_to_vec(file.tree())
            .unwrap();
        common::dump_for_oracle(&format!("asdf_in_fits_{name}"), &bytes);
        let plain = AsdfFile::from_bytes(bytes).unwrap();
        assert!(plain.fits_hdus().is_none());
        let ignore = ["/tree/value/asdf_library", "/tree/value/history"];
        let diffs = common::compare(&canonical(&file), &canonical(&plain), &ignore);
        assert!(diffs.is_empty(), "{name}:\n{}", diffs.join("\n"));
        for (path, node) in plain.arrays() {
            let source = node
                .get("source")
                .and_then(|s| s.as_str().map(str::to_string));
            assert!(
                source.is_none_or(|s| !s.starts_with("fits:")),
                "{name}{path} still refers to FITS"
            );
        }
    }
}
