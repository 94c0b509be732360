//! The code generated from the test schemas (tests/generated/example.rs, kept up to date by
//! tests/generate.rs) compiled for real: its types read a file written by hand to the
//! schemas, write it back, and pass `asdf_core::testing::assert_round_trip`.

#[allow(dead_code)]
mod generated {
    include!("generated/example.rs");
}

use asdf_core::convert::{Extra, OrderedMap};
use asdf_core::testing::assert_round_trip;
use asdf_core::{Node, Value};
use generated::*;
use ndarray::{arr2, ArrayD, IxDyn};
use num_complex::Complex;

fn key(k: &str, v: Node) -> (Node, Node) {
    (Node::str(k), v)
}

/// Every field set.
fn full() -> Observation {
    Observation {
        target: "M31".into(),
        exposure_count: Some(3),
        exposure_time: 30.5,
        dithered: Some(true),
        mode: Some(ObservationMode::GlobalMatch),
        pointing: ObservationPointing {
            ra: 10.68,
            dec: 41.27,
            frame: Some("icrs".into()),
        },
        keywords: Some(vec!["galaxy".into(), "andromeda".into()]),
        meta: ObservationMeta {
            origin: "STScI".into(),
            file_date: Some("2020-01-01".into()),
            program: "00001".into(),
            extra: Extra(vec![key("pipeline", Node::str("1.0"))]),
        },
        detector: Some(Detector {
            name: "WFI01".into(),
            temperature: Some(-95.0),
            extra: Extra::default(),
        }),
        guide: Some(ObservationGuide::GuideStar(GuideStar {
            catalog_id: "GS1".into(),
            extra: Extra::default(),
        })),
        sky_level: Some(0.25),
        label_or_count: Some(Node::int(7)),
        data: arr2(&[[1.0f32, 2.0], [3.0, 4.0]]),
        dq: Some(arr2(&[[0u32, 1], [2, 3]])),
        cube: Some(ArrayD::from_shape_vec(IxDyn(&[2, 1, 2]), vec![1i16, 2, 3, 4]).expect("shape")),
        any_array: None,
        exposure: Some(Node::tagged(
            "tag:stsci.edu:asdf/unit/quantity-1.2.0",
            Value::Map(vec![
                key("value", Node::new(Value::Float(30.5))),
                key("unit", Node::str("s")),
            ]),
        )),
        start_time: Some(Node::tagged(
            "tag:stsci.edu:asdf/time/time-1.2.0",
            Value::Str("2020-01-01T00:00:00.000".into()),
        )),
        gain: Some(Complex::new(1.5, -2.0)),
        wcs: None,
        kind: Some(ObservationExposureKind::Science),
        filter: Some(FilterName(FilterNameValue::F158)),
        software: Some(SoftwareVersion("1.2.3".into())),
        units: Some(Units::MJySr1),
        exposures: Some(Exposure {
            count: Some(4),
            extra: Extra::default(),
        }),
        instrument_exposure: Some(InstrumentExposure {
            start: Some(0.5),
            extra: Extra::default(),
        }),
        headers: Some(OrderedMap(vec![("TELESCOP".into(), "ROMAN".into())])),
        notes: Some(Node::str("anything at all")),
        missing: None,
        type_: Some("calibrated".into()),
        extra: Extra(vec![key("unknown_key", Node::str("kept"))]),
    }
}

#[test]
fn generated_types_round_trip() {
    assert_round_trip(&full());
    let mut minimal = full();
    minimal.sky_level = None;
    minimal.guide = Some(ObservationGuide::Detector(Detector {
        name: "WFI02".into(),
        temperature: None,
        extra: Extra::default(),
    }));
    minimal.extra = Extra::default();
    assert_round_trip(&minimal);
}

/// An ASDF file written by hand to the test schemas (inline arrays, an older tag of the
/// same major version, a null `sky_level`, keys no schema names).
const FILE: &str = r#"#ASDF 1.0.0
#ASDF_STANDARD 1.5.0
%YAML 1.1
%TAG ! tag:stsci.edu:asdf/
--- !core/asdf-1.1.0
obs: !<asdf://example.org/codegen/tags/observation-1.0.0>
  target: NGC 300
  exposure_time: 12
  mode: None
  pointing: {ra: 13.72, dec: -37.68}
  meta: {origin: hand, program: '00002', reviewer: me}
  guide: !<asdf://example.org/codegen/tags/detector-1.0.0> {name: WFI03}
  sky_level: null
  data: !core/ndarray-1.0.0
    data: [[1.5, 2.5, 3.5]]
    datatype: float32
    shape: [1, 3]
  filter: !<asdf://example.org/codegen/tags/filter_name-1.0.0> F062
  units: DN / s
  type: raw
  observer: somebody
...
"#;

fn scratch(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("asdf-codegen-{}-{name}", std::process::id()))
}

#[test]
fn reads_and_writes_a_file() {
    let input = scratch("in.asdf");
    std::fs::write(&input, FILE).expect("write the input");
    let obs: Observation =
        asdf_core::read(&input, "/obs").expect("the file reads as an Observation");
    assert_eq!(obs.target, "NGC 300");
    assert_eq!(obs.exposure_time, 12.0);
    assert_eq!(obs.mode, Some(ObservationMode::None));
    assert_eq!(obs.pointing.dec, -37.68);
    assert_eq!(obs.meta.program, "00002");
    assert_eq!(
        obs.meta.extra.get("reviewer").and_then(Node::as_str),
        Some("me")
    );
    assert!(matches!(&obs.guide, Some(ObservationGuide::Detector(d)) if d.name == "WFI03"));
    assert_eq!(obs.sky_level, None);
    assert_eq!(obs.data, arr2(&[[1.5f32, 2.5, 3.5]]));
    assert_eq!(obs.filter, Some(FilterName(FilterNameValue::F062)));
    assert_eq!(obs.units, Some(Units::DnS));
    assert_eq!(obs.type_.as_deref(), Some("raw"));
    assert_eq!(
        obs.extra.get("observer").and_then(Node::as_str),
        Some("somebody")
    );

    let output = scratch("out.asdf");
    asdf_core::write_at(&output, "/obs", &obs).expect("write it back");
    let file = asdf_core::AsdfFile::open(&output).expect("open what was written");
    let node = file.tree().get("obs").expect("/obs").clone();
    // written with the newest tag; a required nullable key stays, as null
    assert_eq!(
        node.tag(),
        Some("asdf://example.org/codegen/tags/observation-1.1.0")
    );
    assert!(node.get("sky_level").is_some_and(Node::is_null));
    assert_eq!(
        node.get("observer").and_then(Node::as_str),
        Some("somebody")
    );
    let back: Observation = file.read_as("/obs").expect("read back");
    assert_eq!(back, obs);
    let _ = std::fs::remove_file(input);
    let _ = std::fs::remove_file(output);
}

#[test]
fn a_tag_of_another_major_version_is_refused() {
    let input = scratch("v2.asdf");
    let text = FILE.replace("observation-1.0.0", "observation-2.0.0");
    std::fs::write(&input, text).expect("write the input");
    let err = asdf_core::read::<Observation>(&input, "/obs").expect_err("a 2.x tag is not read");
    let _ = std::fs::remove_file(input);
    assert!(err.to_string().contains("observation-2.0.0"), "{err}");
}
