//! `asdftool` on ASDF 0.1.0 files (tests/data/legacy-0.1.0): `info` and `canonical` read
//! them, `defragment` and `to-yaml` write them in the current standard.

use crate::common;
use crate::tool;

use tool::{asdftool, ok};

use std::path::{Path, PathBuf};

fn legacy(rel: &str) -> Option<PathBuf> {
    asdf_test_data::require(&format!("legacy-0.1.0/{rel}"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The `$ndarray` of `/data` in canonical JSON (dtype without byte order, shape, sha256).
fn data_array(canonical: &str) -> serde_json::Value {
    let v = common::parse_json(canonical).unwrap();
    let mut nd = v["tree"]["value"]["data"]["$ndarray"].clone();
    assert!(nd.is_object(), "{canonical}");
    let dt = nd["dtype"].as_str().unwrap().trim_start_matches(['<', '>']);
    nd["dtype"] = serde_json::Value::String(dt.to_string());
    nd
}

#[test]
fn info_and_canonical_read_every_layout() {
    for (snapshot, header_size) in [
        ("2015-01-07-b453313", "header_size=36 flags=0x2"),
        (
            "2015-03-09-b85b73e",
            "header_size=40 flags=0x0 compression=zlib",
        ),
    ] {
        let Some(asdf) = legacy(&format!("{snapshot}/compressed.asdf")) else {
            return;
        };
        let info = ok(&asdftool(&["info", s(&asdf), "--blocks"]));
        let layout = if snapshot.starts_with("2015-01") {
            "md5=none (asdf 0.1.0 36-byte header, data starts with an encoding chain)"
        } else {
            "md5=none (asdf 0.1.0 40-byte header)"
        };
        for expected in [
            "(ASDF 0.1.0,",
            "data !core/ndarray-1.0.0 int64 (128), internal block 0",
            header_size,
            layout,
        ] {
            assert!(info.contains(expected), "missing {expected:?} in:\n{info}");
        }
        let twin = asdf.with_extension("yaml");
        let a = ok(&asdftool(&["canonical", s(&asdf)]));
        let y = ok(&asdftool(&["canonical", s(&twin)]));
        assert_eq!(data_array(&a), data_array(&y), "{snapshot}");
    }
    let Some(old) = legacy("2014-10-16-0dc34b0/basic.asdf") else {
        return;
    };
    let info = ok(&asdftool(&["info", s(&old), "--blocks"]));
    assert!(
        info.contains("header_size=44 flags=0x0 compression=none allocated=64 used=64 data=64 md5=none (asdf 0.1.0 44-byte header)"),
        "{info}"
    );
}

#[test]
fn defragment_and_to_yaml_write_the_current_standard() {
    let Some(asdf) = legacy("2015-01-07-b453313/compressed.asdf") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("asdf-cli-legacy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let twin = ok(&asdftool(&["canonical", s(&asdf.with_extension("yaml"))]));
    for (cmd, out) in [("defragment", "d.asdf"), ("to-yaml", "y.asdf")] {
        let out = dir.join(out);
        ok(&asdftool(&[cmd, s(&asdf), "-o", s(&out)]));
        let bytes = std::fs::read(&out).unwrap();
        assert!(
            bytes.starts_with(b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n"),
            "{cmd}"
        );
        let v = ok(&asdftool(&["validate", s(&out)]));
        assert!(v.contains("valid"), "{cmd}: {v}");
        let c = ok(&asdftool(&["canonical", s(&out)]));
        assert_eq!(data_array(&c), data_array(&twin), "{cmd}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
