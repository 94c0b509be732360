//! The generator on the committed test schemas (tests/schemas): the committed output is what
//! it generates now, the output is rustfmt-clean, and every schema or property it cannot map
//! is named in a warning.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use asdf_codegen::{collect_sources, generate, Generated, Options, SchemaSource};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

fn sources() -> Vec<SchemaSource> {
    collect_sources(&[dir().join("schemas")]).expect("the test schemas are readable")
}

fn run(opts: &Options) -> Generated {
    generate(&sources(), opts).expect("the test schemas generate")
}

/// `rustfmt --check` on `code`: the problems it reports, `None` when clean.
fn rustfmt_problems(code: &str) -> Option<String> {
    let mut child = Command::new("rustfmt")
        .args(["--check", "--edition", "2021"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rustfmt runs (rustup component add rustfmt)");
    use std::io::Write as _;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(code.as_bytes())
        .expect("rustfmt reads the code");
    let out = child.wait_with_output().expect("rustfmt ends");
    if out.status.success() {
        None
    } else {
        Some(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[test]
fn the_committed_generated_file_is_up_to_date() {
    let out = run(&Options::default());
    let path = dir().join("generated/example.rs");
    if std::env::var_os("ASDF_CODEGEN_BLESS").is_some() {
        std::fs::write(&path, &out.code).expect("write the generated file");
    }
    let committed = std::fs::read_to_string(&path).expect("tests/generated/example.rs");
    assert!(
        committed == out.code,
        "tests/generated/example.rs differs from what the generator writes now \
         (ASDF_CODEGEN_BLESS=1 rewrites it)"
    );
}

#[test]
fn output_is_rustfmt_clean_in_every_mode() {
    for opts in [
        Options::default(),
        Options {
            all_versions: true,
            lazy_arrays: false,
        },
        Options {
            all_versions: false,
            lazy_arrays: true,
        },
    ] {
        let out = run(&opts);
        if let Some(problems) = rustfmt_problems(&out.code) {
            panic!("{opts:?}: rustfmt --check reports\n{problems}");
        }
    }
}

#[test]
fn every_unmapped_place_is_a_warning() {
    let out = run(&Options::default());
    let obs = "asdf://example.org/codegen/schemas/observation-1.1.0";
    let mut got: Vec<(String, String)> = out
        .warnings
        .iter()
        .map(|w| (w.schema.clone(), w.path.clone()))
        .collect();
    got.sort();
    let want = vec![
        (
            obs.to_string(),
            "/properties/label_or_count/oneOf".to_string(),
        ),
        (obs.to_string(), "/properties/missing".to_string()),
    ];
    assert_eq!(got, want, "{:#?}", out.warnings);
    let missing = out
        .warnings
        .iter()
        .find(|w| w.path == "/properties/missing")
        .expect("the warning of the missing schema");
    assert!(
        missing
            .message
            .contains("asdf://example.org/codegen/schemas/not_given-1.0.0"),
        "{missing}"
    );
    // 10 schema files in 9 families (observation twice), one manifest
    assert_eq!((out.schemas, out.manifests), (9, 1));
}

#[test]
fn names_versions_and_tags() {
    let code = run(&Options::default()).code;
    // the newest version, with its tag and the pattern of its major version
    assert!(code.contains(
        "#[asdf(\n    tag = \"asdf://example.org/codegen/tags/observation-1.1.0\",\n    \
         tag_pattern = \"asdf://example.org/codegen/tags/observation-1.*\"\n)]\npub struct Observation {"
    ));
    assert!(!code.contains("An older observation"));
    // two schemas named `exposure`: the longer path names the other
    assert!(code.contains("pub struct Exposure {"));
    assert!(code.contains("pub struct InstrumentExposure {"));
    // nested anonymous objects are named from their path
    assert!(code.contains("pub pointing: ObservationPointing,"));
    assert!(code.contains("pub meta: ObservationMeta,"));
    // every version, each in its module, refers to the exact version
    let all = run(&Options {
        all_versions: true,
        lazy_arrays: false,
    })
    .code;
    assert!(all.contains("pub mod v1_0_0 {"));
    assert!(all.contains("pub mod v1_1_0 {"));
    assert!(all.contains("    pub struct Observation {\n        pub target: String,"));
    assert!(all.contains("pub units: Option<super::v1_0_0::Units>,"));
}

#[test]
fn lazy_arrays_option() {
    let code = run(&Options {
        all_versions: false,
        lazy_arrays: true,
    })
    .code;
    assert!(code.contains("pub data: asdf_core::convert::LazyArray<f32, ndarray::Ix2>,"));
    assert!(code.contains("pub cube: Option<asdf_core::convert::LazyArray<i16, ndarray::IxDyn>>,"));
}

#[test]
fn unversioned_ids_relative_refs_and_a_root_all_of() {
    // JWST's datamodel schemas: ids ending in `.schema`, no version, relative `$ref`s, a
    // root that is an `allOf` of other schemas and an object (flat first: the shared
    // nested type is named from its own schema whichever is generated first)
    let core = SchemaSource::new(
        "core.schema.yaml",
        "id: http://example.org/dm/core.schema\n\
         type: object\n\
         properties:\n  meta:\n    type: object\n    properties:\n      \
         telescope: {type: string}\n",
    );
    let flat = SchemaSource::new(
        "flat.schema.yaml",
        "id: http://example.org/dm/flat.schema\n\
         allOf:\n\
         - $ref: core.schema\n\
         - type: object\n  properties:\n    data: {datatype: float32, ndim: 2}\n  \
         required: [data]\n",
    );
    let out = generate(&[flat, core], &Options::default()).expect("generates");
    assert!(out.warnings.is_empty(), "{:#?}", out.warnings);
    let code = out.code;
    assert!(
        code.contains("pub struct Core {\n    pub meta: Option<CoreMeta>,"),
        "{code}"
    );
    assert!(
        code.contains("pub struct Flat {\n    pub meta: Option<CoreMeta>,\n    pub data: ndarray::Array2<f32>,"),
        "{code}"
    );
    // the nested object merged in through the `$ref` is Core's own type, made once
    assert_eq!(code.matches("pub struct CoreMeta {").count(), 1, "{code}");
    assert!(!code.contains("FlatMeta"), "{code}");
    assert!(rustfmt_problems(&code).is_none());
}

#[test]
fn schemas_that_contain_themselves() {
    // a tree: a node's parent is a node (boxed), its children a list of nodes; a property
    // merging its own schema in through allOf cannot be a struct (a warning)
    let tree = SchemaSource::new(
        "node-1.0.0.yaml",
        "id: asdf://example.org/schemas/node-1.0.0\n\
         type: object\n\
         properties:\n  \
         parent: {$ref: '#'}\n  \
         children: {type: array, items: {$ref: '#'}}\n  \
         wrapped:\n    allOf:\n    - $ref: '#'\n",
    );
    let out = generate(&[tree], &Options::default()).expect("generates");
    let code = &out.code;
    assert!(code.contains("pub parent: Option<Box<Node>>,"), "{code}");
    assert!(code.contains("pub children: Option<Vec<Node>>,"), "{code}");
    assert_eq!(out.warnings.len(), 1, "{:#?}", out.warnings);
    assert_eq!(out.warnings[0].path, "/properties/wrapped");
    assert!(rustfmt_problems(code).is_none());
}
