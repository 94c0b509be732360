//! The tree form of HDF5 values that have no array form (docs/hdf5.md) on the way back:
//! netCDF's dimension scales (`DIMENSION_LIST`, sequences of object references, and
//! `REFERENCE_LIST`, records of an object reference and a dimension), converted to ASDF
//! (checked against h5py in h5py_files.rs), are written back as HDF5 references, so that
//! converting the HDF5 file written back gives the same tree form again; a reference the way
//! back cannot write (to the root group) leaves the attribute as its YAML text. With
//! `ASDF_WRITE_OUT=DIR` the HDF5 files written back are left there
//! (`hdf5_scales_NAME.back.h5`) for h5py in `check_round_trip.py`.

use std::path::PathBuf;

use asdf_core::{AsdfFile, Node, Value};
use asdf_hdf5::{from_asdf, to_asdf, ToAsdfOptions, META_KEY};
use serde_json::{json, Value as Json};

use crate::common;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// A node of the tree form as JSON (mappings, sequences, integers, strings, null).
fn to_json(node: &Node) -> Json {
    match node.value() {
        Value::Null => Json::Null,
        Value::Int(_) => json!(node.as_int().and_then(|i| i.as_i128()).unwrap() as i64),
        Value::Str(s) => json!(s),
        Value::Seq(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Map(m) => Json::Object(
            m.iter()
                .map(|(k, v)| (k.as_str().unwrap().to_string(), to_json(v)))
                .collect(),
        ),
        other => panic!("not in the tree form: {other:?}"),
    }
}

/// Every attribute kept under `_hdf5/attrs` named `DIMENSION_LIST` or `REFERENCE_LIST`, by
/// `PATH@NAME`.
fn scale_attributes(file: &AsdfFile) -> Vec<(String, Json)> {
    let mut out = Vec::new();
    let attrs = file.get(&format!("/{META_KEY}/attrs")).unwrap();
    for (path, named) in attrs.as_map().unwrap() {
        for (name, v) in named.as_map().unwrap() {
            let name = name.as_str().unwrap();
            if name == "DIMENSION_LIST" || name == "REFERENCE_LIST" {
                out.push((format!("{}@{name}", path.as_str().unwrap()), to_json(v)));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn netcdf_dimension_scales_come_back_as_references() {
    let dir = common::Scratch::new("tree-forms");
    let folder = data().join("other_writers");
    let mut seen = 0;
    for name in [
        "nc4_basic.nc",
        "nc4_groups.nc",
        "nc4_unlimited.nc",
        "same_size_dims.nc",
    ] {
        let (middle, back, again) = (
            dir.join(format!("{name}.asdf")),
            dir.join(format!("{name}.back.h5")),
            dir.join(format!("{name}.again.asdf")),
        );
        to_asdf(&folder.join(name), &middle, &ToAsdfOptions::default()).unwrap();
        from_asdf(&middle, &back).unwrap_or_else(|e| panic!("{name}: {e}"));
        to_asdf(&back, &again, &ToAsdfOptions::default()).unwrap();
        let (first, second) = (
            scale_attributes(&AsdfFile::open(&middle).unwrap()),
            scale_attributes(&AsdfFile::open(&again).unwrap()),
        );
        assert!(
            first.iter().any(|(k, _)| k.ends_with("@DIMENSION_LIST"))
                && first.iter().any(|(k, _)| k.ends_with("@REFERENCE_LIST")),
            "{name}: {first:?}"
        );
        // the same references, to the same datasets, in the same form (not YAML text)
        assert_eq!(first, second, "{name}");
        for (k, v) in &second {
            assert!(v.is_array(), "{name}: {k} is {v}");
        }
        seen += first.len();
        if let Some(o) = asdf_test_data::write_out_dir() {
            // for h5py (check_round_trip.py): the references it reads must name the objects
            // the original's name
            std::fs::copy(&back, o.join(format!("hdf5_scales_{name}.back.h5"))).unwrap();
        }
    }
    assert!(seen >= 8, "{seen} dimension-scale attributes");
}

#[test]
fn a_reference_the_way_back_cannot_write_stays_yaml_text() {
    // nested_refs.h5 (generate.py): /x@DIMENSION_LIST names /y, written back as a
    // reference; /ref_lists (a dataset of sequences of references, one to the root group)
    // has no HDF5 form on the way back: it becomes an attribute of YAML text, as any
    // subtree the way back has no form for
    let dir = common::Scratch::new("tree-forms-text");
    let (middle, back, again) = (
        dir.join("n.asdf"),
        dir.join("n.back.h5"),
        dir.join("n.again.asdf"),
    );
    to_asdf(
        &data().join("nested_refs.h5"),
        &middle,
        &ToAsdfOptions::default(),
    )
    .unwrap();
    from_asdf(&middle, &back).unwrap();
    to_asdf(&back, &again, &ToAsdfOptions::default()).unwrap();
    let again = AsdfFile::open(&again).unwrap();
    assert_eq!(
        scale_attributes(&again),
        [("/x@DIMENSION_LIST".to_string(), json!([[{"$ref": "#/y"}]]))]
    );
    // a root-group attribute of one variable-length string (a list of one, as HDF5 reads
    // a one-element string attribute)
    let text = again
        .get(&format!("/{META_KEY}/attrs/~1/ref_lists/0"))
        .and_then(Node::as_str)
        .unwrap_or_else(|| panic!("{:?}", again.get(&format!("/{META_KEY}/attrs/~1"))));
    assert!(text.contains("$ref: '#'"), "{text}");
}
