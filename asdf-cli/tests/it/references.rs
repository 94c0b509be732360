//! `asdftool manifest` and `asdftool references`: the pieces of arrays of every codec cover
//! the array exactly once, lie inside the file, and decode to the array's bytes; the
//! reference set's layout; `--stack` refusing files that disagree. (Reading the references
//! with fsspec + zarr is `tests/oracle/zarr_references.py`, run by `.ci/run`.)

use crate::common;
use crate::tool;

use std::path::{Path, PathBuf};

use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
use serde_json::Value;
use tool::{asdftool, ok, stderr};

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("asdftool-references-{name}"))
}

/// 700 rows of 1024 float64 (8 KiB rows): 5.6 MiB, so python asdf's 4 MiB lz4 sub-blocks
/// and our 4 MiB Blosc2 chunks hold 512 rows, the last 188.
fn image() -> ndarray::Array2<f64> {
    ndarray::Array2::from_shape_fn((700, 1024), |(i, j)| {
        ((i * 7919 + j * 104_729) % 1_000_003) as f64 * 0.25
    })
}

fn write(dir: &Path, name: &str, c: Option<Compression>) -> PathBuf {
    let choice = c.map_or(CompressionChoice::None, CompressionChoice::Codec);
    let a = image();
    let small = ndarray::Array1::<i16>::from_iter(-50..50);
    let mut w = Writer::new(WriteOptions::default().compression(choice));
    let root = asdf_core::tree!({
        "a": w.add_array(&a),
        "group": {"small": w.add_array(&small), "note": "hello", "n": 3},
    });
    let path = dir.join(name);
    w.write_to_path(&root, &path).unwrap();
    path
}

fn le_bytes(a: &ndarray::Array2<f64>) -> Vec<u8> {
    a.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn manifest_json(file: &Path, path: &str, extra: &[&str]) -> Value {
    let mut args = vec!["manifest", file.to_str().unwrap(), path, "--json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(&asdftool(&args))).expect("manifest --json is json")
}

/// Decodes one piece's stored bytes as the manifest's codec names it.
fn decode_piece(codec: &str, stored: &[u8], size: u64) -> Vec<u8> {
    use asdf_core::unstable::decode;
    match codec {
        "none" => stored.to_vec(),
        "lz4-block" => {
            // the piece is the sub-block after its 4-byte big-endian length
            let mut framed = (stored.len() as u32).to_be_bytes().to_vec();
            framed.extend_from_slice(stored);
            decode(Compression::Lz4, &framed, size).unwrap()
        }
        "blosc2-chunk" => decode(Compression::Bls2, stored, size).unwrap(),
        name => decode(name.parse().unwrap(), stored, size).unwrap(),
    }
}

#[test]
fn manifest_pieces_cover_the_array_once_and_decode_to_it() {
    let dir = scratch("cover");
    let expected = le_bytes(&image());
    let row = 1024 * 8;
    // codec, pieces, chunk rows
    let cases: [(Option<Compression>, usize, usize); 9] = [
        (None, 6, 122), // --slab-bytes 1 MB: 122 rows of 8 KiB
        (Some(Compression::Lz4), 2, 512),
        (Some(Compression::Bsc2), 2, 512),
        (Some(Compression::Zlib), 1, 700),
        (Some(Compression::Bzp2), 1, 700),
        (Some(Compression::Zstd), 1, 700),
        (Some(Compression::Lz4f), 1, 700),
        (Some(Compression::Blsc), 1, 700),
        (Some(Compression::Bls2), 1, 700),
    ];
    for (c, count, rows) in cases {
        let name = c.map_or("none", Compression::name);
        let file = write(&dir, &format!("{name}.asdf"), c);
        let bytes = std::fs::read(&file).unwrap();
        let m = manifest_json(&file, "/a", &["--slab-bytes", "1000000"]);
        let a = &m["arrays"][0];
        assert_eq!(a["shape"], serde_json::json!([700, 1024]), "{name}");
        assert_eq!(a["numpy_dtype"], "<f8");
        assert_eq!(a["zarr_chunks"], serde_json::json!([rows, 1024]), "{name}");
        let pieces = a["pieces"].as_array().unwrap();
        assert_eq!(pieces.len(), count, "{name}: {pieces:?}");
        let mut next_row = 0u64;
        for p in pieces {
            assert_eq!(p["source"], "file", "{name}");
            let (off, len) = (p["offset"].as_u64().unwrap(), p["length"].as_u64().unwrap());
            assert!(
                off + len <= bytes.len() as u64,
                "{name}: piece past the end"
            );
            let region = p["region"].as_array().unwrap();
            let (r0, r1) = (
                region[0][0].as_u64().unwrap(),
                region[0][1].as_u64().unwrap(),
            );
            assert_eq!(region[1], serde_json::json!([0, 1024]));
            assert_eq!(r0, next_row, "{name}: pieces must follow each other");
            next_row = r1;
            let decoded = [
                p["decoded"][0].as_u64().unwrap(),
                p["decoded"][1].as_u64().unwrap(),
            ];
            assert_eq!(
                decoded,
                [r0 * row, r1 * row],
                "{name}: the block is the array"
            );
            let stored = &bytes[off as usize..(off + len) as usize];
            let got = decode_piece(
                p["codec"].as_str().unwrap(),
                stored,
                decoded[1] - decoded[0],
            );
            assert!(
                got == expected[decoded[0] as usize..decoded[1] as usize],
                "{name}: piece of rows {r0}..{r1} decodes to other bytes"
            );
        }
        assert_eq!(next_row, 700, "{name}: the pieces cover every row");
    }
}

#[test]
fn manifest_table_paths_and_refusals() {
    let dir = scratch("table");
    let file = write(&dir, "t.asdf", Some(Compression::Lz4));
    let text = ok(&asdftool(&["manifest", file.to_str().unwrap()]));
    assert!(
        text.contains("/a float64 <f8 (700, 1024), 2 pieces, regular chunks (512, 1024)"),
        "{text}"
    );
    assert!(text.contains("/group/small int16"), "{text}");
    assert!(text.contains("lz4-block"), "{text}");
    // python's path form works too; a node that is no array is refused
    let one = ok(&asdftool(&[
        "manifest",
        file.to_str().unwrap(),
        "group.small",
    ]));
    assert!(one.starts_with("/group/small"), "{one}");
    let out = asdftool(&["manifest", file.to_str().unwrap(), "/group/note"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("/group/note is not an array"),
        "{}",
        stderr(&out)
    );
    // ASDF in FITS: an image stored as astropy reads it is its HDU's data; a scaled one
    // (DQ: BZERO) is a typed refusal naming the path
    let fits = asdf_test_data::require_dir("asdf-in-fits")
        .unwrap_or_else(|| panic!("tests/data/asdf-in-fits is absent"))
        .join("image.fits");
    let data = ok(&asdftool(&["manifest", fits.to_str().unwrap(), "/data"]));
    assert!(data.contains("1 piece, regular chunks"), "{data}");
    let out = asdftool(&["manifest", fits.to_str().unwrap(), "/dq"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("/dq: HDU 2 (DQ)") && stderr(&out).contains("BZERO"),
        "{}",
        stderr(&out)
    );
}

fn refs_of(path: &Path) -> serde_json::Map<String, Value> {
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(doc["version"], 1);
    doc["refs"].as_object().unwrap().clone()
}

fn meta(refs: &serde_json::Map<String, Value>, key: &str) -> Value {
    serde_json::from_str(refs[key].as_str().unwrap()).unwrap()
}

#[test]
fn references_name_the_pieces_and_groups() {
    let dir = scratch("refs");
    for (c, id, chunks) in [
        (None, Value::Null, 700),
        (Some(Compression::Lz4), serde_json::json!("asdf_lz4"), 512),
        (
            Some(Compression::Bsc2),
            serde_json::json!("asdf_blosc2"),
            512,
        ),
        (Some(Compression::Zlib), serde_json::json!("zlib"), 700),
    ] {
        let name = c.map_or("none", Compression::name);
        let file = write(&dir, &format!("{name}.asdf"), c);
        let out = dir.join(format!("{name}.json"));
        ok(&asdftool(&[
            "references",
            file.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]));
        let refs = refs_of(&out);
        let z = meta(&refs, "a/.zarray");
        assert_eq!(z["shape"], serde_json::json!([700, 1024]));
        assert_eq!(z["chunks"], serde_json::json!([chunks, 1024]), "{name}");
        assert_eq!(z["dtype"], "<f8");
        assert_eq!(z["zarr_format"], 2);
        assert_eq!(z["fill_value"], Value::Null);
        assert_eq!(
            z["compressor"].get("id").cloned().unwrap_or(Value::Null),
            id
        );
        let n = 700usize.div_ceil(chunks);
        for i in 0..n {
            let r = refs[&format!("a/{i}.0")].as_array().unwrap();
            assert_eq!(
                r[0],
                file.to_str().unwrap(),
                "{name}: the url is FILE as given"
            );
        }
        assert!(!refs.contains_key(&format!("a/{n}.0")));
        assert_eq!(
            meta(&refs, ".zgroup"),
            serde_json::json!({"zarr_format": 2})
        );
        assert_eq!(
            meta(&refs, "group/.zattrs"),
            serde_json::json!({"note": "hello", "n": 3})
        );
        assert_eq!(meta(&refs, "group/small/.zarray")["dtype"], "<i2");
    }
}

#[test]
fn stack_refuses_a_file_that_disagrees_and_writes_nothing() {
    let dir = scratch("stack");
    let a = write(&dir, "a.asdf", None);
    let b = write(&dir, "b.asdf", None);
    let c = write(&dir, "c.asdf", Some(Compression::Zlib));
    let out = dir.join("s.json");
    ok(&asdftool(&[
        "references",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--stack",
        "run",
        "-o",
        out.to_str().unwrap(),
    ]));
    let refs = refs_of(&out);
    let z = meta(&refs, "a/.zarray");
    assert_eq!(z["shape"], serde_json::json!([2, 700, 1024]));
    assert_eq!(z["chunks"], serde_json::json!([1, 700, 1024]));
    assert_eq!(refs["a/1.0.0"][0], b.to_str().unwrap());
    assert_eq!(
        meta(&refs, ".zattrs")["run"],
        serde_json::json!([a.to_str().unwrap(), b.to_str().unwrap()])
    );

    let bad = dir.join("bad.json");
    let o = asdftool(&[
        "references",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        c.to_str().unwrap(),
        "--stack",
        "run",
        "-o",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(c.to_str().unwrap())
            && e.contains("/a does not stack")
            && e.contains("compressor"),
        "{e}"
    );
    assert!(!bad.exists());
    // several files need --stack
    let o = asdftool(&[
        "references",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--stack"), "{}", stderr(&o));
}
