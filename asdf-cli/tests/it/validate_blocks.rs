//! `asdftool validate` on ASDF Standard 1.7.0 files and on arrays whose block is too small
//! (issue 31 items 5 and 2): a file python asdf wrote, then one of its block headers patched
//! so that the block no longer holds the array the tree describes. Python asdf 6.0.0 opens
//! such a file and fails only when the array is read; asdftool calls it invalid.

use crate::common;
use crate::tool;

use std::path::PathBuf;

use tool::{asdftool, stderr, stdout};

/// `tests/data/standard-1.7.0/arrays.asdf`, written by python asdf 6.0.0 with
/// `version="1.7.0"` (its generate.py): block 0 `image` (4x6 float64, raw, 192 bytes),
/// block 2 `counts` (100 uint16, zlib, 200 bytes decoded), and five more.
fn arrays_file() -> Option<PathBuf> {
    asdf_test_data::require("standard-1.7.0/arrays.asdf")
}

/// File offsets of the block headers (their magic), following each block's allocated size
/// from the first magic after the tree.
fn block_offsets(bytes: &[u8]) -> Vec<usize> {
    let tree_end = bytes
        .windows(5)
        .position(|w| w == b"\n...\n")
        .expect("tree end")
        + 5;
    let mut pos = tree_end
        + bytes[tree_end..]
            .windows(4)
            .position(|w| w == b"\xd3BLK")
            .expect("a block");
    let mut out = Vec::new();
    while bytes.get(pos..pos + 4) == Some(b"\xd3BLK") {
        out.push(pos);
        let header_size = u16::from_be_bytes([bytes[pos + 4], bytes[pos + 5]]) as usize;
        let allocated = u64::from_be_bytes(bytes[pos + 14..pos + 22].try_into().unwrap());
        pos += 6 + header_size + allocated as usize;
    }
    out
}

/// Sets the header field at `field` (14 allocated, 22 used, 30 data size: big-endian u64
/// at that distance from the magic) of the block whose header is at `at`.
fn set_size(bytes: &mut [u8], at: usize, field: usize, value: u64) {
    bytes[at + field..at + field + 8].copy_from_slice(&value.to_be_bytes());
}

fn size(bytes: &[u8], at: usize, field: usize) -> u64 {
    u64::from_be_bytes(bytes[at + field..at + field + 8].try_into().unwrap())
}

#[test]
fn a_python_1_7_0_file_is_valid() {
    let Some(f) = arrays_file() else {
        return;
    };
    let out = asdftool(&["validate", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(": valid (ASDF Standard 1.7.0, 7 block checksums verified)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_raw_block_shorter_than_its_array_is_reported() {
    let Some(f) = arrays_file() else {
        return;
    };
    let mut bytes = std::fs::read(&f).unwrap();
    let blocks = block_offsets(&bytes);
    assert_eq!(blocks.len(), 7);
    let b0 = blocks[0];
    assert_eq!(size(&bytes, b0, 30), 192, "block 0 is image's 4x6 float64");
    // Block 0 now says it uses (and decodes to) 184 bytes of its 192 allocated: a header the
    // layout accepts, too short for the 4x6 float64 image by one element.
    set_size(&mut bytes, b0, 22, 184);
    set_size(&mut bytes, b0, 30, 184);
    let scratch = common::Scratch::new("validate_blocks_raw");
    let patched = scratch.join("short_raw.asdf");
    std::fs::write(&patched, &bytes).unwrap();

    let out = asdftool(&["validate", patched.to_str().unwrap(), "--no-checksums"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "asdftool: {}: 1 problem found\n\
             /image: source: block 0 holds 184 bytes, the array needs 192 \
             (offset, shape, strides and datatype)\n",
            patched.display()
        )
    );
    // With the checksums verified (the default), the MD5 over 184 bytes fails as well.
    let out = asdftool(&["validate", patched.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains(": 2 problems found\n"), "{err}");
    assert!(
        err.contains("/image: source: block 0 holds 184 bytes"),
        "{err}"
    );
    // And reading the array fails, which is what the report foretells.
    let npy = scratch.join("image.npy");
    let read = asdftool(&[
        "extract",
        patched.to_str().unwrap(),
        "/image",
        "-o",
        npy.to_str().unwrap(),
    ]);
    assert_eq!(read.status.code(), Some(2), "{}", stdout(&read));
    assert!(!npy.exists());
}

#[test]
fn a_compressed_block_is_measured_by_its_header_without_decompressing() {
    let Some(f) = arrays_file() else {
        return;
    };
    let mut bytes = std::fs::read(&f).unwrap();
    let b2 = block_offsets(&bytes)[2];
    assert_eq!(&bytes[b2 + 10..b2 + 14], b"zlib", "block 2 is counts, zlib");
    assert_eq!(size(&bytes, b2, 30), 200);
    // The decoded size says 100 bytes: the stored (zlib) bytes and their MD5 are untouched,
    // so the only problem is that 100 uint16 need 200 bytes. (Decoding would fail too: zlib
    // gives 200 bytes where the header promises 100.)
    set_size(&mut bytes, b2, 30, 100);
    let scratch = common::Scratch::new("validate_blocks_zlib");
    let patched = scratch.join("short_zlib.asdf");
    std::fs::write(&patched, &bytes).unwrap();
    let out = asdftool(&["validate", patched.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "asdftool: {}: 1 problem found\n\
             /counts: source: block 2 holds 100 bytes, the array needs 200 \
             (offset, shape, strides and datatype)\n",
            patched.display()
        )
    );
}

/// What asdftool reads from python's 1.7.0 files is what python reads: `asdftool canonical`
/// against the sidecars tests/oracle/canonical.py made (generate.py).
#[test]
fn python_1_7_0_files_read_as_python_reads_them() {
    for name in ["arrays", "inline"] {
        let Some(f) = asdf_test_data::require(&format!("standard-1.7.0/{name}.asdf")) else {
            return;
        };
        let out = asdftool(&["canonical", f.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let actual = common::parse_json(&stdout(&out)).expect("canonical output is json");
        let sidecar = f.with_extension("expect.json");
        let expected =
            common::parse_json(&std::fs::read_to_string(sidecar).unwrap()).expect("sidecar json");
        let diffs = common::compare(&expected, &actual, &[]);
        assert!(diffs.is_empty(), "{name}:\n{}", diffs.join("\n"));
    }
}

/// Every file a rewriting command writes reads back, in asdftool (`validate`, and the same
/// canonical JSON as its input, history aside) and in python asdf (left for
/// tests/oracle/check_written.py under `ASDF_WRITE_OUT`): `defragment` (to 1.6.0 with
/// `--standard 1.6.0`, else the input's 1.7.0), `to-yaml`, `explode` then `implode`, and
/// `extract` to `.asdf`, from python's 1.7.0 file. (`defragment` and `convert` are also covered by the
/// crash harness, whose states python reads; `edit` needs an editor.)
#[test]
fn rewritten_files_read_back() {
    let Some(f) = arrays_file() else {
        return;
    };
    let scratch = common::Scratch::new("validate_blocks_rewrite");
    let canonical = |p: &std::path::Path| {
        let out = asdftool(&["canonical", p.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            p.display(),
            stderr(&out)
        );
        stdout(&out)
    };
    let tree_of = |p: &std::path::Path| {
        let mut v = common::parse_json(&canonical(p)).unwrap();
        // the tree: the writer records itself in asdf_library and history
        let mut tree = v["tree"]["value"].take();
        let map = tree.as_object_mut().unwrap();
        map.remove("asdf_library");
        map.remove("history");
        tree
    };
    let original = tree_of(&f);
    let run = |args: &[&str]| {
        let out = asdftool(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    };
    let s = |p: &std::path::Path| p.to_str().unwrap().to_owned();
    let d16 = scratch.join("defrag16.asdf");
    let d17 = scratch.join("defrag17.asdf");
    let yaml = scratch.join("yaml.asdf");
    let exploded = scratch.join("exploded.asdf");
    let imploded = scratch.join("imploded.asdf");
    let extracted = scratch.join("extracted.asdf");
    run(&["defragment", &s(&f), "-o", &s(&d16), "--standard", "1.6.0"]);
    run(&["defragment", &s(&f), "-o", &s(&d17), "-c", "zstd"]);
    run(&["to-yaml", &s(&f), "-o", &s(&yaml)]);
    run(&["explode", &s(&f), "-o", &s(&exploded)]);
    run(&["implode", &s(&exploded), "-o", &s(&imploded)]);
    run(&["extract", &s(&f), "/records", "-o", &s(&extracted)]);
    for (p, standard) in [
        (&d16, "1.6.0"),
        (&d17, "1.7.0"),
        (&yaml, "1.7.0"),
        (&exploded, "1.7.0"),
        (&imploded, "1.7.0"),
        (&extracted, "1.7.0"),
    ] {
        let out = asdftool(&["validate", &s(p)]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            stdout(&out).contains(&format!("valid (ASDF Standard {standard}")),
            "{}",
            stdout(&out)
        );
        let text = std::fs::read(p).unwrap();
        assert!(text.starts_with(format!("#ASDF 1.0.0\n#ASDF_STANDARD {standard}\n").as_bytes()));
        // (inline arrays are written in native byte order, so to-yaml's differ in dtype)
        // The 1.6.0 rewrite differs in the two core/integer tags only: they take 1.6.0's
        // version (1.1.0), as the ndarray tags do.
        if p != &extracted && p != &yaml {
            let diffs = common::compare(&original, &tree_of(p), &[]);
            let want: Vec<String> = if p == &d16 {
                ["big", "neg"]
                    .iter()
                    .map(|k| {
                        format!(
                            "/{k}/$tag: \"tag:stsci.edu:asdf/core/integer-1.2.0\" != \
                             \"tag:stsci.edu:asdf/core/integer-1.1.0\""
                        )
                    })
                    .collect()
            } else {
                Vec::new()
            };
            assert_eq!(diffs, want, "{}", p.display());
        }
        // Not the 1.6.0 rewrite: it keeps the input's core-1.7.0 history entry, which python
        // asdf reads with a warning (extension not installed).
        if p != &d16 {
            let name = p.file_stem().unwrap().to_str().unwrap();
            asdf_test_data::leave_for_oracle(&format!("cli_rewrite_{name}"), p, |p| canonical(p));
        }
    }
    // the exploded file's block files, beside it for the oracle too (python reads them
    // through the tree's relative `source`s)
    if let Some(out) = asdf_test_data::write_out_dir() {
        let mut n = 0;
        for entry in std::fs::read_dir(&*scratch).unwrap() {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap().to_str().unwrap().to_owned();
            if name.starts_with("exploded") && name != "exploded.asdf" {
                std::fs::copy(&p, out.join(&name)).unwrap();
                n += 1;
            }
        }
        assert_eq!(n, 7, "block files of the exploded file");
    }
    // 1.7.0 tags in the 1.7.0 output only
    let d17_text = String::from_utf8_lossy(&std::fs::read(&d17).unwrap()).into_owned();
    assert!(d17_text.contains("!core/ndarray-1.2.0"), "{d17_text}");
    let d16_text = String::from_utf8_lossy(&std::fs::read(&d16).unwrap()).into_owned();
    assert!(!d16_text.contains("ndarray-1.2.0"), "{d16_text}");
    // a version asdftool does not write is refused, naming the ones it does
    let out = asdftool(&[
        "defragment",
        &s(&f),
        "-o",
        &s(&scratch.join("x.asdf")),
        "--standard",
        "1.8.0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--standard 1.8.0: not an ASDF Standard version asdftool writes (1.0.0, 1.1.0, 1.2.0, 1.3.0, 1.4.0, 1.5.0, 1.6.0, 1.7.0)"), "{}", stderr(&out));
}

/// libasdf's `ndarray-out.asdf` (tests/data/libasdf, HAND_WRITTEN.md: "an array larger than
/// its block"): python asdf 6.0.0 opens it as valid (tests/oracle/validation-verdicts.json)
/// and then fails to read `/data` ("strides is incompatible with shape of requested array
/// and size of buffer"); asdftool says why before anything is read. 5x5 int8 at offset 256
/// with strides [-1, 1] reaches byte 256 + 4 + 4 + 1 = 261 of a 25-byte block.
#[test]
fn libasdfs_array_larger_than_its_block_is_reported() {
    let Some(f) = asdf_test_data::require("libasdf/ndarray-out.asdf") else {
        return;
    };
    let out = asdftool(&["validate", f.to_str().unwrap(), "--no-checksums"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "asdftool: {}: 1 problem found\n\
             /data: source: block 0 holds 25 bytes, the array needs 261 \
             (offset, shape, strides and datatype)\n",
            f.display()
        )
    );
}
