//! Read → write → read round trips over the reference files and the fixtures, for every
//! codec and storage mode: the canonical JSON of the written file equals that of the
//! original (ignoring `asdf_library` and `history`, which the writer replaces).
//!
//! With `ASDF_WRITE_OUT=DIR` every written file is also saved there as `NAME.asdf` with our
//! canonical reading beside it as `NAME.rust.json`, for `tests/oracle/check_written.py`
//! (python asdf opens each with checksums verified and warnings as errors).

use crate::common;

use std::path::{Path, PathBuf};

use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, StandardVersion, Storage, WriteOptions, Writer};
use asdf_core::AsdfFile;
use serde_json::Value;

const IGNORE: [&str; 2] = ["/tree/value/asdf_library", "/tree/value/history"];

/// `.asdf` files in the three corpora (112 reference files, 65 fixtures, 32 layouts).
const CORPUS_FILES: usize = 112 + 65 + 32;

/// Corpus files whose block bytes are damaged on purpose (by their name in `corpus()`): they
/// open, and reading their arrays with checksums verified fails.
const DAMAGED: &[&str] = &[
    "layouts_checksum_wrong_asdf",
    "layouts_checksum_wrong_zlib_asdf",
];

/// Corpus files whose tree does not validate (python asdf says so too:
/// `tests/oracle/validation-verdicts.json`): writing them is refused.
const INVALID: &[&str] = &["fixtures_defaults_invalid_1_1_0_asdf"];

/// Corpus files without a tree: nothing to write.
const TREELESS: &[&str] = &["layouts_blocks_no_tree_asdf", "layouts_header_only_asdf"];

/// Round trips `corpus_round_trips` runs: every other file, in every variant that applies.
const ROUND_TRIPS: usize = 1962;

/// Every `.asdf` file of the corpora, with a short name.
fn corpus() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    if let Some(dir) = asdf_test_data::require_dir(asdf_test_data::REFERENCE_FILES) {
        for f in common::files_with_suffix(&dir, &[".asdf"]) {
            let rel = f
                .strip_prefix(&dir)
                .unwrap_or(&f)
                .to_string_lossy()
                .to_string();
            out.push((format!("ref_{}", rel.replace(['/', '.'], "_")), f));
        }
    }
    for sub in ["fixtures", "layouts"] {
        let dir = common::data_dir(sub);
        for f in common::files_with_suffix(&dir, &[".asdf"]) {
            let rel = f
                .strip_prefix(&dir)
                .unwrap_or(&f)
                .to_string_lossy()
                .to_string();
            out.push((format!("{sub}_{}", rel.replace(['/', '.'], "_")), f));
        }
    }
    if let Ok(only) = std::env::var("ASDF_WRITE_ONLY") {
        out.retain(|(n, _)| n.contains(only.as_str()));
    }
    out
}

fn canonical(file: &AsdfFile) -> Result<Value, String> {
    let text =
        asdf_core::unstable::canonical::to_json(file).map_err(|e| asdf_core::display_chain(&e))?;
    common::parse_json(&text)
}

/// The part of a canonical document the round trip must keep: the root's content (its
/// tag may change with the standard version), without `asdf_library` and `history`.
fn content(doc: &Value, inline: bool) -> Value {
    let mut tree = doc.get("tree").cloned().unwrap_or(Value::Null);
    if let Some(v) = tree.get("value").filter(|_| tree.get("$tag").is_some()) {
        tree = v.clone();
    }
    if let Value::Object(m) = &mut tree {
        m.remove("asdf_library");
        m.remove("history");
    }
    if inline {
        native_dtypes(&mut tree);
    }
    tree
}

/// Inline arrays are read in native byte order: make `>` dtypes `<` (x86-64) to compare.
fn native_dtypes(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "dtype" {
                    swap_order(x);
                } else {
                    native_dtypes(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(native_dtypes),
        _ => {}
    }
}

fn swap_order(v: &mut Value) {
    match v {
        Value::String(s) if s.starts_with('>') => *s = format!("<{}", &s[1..]),
        Value::Array(a) => a.iter_mut().for_each(swap_order),
        _ => {}
    }
}

#[derive(Clone, Copy, Debug)]
struct Variant {
    name: &'static str,
    compression: CompressionChoice,
    storage: Storage,
}

fn variants() -> Vec<Variant> {
    let mut v = vec![
        Variant {
            name: "plain",
            compression: CompressionChoice::None,
            storage: Storage::Internal,
        },
        Variant {
            name: "input",
            compression: CompressionChoice::Input,
            storage: Storage::Internal,
        },
        Variant {
            name: "inline",
            compression: CompressionChoice::None,
            storage: Storage::Inline,
        },
        Variant {
            name: "inline10",
            compression: CompressionChoice::Codec(Compression::Zlib),
            storage: Storage::InlineUpTo(10),
        },
        Variant {
            name: "external",
            compression: CompressionChoice::None,
            storage: Storage::External,
        },
    ];
    for (name, c) in [
        ("zlib", Compression::Zlib),
        ("bzp2", Compression::Bzp2),
        ("lz4", Compression::Lz4),
        ("zstd", Compression::Zstd),
        ("lz4f", Compression::Lz4f),
        ("blsc", Compression::Blsc),
    ] {
        v.push(Variant {
            name,
            compression: CompressionChoice::Codec(c),
            storage: Storage::Internal,
        });
    }
    v
}

fn out_dir() -> Option<PathBuf> {
    std::env::var_os("ASDF_WRITE_OUT").map(PathBuf::from)
}

fn scratch_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("asdf-write-rt-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Sources whose trees python asdf 6 refuses to write (and reads only with a warning):
/// integer literals beyond [-(2^63 - 2), 2^63 - 1], float and null mapping keys.
const NOT_PYTHON_WRITABLE: &[&str] = &["layouts_big_ints_beyond_64_", "layouts_yaml11_quirks_"];

/// Writes `file` with `variant`, reads it back; returns the failure, if any.
fn round_trip(name: &str, file: &AsdfFile, variant: Variant, dir: &Path) -> Option<String> {
    let standard = file
        .header()
        .standard_version
        .as_deref()
        .and_then(|v| StandardVersion::parse(v).ok())
        .unwrap_or_default();
    let opts = WriteOptions::new()
        .standard(standard)
        .compression(variant.compression)
        .storage(variant.storage);
    let out_name = format!("{name}__{}", variant.name);
    // a source that python asdf itself would refuse to write (integer literals beyond
    // ±2^63, float or null mapping keys) is refused by our writer too; written without
    // validation, its content must still survive, but the file is kept out of the python
    // check (python reads such files only with a warning)
    let python_writable = NOT_PYTHON_WRITABLE.iter().all(|n| !name.starts_with(n));
    let scratch;
    let (opts, dir) = if python_writable {
        (opts, dir)
    } else {
        match Writer::from_file(file, opts.clone()).write_to_vec(file.tree()) {
            Err(asdf_core::write::WriteError::Invalid(_)) => {}
            other => {
                return Some(format!(
                    "{out_name}: expected a validation error, got {other:?}"
                ))
            }
        }
        scratch = scratch_dir();
        std::fs::create_dir_all(&scratch).unwrap();
        (opts.validate(false), scratch.as_path())
    };
    let writer = Writer::from_file(file, opts);
    let path = dir.join(format!("{out_name}.asdf"));
    if let Err(e) = writer.write_to_path(file.tree(), &path) {
        return Some(format!(
            "{out_name}: write: {}",
            asdf_core::display_chain(&e)
        ));
    }
    let back = match AsdfFile::options().verify_checksums(true).open(&path) {
        Ok(f) => f,
        Err(e) => {
            return Some(format!(
                "{out_name}: reopen: {}",
                asdf_core::display_chain(&e)
            ))
        }
    };
    let actual = match canonical(&back) {
        Ok(v) => v,
        Err(e) => return Some(format!("{out_name}: canonical: {e}")),
    };
    if let Err(e) = back.verify_checksums() {
        return Some(format!(
            "{out_name}: checksums: {}",
            asdf_core::display_chain(&e)
        ));
    }
    if out_dir().is_some() && python_writable {
        let text = asdf_core::unstable::canonical::to_json(&back).unwrap_or_default();
        std::fs::write(dir.join(format!("{out_name}.rust.json")), text).unwrap();
    }
    let expected = match canonical(file) {
        Ok(v) => v,
        Err(e) => return Some(format!("{out_name}: original canonical: {e}")),
    };
    let inline = matches!(variant.storage, Storage::Inline | Storage::InlineUpTo(_));
    let diffs = common::compare(
        &content(&expected, inline),
        &content(&actual, inline),
        &IGNORE,
    );
    if diffs.is_empty() {
        None
    } else {
        Some(format!(
            "{out_name}: {} difference(s):\n    {}",
            diffs.len(),
            diffs
                .iter()
                .take(10)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n    ")
        ))
    }
}

fn has_recursive(root: &asdf_core::Node) -> bool {
    let mut found = false;
    root.walk(|_, n| found |= matches!(n.value(), asdf_core::Value::Recursive(_)));
    found
}

#[test]
fn recursive_trees_round_trip_and_dangling_ones_are_errors() {
    let path = common::data_dir("fixtures").join("recursive.asdf");
    let file = AsdfFile::open(&path).unwrap();
    assert!(has_recursive(file.tree()));
    let bytes = Writer::from_file(&file, WriteOptions::default())
        .write_to_vec(file.tree())
        .unwrap();
    let back = AsdfFile::from_bytes(bytes).unwrap();
    assert!(has_recursive(back.tree()));
    let diffs = common::compare(
        &canonical(&file).unwrap(),
        &canonical(&back).unwrap(),
        &IGNORE,
    );
    assert!(diffs.is_empty(), "{diffs:?}");

    // A recursive alias whose anchor is on no enclosing node cannot be written.
    let dangling = asdf_core::Node::new(asdf_core::Value::Map(vec![(
        asdf_core::Node::str("x"),
        asdf_core::Node::new(asdf_core::Value::Recursive("nowhere".into())),
    )]));
    let err = Writer::new(WriteOptions::default())
        .write_to_vec(&dangling)
        .unwrap_err();
    assert!(
        matches!(
            &err,
            asdf_core::write::WriteError::Emit(asdf_core::yaml::EmitError::Recursive { name, .. })
                if name == "nowhere"
        ),
        "{err:?}"
    );
}

#[test]
fn corpus_round_trips() {
    let files = corpus();
    let only = std::env::var_os("ASDF_WRITE_ONLY").is_some();
    if !only {
        assert_eq!(files.len(), CORPUS_FILES, "files in the corpus");
    }
    let dir = out_dir().unwrap_or_else(scratch_dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, path) in &files {
        let file = AsdfFile::options()
            .verify_checksums(true)
            .open(path)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let base = name.as_str();
        if DAMAGED.contains(&base) {
            let err = canonical(&file).expect_err(name);
            assert!(err.contains("checksum mismatch"), "{name}: {err}");
            continue;
        }
        if INVALID.contains(&base) {
            let standard = file.header().standard_version.as_deref();
            let opts = WriteOptions::new().standard(
                standard
                    .and_then(|v| StandardVersion::parse(v).ok())
                    .unwrap_or_default(),
            );
            let err = Writer::from_file(&file, opts)
                .write_to_vec(file.tree())
                .expect_err(name);
            assert!(
                matches!(err, asdf_core::write::WriteError::Invalid(_)),
                "{name}: {err}"
            );
            continue;
        }
        if TREELESS.contains(&base) {
            // a file without a tree has nothing to write: its root is the empty core/asdf
            // mapping python asdf makes up
            assert_eq!(
                file.tree().as_map().map(<[_]>::len),
                Some(0),
                "{name}: has a tree"
            );
            continue;
        }
        if let Err(e) = canonical(&file) {
            panic!("{name}: canonical: {e}");
        }
        for v in variants() {
            // every codec gives the same tree; without blocks one variant says it all
            let codec_only = matches!(v.compression, CompressionChoice::Codec(_))
                && v.storage == Storage::Internal;
            if codec_only && file.blocks().is_empty() {
                continue;
            }
            checked += 1;
            if let Some(f) = round_trip(name, &file, v, &dir) {
                failures.push(f);
            }
        }
    }
    for f in &failures {
        eprintln!("FAIL {f}");
    }
    eprintln!("{checked} round trips, {} failed", failures.len());
    if !only {
        assert_eq!(checked, ROUND_TRIPS, "round trips run");
    }
    // the scratch directory holds the files kept out of the python check
    let _ = std::fs::remove_dir_all(scratch_dir());
    assert!(
        failures.is_empty(),
        "{} round trip(s) failed",
        failures.len()
    );
}
