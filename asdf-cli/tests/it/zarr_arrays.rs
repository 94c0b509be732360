//! asdf-zarr arrays (`asdf://asdf-format.org/zarr/tags/zarr-1.0.0`) seen by `asdftool info`,
//! `search`, `manifest` and `references`, on the fixtures python asdf + asdf-zarr 0.0.4 made
//! (`tests/data/asdf-zarr`; fsspec + zarr reading the references against asdf-zarr is
//! `tests/oracle/zarr_references.py`).

use crate::common;
use crate::tool;

use std::path::PathBuf;

use tool::{asdftool, ok, stderr};

fn fixture(name: &str) -> Option<PathBuf> {
    asdf_test_data::require_dir("asdf-zarr").map(|d| d.join(format!("{name}.asdf")))
}

#[test]
fn info_and_search_show_zarr_arrays_as_arrays() {
    let Some(f) = fixture("mixed") else { return };
    let f = f.to_str().unwrap();
    let out = ok(&asdftool(&["info", f]));
    // the zarr nodes are leaves with a summary, not mappings of their metadata
    assert!(
        out.contains(
            "├─a !asdf://asdf-format.org/zarr/tags/zarr-1.0.0 float32 (4, 4), asdf-zarr chunks (3, 3) (4 chunks), compressor zstd"
        ),
        "{out}"
    );
    assert!(
        out.contains("uint32 (5), asdf-zarr chunks (2) (3 chunks), compressor none"),
        "{out}"
    );
    assert!(!out.contains(".zarray"), "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&asdftool(&["info", f, "--json"]))).unwrap();
    let a = &json["tree"]["children"]["group"]["children"]["a"];
    assert_eq!(a["kind"], "zarr");
    assert_eq!(a["datatype"], "float32");
    assert_eq!(a["shape"], serde_json::json!([4, 4]));
    assert_eq!(a["chunks"], serde_json::json!([3, 3]));
    assert_eq!(a["compressor"], "zstd");
    assert_eq!(a["order"], "C");
    let found = ok(&asdftool(&["search", f, "-t", "zarr"]));
    assert_eq!(found.lines().count(), 2, "{found}");
    assert!(found.starts_with("/group/a !asdf://"), "{found}");

    let Some(f) = fixture("i8_2d_zstd_fortran") else {
        return;
    };
    let out = ok(&asdftool(&["info", f.to_str().unwrap()]));
    assert!(
        out.contains("int64 (7, 6), asdf-zarr chunks (3, 4) (6 chunks), compressor zstd, order F"),
        "{out}"
    );
}

#[test]
fn manifest_lists_each_chunk() {
    let Some(f) = fixture("u1_2d_lz4_missing") else {
        return;
    };
    let out = ok(&asdftool(&["manifest", f.to_str().unwrap(), "--json"]));
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let [a] = doc["arrays"].as_array().unwrap().as_slice() else {
        panic!("{out}")
    };
    assert_eq!(a["path"], "/z");
    assert_eq!(a["zarr_chunks"], serde_json::json!([4, 5]));
    let pieces = a["pieces"].as_array().unwrap();
    // 9x11 in 4x5 chunks: a grid of 3x3, one chunk deleted (its fill value repeated)
    assert_eq!(pieces.len(), 9);
    let repeats: Vec<&serde_json::Value> =
        pieces.iter().filter(|p| p["source"] == "repeat").collect();
    assert_eq!(repeats.len(), 1, "{out}");
    assert!(pieces
        .iter()
        .filter(|p| p["source"] == "file")
        .all(|p| p["codec"] == "lz4-block"));
    assert_eq!(pieces[8]["region"], serde_json::json!([[8, 9], [10, 11]]));
}

#[test]
fn references_point_at_each_chunk() {
    let Some(f) = fixture("mixed") else { return };
    let dir = common::Scratch::new("asdftool-zarr-refs");
    let out = dir.join("refs.json");
    let said = ok(&asdftool(&[
        "references",
        f.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]));
    // 4 + 3 zarr chunks and the one block of /plain; nothing inlined
    assert!(
        said.contains("3 arrays: 8 chunks referenced, 0 inlined"),
        "{said}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let refs = doc["refs"].as_object().unwrap();
    let zarray: serde_json::Value =
        serde_json::from_str(refs["group/a/.zarray"].as_str().unwrap()).unwrap();
    assert_eq!(zarray["chunks"], serde_json::json!([3, 3]));
    assert_eq!(zarray["compressor"]["id"], "zstd");
    assert_eq!(zarray["dtype"], "<f4");
    // the metadata is not a group of attributes
    assert!(!refs.contains_key("group/a/.zgroup"));
    let raw = std::fs::read(&f).unwrap();
    for key in ["group/a/0.0", "group/a/1.1", "group/list/0/2"] {
        let r = refs[key].as_array().unwrap_or_else(|| panic!("{key}"));
        let (at, len) = (r[1].as_u64().unwrap(), r[2].as_u64().unwrap());
        assert!(at + len <= raw.len() as u64);
        if key.starts_with("group/a") {
            // a zstd frame
            assert_eq!(
                &raw[at as usize..at as usize + 4],
                &[0x28, 0xb5, 0x2f, 0xfd]
            );
        }
    }
}

/// The chunk reference (file offset, length) at `key` of a reference set, and its bytes.
fn chunk_bytes<'a>(
    refs: &serde_json::Map<String, serde_json::Value>,
    raw: &'a [u8],
    key: &str,
) -> &'a [u8] {
    let r = refs[key].as_array().unwrap_or_else(|| panic!("{key}"));
    let (at, len) = (
        r[1].as_u64().unwrap() as usize,
        r[2].as_u64().unwrap() as usize,
    );
    &raw[at..at + len]
}

/// asdf-zarr arrays of a compressor and a filter asdf-rs does not read (`unsupported.asdf`:
/// numcodecs' LZMA, Delta) are passed through as zarr needs them: the `.zarray` the file
/// states (compressor and filters) and each chunk's stored bytes, which numcodecs decodes
/// (fsspec + zarr read them equal to asdf-zarr: `tests/oracle/zarr_references.py`); one such
/// array that cannot be passed through (its chunk map names no block) is left out with one
/// warning line, and the rest is written.
#[test]
fn references_pass_through_codecs_asdf_rs_lacks_and_never_fail_for_one_array() {
    let Some(f) = fixture("unsupported") else {
        return;
    };
    let dir = common::Scratch::new("asdftool-zarr-refs-unread");
    let out = dir.join("refs.json");
    let o = asdftool(&[
        "references",
        f.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let said = ok(&o);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    assert!(
        said.contains("2 arrays: 4 chunks referenced, 0 inlined"),
        "{said}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let refs = doc["refs"].as_object().unwrap();
    let zarray = |k: &str| -> serde_json::Value {
        serde_json::from_str(refs[&format!("{k}/.zarray")].as_str().unwrap()).unwrap()
    };
    let (lzma, delta) = (zarray("lzma"), zarray("delta"));
    assert_eq!(
        lzma["compressor"],
        serde_json::json!({"check": -1, "filters": null, "format": 1, "id": "lzma", "preset": null})
    );
    assert_eq!(lzma["filters"], serde_json::Value::Null);
    assert_eq!(
        (&lzma["dtype"], &lzma["chunks"]),
        (&serde_json::json!("<f8"), &serde_json::json!([4]))
    );
    assert_eq!(delta["compressor"], serde_json::Value::Null);
    assert_eq!(
        delta["filters"],
        serde_json::json!([{"astype": "<i4", "dtype": "<i4", "id": "delta"}])
    );
    let raw = std::fs::read(&f).unwrap();
    // LZMA's format 1 is an xz stream
    for key in ["lzma/0", "lzma/1"] {
        assert!(
            chunk_bytes(refs, &raw, key).starts_with(b"\xfd7zXZ\0"),
            "{key}"
        );
    }
    // arange(6) in chunks of 4, delta-encoded chunk by chunk (the last chunk filled with the
    // fill value 0 past the edge, as zarr stores it)
    let ints = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    assert_eq!(chunk_bytes(refs, &raw, "delta/0"), ints(&[0, 1, 1, 1]));
    assert_eq!(chunk_bytes(refs, &raw, "delta/1"), ints(&[4, 1, -5, 0]));

    // /delta's chunk map moved to a block the file does not have: left out, one line
    let mut broken = raw.clone();
    let at = broken
        .windows(18)
        .position(|w| w == b"chunk_block_map: 5")
        .unwrap();
    broken[at + 17] = b'9';
    let src = dir.join("broken.asdf");
    std::fs::write(&src, &broken).unwrap();
    let o = asdftool(&[
        "references",
        src.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let said = ok(&o);
    assert!(
        said.contains("1 arrays: 2 chunks referenced, 0 inlined"),
        "{said}"
    );
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "asdftool: warning: {}: /delta left out: ",
            src.display()
        )),
        "{err}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let refs = doc["refs"].as_object().unwrap();
    assert!(refs.contains_key("lzma/.zarray"));
    assert!(!refs.keys().any(|k| k.starts_with("delta/")), "{refs:?}");
}
