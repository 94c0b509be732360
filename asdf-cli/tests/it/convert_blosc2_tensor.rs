//! `asdftool convert x.b2frame y.asdf` of python-blosc2's packed tensors: a plain super-chunk
//! has only a type size, but `pack_tensor`/`save_tensor` record the array's numpy datatype and
//! shape in the frame's vlmeta `__pack_tensor__`; the converted array has them, with the bytes
//! python-blosc2's `unpack_tensor` gives (asdf-blosc2/tests/data/generate_tensors.py wrote
//! the frames and, beside each, what python-blosc2 reads back). Without the record, a frame
//! of type size 4 is `uint32` (issue 31 item 8).

use std::path::{Path, PathBuf};
use std::process::Command;

use asdf_core::AsdfFile;

fn tensors() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../asdf-blosc2/tests/data/tensors")
}

fn convert(input: &Path, output: &Path) {
    let o = Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .arg("convert")
        .arg(input)
        .arg(output)
        .output()
        .expect("run asdftool");
    assert!(
        o.status.success(),
        "{}: {}",
        input.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn packed_tensors_keep_their_datatype_and_shape() {
    let dir = std::env::temp_dir().join(format!("asdf-cv-b2t-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut n = 0;
    let mut names: Vec<PathBuf> = std::fs::read_dir(tensors())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "b2frame"))
        .collect();
    names.sort();
    for input in names {
        let want: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(input.with_extension("json")).unwrap())
                .unwrap();
        let out = dir.join(input.with_extension("asdf").file_name().unwrap());
        convert(&input, &out);
        let f = AsdfFile::open(&out).unwrap();
        let a = f.dyn_array("/data").unwrap();
        let name = input.display();
        let shape: Vec<usize> = want["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(a.shape, shape, "{name}");
        assert_eq!(
            a.dtype.to_numpy_str(),
            want["dtype"].as_str().unwrap(),
            "{name}"
        );
        assert_eq!(hex(&a.data), want["hex"].as_str().unwrap(), "{name}");
        // the record itself is kept with the other vlmeta
        assert!(f.get("/blosc2_vlmeta/__pack_tensor__").is_some(), "{name}");
        n += 1;
    }
    assert_eq!(n, 5);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_plain_frame_without_the_record_is_unsigned_words_of_its_type_size() {
    // python-blosc2's SChunk of float64 bytes, typesize 8 (asdf-blosc2/tests/data/generate.py)
    let input = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../asdf-blosc2/tests/data/frames/schunk_f8.b2frame");
    let dir = std::env::temp_dir().join(format!("asdf-cv-b2p-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("plain.asdf");
    convert(&input, &out);
    let a = AsdfFile::open(&out).unwrap().dyn_array("/data").unwrap();
    assert_eq!(a.dtype.to_numpy_str(), "<u8");
    assert_eq!(a.data, std::fs::read(input.with_extension("bin")).unwrap());
    std::fs::remove_dir_all(&dir).ok();
}
