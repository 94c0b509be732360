//! HDF5 → ASDF on the files h5py 3.16.0 writes (`tests/data/generate.py`): every dataset and
//! attribute of each file, converted, holds what h5py reads from it (`NAME.expect.json`: the
//! datatype, shape and canonical value hash of tests/oracle/canonical.py, or the strings).
//! With `ASDF_WRITE_OUT=DIR` the converted files are left there as `hdf5_NAME.asdf`, for
//! `asdf-hdf5/tests/check_converted.py`, which compares them with h5py in python.

use std::path::{Path, PathBuf};

use asdf_core::array::{ByteOrder, DType, DynArray, ScalarType};
use asdf_core::{AsdfFile, Node, Value};
use asdf_hdf5::{to_asdf, ToAsdfOptions, META_KEY};
use serde_json::Value as Json;

use crate::common;

/// Every `.h5` file of the test data, by name.
fn fixtures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(data())
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "h5").then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    assert_eq!(names.len(), 24, "fixtures: {names:?}");
    names
}

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn convert(name: &str, dir: &Path) -> AsdfFile {
    let out = dir.join(format!("hdf5_{name}.asdf"));
    to_asdf(
        &data().join(format!("{name}.h5")),
        &out,
        &ToAsdfOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    asdf_test_data::leave_for_oracle(&format!("hdf5_{name}"), &out, |p| {
        asdf_core::unstable::canonical::to_json(&AsdfFile::open(p).unwrap()).unwrap()
    });
    AsdfFile::options()
        .verify_checksums(true)
        .open(&out)
        .unwrap()
}

/// `/a/b` of an HDF5 path as a key of `_hdf5/...` in a JSON pointer.
fn key(hpath: &str) -> String {
    hpath.replace('~', "~0").replace('/', "~1")
}

/// A YAML scalar as a 0-d array of the numpy datatype `dtype`.
fn scalar_array(node: &Node, dtype: &str, at: &str) -> DynArray {
    let dt = DType::from_numpy_str(dtype).unwrap_or_else(|| panic!("{at}: dtype {dtype}"));
    let DType::Scalar { ty, byteorder } = &dt else {
        panic!("{at}: {dtype} is not a scalar type")
    };
    let mut bytes: Vec<u8> = match (ty, node.value()) {
        (ScalarType::Float32, Value::Float(f)) => (*f as f32).to_le_bytes().to_vec(),
        (ScalarType::Float64, Value::Float(f)) => f.to_le_bytes().to_vec(),
        (ScalarType::Bool8, Value::Bool(b)) => vec![u8::from(*b)],
        (_, Value::Int(_)) => {
            let v: i128 = node.as_int().and_then(|i| i.as_i128()).unwrap();
            v.to_le_bytes()[..dt.itemsize()].to_vec()
        }
        (t, v) => panic!("{at}: {v:?} as {t:?}"),
    };
    if *byteorder == ByteOrder::Big {
        bytes.reverse();
    }
    DynArray {
        dtype: dt,
        shape: Vec::new(),
        data: bytes,
    }
}

/// An expectation's `shape`, which must be a list of lengths.
fn shape_of(shape: &Json, at: &str) -> Vec<u64> {
    serde_json::from_value(shape.clone()).unwrap_or_else(|e| panic!("{at}: shape {shape}: {e}"))
}

/// The shape of nested sequences of strings (the first item's, at each level).
fn nesting_of(node: &Node) -> Vec<u64> {
    match node.value() {
        Value::Seq(items) => {
            let mut shape = vec![items.len() as u64];
            shape.extend(items.first().map(nesting_of).unwrap_or_default());
            shape
        }
        _ => Vec::new(),
    }
}

fn strings_of(node: &Node, out: &mut Vec<String>) {
    match node.value() {
        Value::Seq(items) => items.iter().for_each(|n| strings_of(n, out)),
        Value::Str(s) => out.push(s.clone()),
        other => panic!("not a string: {other:?}"),
    }
}

/// Checks one converted value against h5py's description of it; returns the problem.
fn check(
    file: &AsdfFile,
    node: &Node,
    at: &str,
    want: &Json,
    scalar_hint: Option<&str>,
) -> Option<String> {
    let text = |k: &str| want.get(k).and_then(Json::as_str);
    if let Some(s) = text("string") {
        if node.is_ndarray() {
            // a fixed-length string: a 0-d ascii array
            let a = file.dyn_array_of(node, at).unwrap();
            let end = a.data.iter().position(|&b| b == 0).unwrap_or(a.data.len());
            let got = String::from_utf8_lossy(&a.data[..end]).into_owned();
            return (got != s).then(|| format!("{at}: {got:?} != {s:?}"));
        }
        return (node.as_str() != Some(s)).then(|| format!("{at}: {node:?} != {s:?}"));
    }
    if let Some(list) = want.get("ragged") {
        // variable-length sequences: a 1-D array each, nested by shape, of the values and
        // lengths h5py reads (the byte order may differ: h5py reads them native)
        let hashes: Vec<String> = serde_json::from_value(list.clone()).unwrap();
        let lengths: Vec<usize> = serde_json::from_value(want["lengths"].clone()).unwrap();
        fn leaves<'n>(node: &'n Node, out: &mut Vec<&'n Node>) {
            match node.value() {
                Value::Seq(items) if !node.is_ndarray() => {
                    items.iter().for_each(|n| leaves(n, out))
                }
                _ => out.push(node),
            }
        }
        let mut got = Vec::new();
        leaves(node, &mut got);
        if got.len() != hashes.len() {
            return Some(format!(
                "{at}: {} sequences, want {}",
                got.len(),
                hashes.len()
            ));
        }
        for (i, (n, (h, len))) in got.iter().zip(hashes.iter().zip(&lengths)).enumerate() {
            let Ok(a) = file.dyn_array_of(n, at) else {
                return Some(format!("{at}: sequence {i} is no array: {n:?}"));
            };
            if a.shape != [*len] || &a.canonical_sha256_hex() != h {
                return Some(format!("{at}: sequence {i} differs ({:?})", a.shape));
            }
        }
        let want_shape = want.get("shape").map(|s| shape_of(s, at));
        let mut got_shape = Vec::new();
        let mut n = node;
        while let (false, Value::Seq(items)) = (n.is_ndarray(), n.value()) {
            got_shape.push(items.len() as u64);
            match items.first() {
                Some(first) => n = first,
                None => break,
            }
        }
        return (want_shape.as_ref() != Some(&got_shape))
            .then(|| format!("{at}: sequences of shape {got_shape:?} != {want_shape:?}"));
    }
    if let Some(list) = want.get("refs") {
        // object references: a `$ref` to the node of each object h5py names, by shape
        let paths: Vec<String> = serde_json::from_value(list.clone()).unwrap();
        let wanted: Vec<String> = paths
            .iter()
            .map(|p| format!("#{}", p.trim_end_matches('/')))
            .collect();
        fn refs_of(node: &Node, out: &mut Vec<String>) {
            match node.value() {
                Value::Seq(items) => items.iter().for_each(|n| refs_of(n, out)),
                Value::Map(m) => out.extend(
                    m.iter()
                        .filter(|(k, _)| k.as_str() == Some("$ref"))
                        .map(|(_, v)| v.as_str().unwrap_or_default().to_string()),
                ),
                other => out.push(format!("{other:?}")),
            }
        }
        let mut got = Vec::new();
        refs_of(node, &mut got);
        if got != wanted {
            return Some(format!("{at}: references {got:?} != {wanted:?}"));
        }
        let want_shape = want.get("shape").map(|s| shape_of(s, at));
        let got_shape = nesting_of(node);
        return (want_shape.as_ref() != Some(&got_shape))
            .then(|| format!("{at}: references of shape {got_shape:?} != {want_shape:?}"));
    }
    if let Some(nodes) = want.get("nodes") {
        // the tree form: records as mappings, references as `$ref`s, regions as their
        // dataset's `$ref` and selection, numbers in sequences as inline arrays
        let got = node_json(file, node, at);
        return (!same_nodes(&got, nodes)).then(|| format!("{at}: {got} != {nodes}"));
    }
    if let Some(list) = want.get("strings") {
        let mut got = Vec::new();
        strings_of(node, &mut got);
        let want_shape = want.get("shape").map(|s| shape_of(s, at));
        let want: Vec<String> = serde_json::from_value(list.clone()).unwrap();
        if got != want {
            return Some(format!("{at}: strings {got:?} != {want:?}"));
        }
        let got_shape = nesting_of(node);
        return (want_shape.as_ref() != Some(&got_shape))
            .then(|| format!("{at}: strings of shape {got_shape:?} != {want_shape:?}"));
    }
    // anything else must say what h5py read: an expectation this test cannot check is a
    // failure, never a pass
    // the datatype is a numpy string, or a list of fields for a record
    let (Some(dtype), Some(shape), Some(sha)) =
        (want.get("dtype"), want.get("shape"), text("sha256"))
    else {
        return Some(format!(
            "{at}: the expectation {want} has none of string, strings or dtype, shape and sha256"
        ));
    };
    let array = if node.is_ndarray() {
        file.dyn_array_of(node, at)
            .unwrap_or_else(|e| panic!("{at}: {e}"))
    } else {
        // a scalar dataset or attribute kept as a YAML scalar: a scalar datatype
        let Some(dtype) = dtype.as_str() else {
            return Some(format!("{at}: a YAML scalar, h5py says {dtype}"));
        };
        if let Some(hint) = scalar_hint {
            let name = DType::from_numpy_str(dtype).unwrap().name();
            if name != hint {
                return Some(format!(
                    "{at}: scalar recorded as {hint}, h5py says {dtype}"
                ));
            }
        }
        scalar_array(node, dtype, at)
    };
    let got_shape: Vec<u64> = array.shape.iter().map(|&d| d as u64).collect();
    let want_shape = shape_of(shape, at);
    // compared as JSON values (the texts differ in spacing)
    let got_dtype: Json =
        serde_json::from_str(&asdf_core::unstable::dtype_json(&array.dtype)).unwrap();
    if got_shape != want_shape || &got_dtype != dtype {
        return Some(format!(
            "{at}: {got_dtype} {got_shape:?} != {dtype} {want_shape:?}"
        ));
    }
    (array.canonical_sha256_hex() != sha).then(|| format!("{at}: values differ"))
}

/// A converted node as JSON, the way generate.py describes the tree form: an inline
/// array as its datatype, shape and canonical value hash.
fn node_json(file: &AsdfFile, node: &Node, at: &str) -> Json {
    if node.is_ndarray() {
        let a = file
            .dyn_array_of(node, at)
            .unwrap_or_else(|e| panic!("{at}: {e}"));
        let dtype: Json = serde_json::from_str(&asdf_core::unstable::dtype_json(&a.dtype)).unwrap();
        return serde_json::json!({"array": {
            "dtype": dtype, "shape": a.shape, "sha256": a.canonical_sha256_hex()}});
    }
    match node.value() {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(_) => {
            let v = node.as_int().and_then(|i| i.as_i128()).unwrap();
            serde_json::from_str(&v.to_string()).unwrap()
        }
        Value::Float(f) => serde_json::json!(f),
        Value::Str(s) => Json::String(s.clone()),
        Value::Seq(items) => Json::Array(items.iter().map(|n| node_json(file, n, at)).collect()),
        Value::Map(entries) => Json::Object(
            entries
                .iter()
                .map(|(k, v)| (k.as_str().unwrap().to_string(), node_json(file, v, at)))
                .collect(),
        ),
        other => panic!("{at}: {other:?}"),
    }
}

/// Whether the converted tree form equals h5py's description: equal, except that a
/// region's hyperslab is compared in the form the file stores it (h5py gives both its
/// blocks and, when regular, its start, stride, count and block).
fn same_nodes(got: &Json, want: &Json) -> bool {
    match (got, want) {
        (Json::Object(g), Json::Object(w)) if w.contains_key("selection") => {
            let kind = g.get("selection").and_then(Json::as_str);
            g.get("dataset") == w.get("dataset")
                && match (kind, w["selection"].as_str()) {
                    (Some("blocks"), Some("hyperslab")) => g.get("blocks") == w.get("blocks"),
                    (Some("hyperslab"), Some("hyperslab")) => {
                        let regular: Vec<&Json> = ["start", "stride", "count", "block"]
                            .iter()
                            .filter_map(|k| g.get(*k))
                            .collect();
                        w.get("regular")
                            .and_then(Json::as_array)
                            .is_some_and(|r| r.iter().collect::<Vec<_>>() == regular)
                    }
                    (Some("points"), Some("points")) => g.get("points") == w.get("points"),
                    (Some(a), Some(b)) => a == b && g.len() == 2,
                    _ => false,
                }
        }
        (Json::Object(g), Json::Object(w)) => {
            g.len() == w.len()
                && w.iter()
                    .all(|(k, v)| g.get(k).is_some_and(|x| same_nodes(x, v)))
        }
        (Json::Array(g), Json::Array(w)) => {
            g.len() == w.len() && g.iter().zip(w).all(|(x, y)| same_nodes(x, y))
        }
        _ => got == want,
    }
}

/// Strings kept as their bytes: their size (`variable` for variable-length strings) under
/// `_hdf5/string_bytes/KEY`.
fn check_string_bytes(file: &AsdfFile, key: &str, at: &str, want: &Json) -> Option<String> {
    let got = file
        .get(&format!("/{META_KEY}/string_bytes/{key}/size"))
        .map(|n| match n.as_str() {
            Some(s) => s.to_string(),
            None => format!("{:?}", n.as_int().and_then(|i| i.as_i128())),
        });
    let want = want.get("string_bytes").map(|w| match w.as_str() {
        Some(s) => s.to_string(),
        None => format!("{:?}", w.as_i64().map(i128::from)),
    });
    (got != want).then(|| format!("{at}: string_bytes size {got:?} != {want:?}"))
}

/// An opaque datatype's tag (h5py's `NUMPY:<M8[ns]`), kept under `_hdf5/opaque_tags/KEY`.
fn check_tag(file: &AsdfFile, key: &str, at: &str, want: &Json) -> Option<String> {
    let want = want.get("opaque")?.as_str();
    let got = file
        .get(&format!("/{META_KEY}/opaque_tags/{key}"))
        .and_then(Node::as_str);
    (got != want).then(|| format!("{at}: opaque tag {got:?} != {want:?}"))
}

/// Datasets left out of the conversion (a filter asdf-rs does not decode), with why: each
/// must be missing from the tree and listed under `_hdf5/left_out`, and no other may be.
const LEFT_OUT: [(&str, &str, &str); 1] = [(
    "plugins",
    "/bzip2",
    "HDF5 filter 307 (bzip2) cannot be decoded",
)];

#[test]
fn every_h5py_file_converts_to_what_h5py_reads() {
    let dir = common::Scratch::new("files");
    let mut problems = Vec::new();
    let (mut checked, mut expected) = (0, 0);
    for name in fixtures() {
        let name = name.as_str();
        let file = convert(name, &dir);
        let want: Json = serde_json::from_str(
            &std::fs::read_to_string(data().join(format!("{name}.expect.json"))).unwrap(),
        )
        .unwrap();
        let (datasets, attrs) = (
            want["datasets"].as_object().unwrap(),
            want["attrs"].as_object().unwrap(),
        );
        expected += datasets.len();
        expected += attrs
            .values()
            .map(|a| a.as_object().unwrap().len())
            .sum::<usize>();
        let listed: Vec<(String, String)> = file
            .get(&format!("/{META_KEY}/left_out"))
            .and_then(|n| n.as_map())
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        let k = k.as_str().unwrap_or_default().to_string();
                        (k, v.as_str().unwrap_or_default().to_string())
                    })
                    .collect()
            })
            .unwrap_or_default();
        let want_left: Vec<(String, String)> = LEFT_OUT
            .iter()
            .filter(|(f, ..)| *f == name)
            .map(|(_, p, why)| (p.to_string(), why.to_string()))
            .collect();
        if listed != want_left {
            problems.push(format!(
                "{name}.h5: left out {listed:?}, want {want_left:?}"
            ));
        }
        for (p, w) in datasets {
            let at = format!("{name}.h5:{p}");
            if want_left.iter().any(|(l, _)| l == p) {
                if file.get(p).is_some() {
                    problems.push(format!("{at}: converted, but it is left out"));
                }
                checked += 1;
                continue;
            }
            let Some(node) = file.get(p) else {
                problems.push(format!("{at}: missing"));
                continue;
            };
            if w.get("empty").is_some() {
                // a null dataspace: `null`, its datatype under _hdf5/empty_datasets
                let kept = file
                    .get(&format!("/{META_KEY}/empty_datasets/{}", key(p)))
                    .and_then(Node::as_str);
                if !matches!(node.value(), Value::Null) || kept != w["dtype"].as_str() {
                    problems.push(format!("{at}: {node:?}, datatype {kept:?}, want {w}"));
                }
                checked += 1;
                continue;
            }
            let hint = file
                .get(&format!("/{META_KEY}/scalar_datasets/{}", key(p)))
                .and_then(Node::as_str);
            problems.extend(check(&file, node, &at, w, hint));
            problems.extend(check_tag(&file, &key(p), &at, w));
            problems.extend(check_string_bytes(&file, &key(p), &at, w));
            checked += 1;
        }
        for (p, attrs) in attrs {
            for (a, w) in attrs.as_object().unwrap() {
                let at = format!("{name}.h5:{p}@{a}");
                if w.get("no_form").is_some() {
                    // left out: the comparison of the listed ones above covers it
                    if !want_left.iter().any(|(l, _)| *l == format!("{p}@{a}")) {
                        problems.push(format!("{at}: has no form, but is not in LEFT_OUT"));
                    }
                    checked += 1;
                    continue;
                }
                let pointer = format!("/{META_KEY}/attrs/{}/{}", key(p), key(a));
                let Some(node) = file.get(&pointer) else {
                    problems.push(format!("{at}: missing at {pointer}"));
                    continue;
                };
                if w.get("empty").is_some() {
                    // a null dataspace: `null`, its datatype under _hdf5/empty_datasets
                    let kept = file
                        .get(&format!(
                            "/{META_KEY}/empty_datasets/{}",
                            key(&format!("{p}@{a}"))
                        ))
                        .and_then(Node::as_str);
                    if !matches!(node.value(), Value::Null) || kept != w["dtype"].as_str() {
                        problems.push(format!("{at}: {node:?}, datatype {kept:?}, want {w}"));
                    }
                    checked += 1;
                    continue;
                }
                problems.extend(check(&file, node, &at, w, None));
                problems.extend(check_tag(&file, &key(&format!("{p}@{a}")), &at, w));
                problems.extend(check_string_bytes(&file, &key(&format!("{p}@{a}")), &at, w));
                checked += 1;
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // every expectation was checked, and the files hold all generate.py wrote (172 values,
    // the 13 of plugins.h5, the 7 of empty.h5, the 4 of opaque.h5, the 5 of refs.h5, the
    // 11 of vlen.h5, the 28 of committed.h5 and of committed_latest.h5, the 4 of regions.h5
    // and of regions_latest.h5, the 7 of nested_refs.h5, the 3 of time.h5 and the 7 of
    // refs_1_12.h5, the 9 of string_bytes.h5 and the 3 of vlen_bytes.h5)
    assert_eq!(checked, expected);
    assert_eq!(checked, 305, "values checked");
}

#[test]
fn hard_links_are_one_array_and_deflated_datasets_stay_compressed() {
    let dir = common::Scratch::new("links");
    let file = convert("groups_attrs", &dir);
    let a = file.get("/data/temperature").unwrap();
    let b = file.get("/data/same").unwrap();
    assert!(a.ptr_eq(b), "a hard link is the same node (an alias)");
    // the empty group survives as an empty mapping, its attribute under _hdf5
    assert_eq!(
        file.get("/empty_group")
            .and_then(Node::as_map)
            .map(<[_]>::len),
        Some(0)
    );

    let file = convert("chunked", &dir);
    let chunks = file
        .get(&format!("/{META_KEY}/chunks/~1gzip_shuffle"))
        .unwrap();
    let dims: Vec<i128> = chunks
        .as_seq()
        .unwrap()
        .iter()
        .map(|n| n.as_int().and_then(|i| i.as_i128()).unwrap())
        .collect();
    assert_eq!(dims, [25, 30]);
    let filters = file
        .get(&format!("/{META_KEY}/filters/~1gzip_shuffle"))
        .unwrap();
    let names: Vec<&str> = filters
        .as_seq()
        .unwrap()
        .iter()
        .map(|f| f.get("name").and_then(Node::as_str).unwrap())
        .collect();
    assert_eq!(names, ["shuffle", "deflate"]);
    // deflated in HDF5, zlib in ASDF; not deflated, not compressed
    let label = |p: &str| {
        let node = file.get(p).unwrap();
        let i = node
            .get("source")
            .and_then(|s| s.as_int())
            .and_then(|i| i.as_i128())
            .unwrap();
        file.blocks()[i as usize].compression_label()
    };
    assert_eq!(label("/gzip_shuffle"), Some(*b"zlib"));
    assert_eq!(label("/contiguous"), None);
}

#[test]
fn a_broken_hdf5_file_is_an_error_naming_it() {
    let dir = common::Scratch::new("bad");
    let bytes = std::fs::read(data().join("numeric.h5")).unwrap();
    for cut in [0, 8, 100, 1000, bytes.len() / 2, bytes.len() - 1] {
        let input = dir.join(format!("cut{cut}.h5"));
        std::fs::write(&input, &bytes[..cut]).unwrap();
        let out = dir.join("out.asdf");
        // every cut loses something the file needs (its last byte is data): a read error
        // naming the file or the object, never a converted file
        match to_asdf(&input, &out, &ToAsdfOptions::default()) {
            Ok(_) => panic!("cut at {cut} converted"),
            Err(asdf_hdf5::Hdf5Error::Read { path, message }) => {
                assert!(
                    path.starts_with('/') || path.contains("cut"),
                    "{path}: {message}"
                );
                assert!(!message.is_empty());
            }
            Err(e) => panic!("cut at {cut}: not a read error: {e:?}"),
        }
        assert!(!out.exists(), "no output for a failed conversion");
    }
}

#[test]
fn soft_and_external_links_become_refs_in_both_group_formats() {
    let dir = common::Scratch::new("refs");
    for name in ["links_earliest", "links_latest"] {
        let file = convert(name, &dir);
        let r = |p: &str| {
            file.get(&format!("{p}/$ref"))
                .and_then(Node::as_str)
                .map(str::to_string)
        };
        assert_eq!(r("/soft").as_deref(), Some("#/target"), "{name}");
        assert_eq!(r("/dangling").as_deref(), Some("#/nowhere"), "{name}");
        assert_eq!(
            r("/external").as_deref(),
            Some("strings.h5#/vlen_utf8"),
            "{name}"
        );
        // the soft link's target is still an array of its own
        assert_eq!(
            file.array::<i64>("/target")
                .unwrap()
                .into_raw_vec_and_offset()
                .0,
            [3, 1, 4]
        );
        // 20 members of one group and 20 attributes of one dataset (dense storage in the
        // latest format)
        assert_eq!(
            file.get("/many_members")
                .and_then(Node::as_map)
                .map(<[_]>::len),
            Some(20)
        );
        let attrs = file
            .get(&format!("/{META_KEY}/attrs/~1many_attrs"))
            .unwrap();
        assert_eq!(attrs.as_map().map(<[_]>::len), Some(20));
        assert_eq!(
            attrs
                .get("a19")
                .and_then(|n| n.as_int())
                .and_then(|i| i.as_i128()),
            Some(361)
        );
    }
}

#[test]
fn ten_thousand_small_datasets() {
    use std::io::Read;
    // generate.py: d = arange(4) + i at g{i // 100:03}/d{i % 100:02}, gzipped
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data().join("many.h5.gz")).unwrap())
        .read_to_end(&mut raw)
        .unwrap();
    let asdf = asdf_hdf5::to_asdf_bytes(&raw, &ToAsdfOptions::default()).unwrap();
    let file = AsdfFile::from_bytes(asdf).unwrap();
    assert_eq!(file.blocks().len(), 10_000);
    for i in [0usize, 1, 99, 100, 4567, 9999] {
        let p = format!("/g{:03}/d{:02}", i / 100, i % 100);
        let a = file.array::<i32>(&p).unwrap().into_raw_vec_and_offset().0;
        let want: Vec<i32> = (0..4).map(|k| k + i as i32).collect();
        assert_eq!(a, want, "{p}");
    }
}

#[test]
fn progress_hears_of_every_dataset_read() {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    use std::sync::Arc;
    let dir = common::Scratch::new("progress");
    let calls = Arc::new(AtomicUsize::new(0));
    let bytes = Arc::new(AtomicU64::new(0));
    let (c, b) = (calls.clone(), bytes.clone());
    let opts = ToAsdfOptions {
        progress: Some(asdf_hdf5::Progress::new(move |done, _total| {
            c.fetch_add(1, Ordering::Relaxed);
            b.store(done, Ordering::Relaxed);
        })),
        ..ToAsdfOptions::default()
    };
    let out = dir.join("cube.asdf");
    let s = to_asdf(&data().join("numeric.h5"), &out, &opts).unwrap();
    // every array dataset is reported once; the bytes are those of the arrays read
    let file = AsdfFile::open(&out).unwrap();
    let arrays = file.arrays().len();
    assert_eq!(calls.load(Ordering::Relaxed), arrays);
    assert_eq!(s.datasets, arrays);
    let total: u64 = file
        .arrays()
        .iter()
        .map(|(p, _)| file.dyn_array(p).unwrap().data.len() as u64)
        .sum();
    assert_eq!(bytes.load(Ordering::Relaxed), total);
}

/// Files of other writers (`tests/data/other_writers/README.md`: netCDF-C, h5py with
/// hdf5plugin's LZ4, old and new HDF5 layouts), vendored as they are: every dataset and
/// attribute converts to what h5py reads from it (`NAME.expect.json`, written by
/// generate.py), netCDF's dimension lists and reference lists (sequences of references,
/// compounds holding one) included, in the tree form; an attribute with no form would be
/// left out and listed under `_hdf5/left_out`.
#[test]
fn files_of_other_writers_convert_to_what_h5py_reads() {
    let dir = common::Scratch::new("other-writers");
    let folder = data().join("other_writers");
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".h5") || n.ends_with(".nc"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 23, "{names:?}");
    let (mut problems, mut checked, mut left) = (Vec::new(), 0, 0);
    for name in &names {
        let out = dir.join(format!("{name}.asdf"));
        to_asdf(&folder.join(name), &out, &ToAsdfOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let file = AsdfFile::open(&out).unwrap();
        let want: Json = serde_json::from_str(
            &std::fs::read_to_string(folder.join(format!("{name}.expect.json"))).unwrap(),
        )
        .unwrap();
        let listed: Vec<String> = file
            .get(&format!("/{META_KEY}/left_out"))
            .and_then(|n| n.as_map())
            .map(|m| {
                m.iter()
                    .filter_map(|(k, _)| k.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let mut want_left = Vec::new();
        for (p, w) in want["datasets"].as_object().unwrap() {
            let at = format!("{name}:{p}");
            let Some(node) = file.get(p) else {
                problems.push(format!("{at}: missing"));
                continue;
            };
            let hint = file
                .get(&format!("/{META_KEY}/scalar_datasets/{}", key(p)))
                .and_then(Node::as_str);
            problems.extend(check(&file, node, &at, w, hint));
            checked += 1;
        }
        for (p, attrs) in want["attrs"].as_object().unwrap() {
            for (a, w) in attrs.as_object().unwrap() {
                let at = format!("{name}:{p}@{a}");
                if w.get("no_form").is_some() {
                    want_left.push(format!("{p}@{a}"));
                    continue;
                }
                let pointer = format!("/{META_KEY}/attrs/{}/{}", key(p), key(a));
                let Some(node) = file.get(&pointer) else {
                    problems.push(format!("{at}: missing at {pointer}"));
                    continue;
                };
                problems.extend(check(&file, node, &at, w, None));
                checked += 1;
            }
        }
        let (mut l, mut w) = (listed.clone(), want_left.clone());
        l.sort();
        w.sort();
        if l != w {
            problems.push(format!("{name}: left out {l:?}, want {w:?}"));
        }
        left += listed.len();
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked > 100, "values checked: {checked}");
    // netCDF's dimension lists (sequences of references) and reference lists (compounds
    // holding a reference) convert to the tree form, checked above
    assert_eq!(left, 0, "left out");
}
