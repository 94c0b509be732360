//! The writer's API: layout of the bytes written, options, storage modes, streaming,
//! in-place update.

use crate::common;

use std::borrow::Cow;
use std::path::PathBuf;

use asdf_core::array::{ByteOrder, DType, DynArray, Field, ScalarType};
use asdf_core::write::Compression;
use asdf_core::write::{
    update, update_with, ArrayOptions, CompressionChoice, StandardVersion, Storage, UpdateKind,
    UpdateMode, WriteArray, WriteOptions, Writer,
};
use asdf_core::{AsdfFile, Node, Value};
use md5::{Digest, Md5};
use ndarray::{arr1, arr2, Array1, ArrayD, IxDyn};
use num_complex::Complex;

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("asdf-write-api-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn dump(name: &str, bytes: &[u8]) {
    common::dump_for_oracle(&format!("api_{name}"), bytes);
}

fn text_of(bytes: &[u8]) -> String {
    let end = bytes
        .windows(4)
        .position(|w| w == b"\xd3BLK")
        .unwrap_or(bytes.len());
    String::from_utf8(bytes[..end].to_vec()).unwrap()
}

fn be_u64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b.try_into().unwrap())
}

#[test]
fn layout_header_tree_aligned_block_checksum_index() {
    let a = arr2(&[[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let mut w = Writer::new(WriteOptions::default());
    let n = w.add_array(&a);
    let root = Node::map(vec![("data", n)]);
    let bytes = w.write_to_vec(&root).unwrap();
    dump("layout", &bytes);
    let text = text_of(&bytes);
    assert!(text.starts_with(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nasdf_library: "
    ));
    let hist = text.find("\nhistory:").unwrap();
    let data = text.find("\ndata: !core/ndarray-1.1.0").unwrap();
    assert!(hist < data);
    assert!(text.contains("extension_uri: asdf://asdf-format.org/core/extensions/core-1.6.0"));
    assert!(text.contains(
        "data: !core/ndarray-1.1.0\n  source: 0\n  datatype: float64\n  byteorder: little\n  shape: [2, 3]\n"
    ));
    assert!(text.ends_with("...\n"));
    // the block
    let off = text.len();
    assert_eq!(&bytes[off..off + 4], b"\xd3BLK");
    let hs = u16::from_be_bytes([bytes[off + 4], bytes[off + 5]]) as usize;
    assert!(hs >= 48);
    let data_start = off + 6 + hs;
    assert_eq!(data_start % 64, 0, "block data aligned");
    assert_eq!(&bytes[off + 6..off + 10], &[0, 0, 0, 0], "flags");
    assert_eq!(&bytes[off + 10..off + 14], &[0, 0, 0, 0], "no compression");
    assert_eq!(be_u64(&bytes[off + 14..off + 22]), 48, "allocated");
    assert_eq!(be_u64(&bytes[off + 22..off + 30]), 48, "used");
    assert_eq!(be_u64(&bytes[off + 30..off + 38]), 48, "data");
    let raw: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
    let sum: [u8; 16] = Md5::digest(&raw).into();
    assert_eq!(&bytes[off + 38..off + 54], &sum);
    assert_eq!(&bytes[data_start..data_start + 48], &raw[..]);
    let tail = String::from_utf8(bytes[data_start + 48..].to_vec()).unwrap();
    assert_eq!(
        tail,
        format!("#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- {off}\n...\n")
    );
    let f = AsdfFile::from_bytes(bytes).unwrap();
    f.verify_checksums().unwrap();
    assert_eq!(f.array::<f64>("/data").unwrap(), a.into_dyn());
}

#[test]
fn shared_node_gives_one_block_and_an_alias() {
    let a = arr1(&[1i32, 2, 3]);
    let b = arr1(&[7u8]);
    let mut w = Writer::new(WriteOptions::default());
    let na = w.add_array(&a);
    let nb = w.add_array(&b);
    let root = Node::map(vec![
        ("x", na.clone()),
        ("y", na),
        ("z", Node::new(Value::Seq(vec![nb]))),
    ]);
    let bytes = w.write_to_vec(&root).unwrap();
    dump("shared", &bytes);
    let text = text_of(&bytes);
    assert!(text.contains("x: &id001 !core/ndarray-1.1.0"), "{text}");
    assert!(text.contains("y: *id001"), "{text}");
    let f = AsdfFile::from_bytes(bytes).unwrap();
    assert_eq!(f.blocks().len(), 2);
    assert!(f.get("/x").unwrap().ptr_eq(f.get("/y").unwrap()));
    assert_eq!(f.array::<i32>("/y").unwrap(), a.into_dyn());
    assert_eq!(f.array::<u8>("/z/0").unwrap(), b.into_dyn());
}

fn check_type<T>(values: Vec<T>, storage: Storage)
where
    T: asdf_core::array::Element + PartialEq + std::fmt::Debug,
{
    let a = Array1::from(values);
    let mut w = Writer::new(WriteOptions::default().storage(storage));
    let n = w.add_array(&a);
    let bytes = w.write_to_vec(&Node::map(vec![("a", n)])).unwrap();
    dump(
        &format!("type_{}_{storage:?}", std::any::type_name::<T>())
            .replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        &bytes,
    );
    let f = AsdfFile::from_bytes(bytes).unwrap();
    assert_eq!(f.array::<T>("/a").unwrap(), a.into_dyn(), "{storage:?}");
}

#[test]
fn every_element_type_round_trips_internal_and_inline() {
    for s in [Storage::Internal, Storage::Inline] {
        check_type(vec![i8::MIN, -1, 0, i8::MAX], s);
        check_type(vec![i16::MIN, -1, i16::MAX], s);
        check_type(vec![i32::MIN, i32::MAX], s);
        check_type(vec![i64::MIN, i64::MAX], s);
        check_type(vec![0u8, 255], s);
        check_type(vec![0u16, u16::MAX], s);
        check_type(vec![0u32, u32::MAX], s);
        check_type(vec![0u64, u64::MAX], s);
        check_type(
            vec![
                half::f16::from_f32(1.5),
                half::f16::MAX,
                half::f16::NEG_INFINITY,
            ],
            s,
        );
        check_type(vec![0.1f32, -0.0, f32::MAX, f32::MIN_POSITIVE], s);
        check_type(vec![0.1f64, -0.0, 1e300, f64::INFINITY, 5e-324], s);
        check_type(vec![Complex::new(1.0f32, -2.5), Complex::new(-0.0, 0.0)], s);
        check_type(
            vec![
                Complex::new(0.1f64, 1e-300),
                Complex::new(f64::NEG_INFINITY, 3.0),
            ],
            s,
        );
        check_type(vec![true, false, true], s);
    }
}

fn strings_and_records() -> (DynArray, DynArray, DynArray) {
    let ascii = DynArray {
        dtype: DType::scalar(ScalarType::Ascii(3), ByteOrder::Big),
        shape: vec![2],
        data: b"ab\0xyz".to_vec(),
    };
    let mut ucs = Vec::new();
    for c in ['é', '😀', '\0', 'a', 'b', 'c'] {
        ucs.extend_from_slice(&(c as u32).to_be_bytes());
    }
    let ucs4 = DynArray {
        dtype: DType::scalar(ScalarType::Ucs4(3), ByteOrder::Big),
        shape: vec![2],
        data: ucs,
    };
    let rec = DynArray {
        dtype: DType::Record(vec![
            Field {
                name: "id".into(),
                dtype: DType::scalar(ScalarType::Int32, ByteOrder::Big),
                shape: vec![],
            },
            Field {
                name: "x".into(),
                dtype: DType::scalar(ScalarType::Float64, ByteOrder::Little),
                shape: vec![],
            },
        ]),
        shape: vec![2],
        data: [
            &7i32.to_be_bytes()[..],
            &1.5f64.to_le_bytes(),
            &(-1i32).to_be_bytes(),
            &(-0.0f64).to_le_bytes(),
        ]
        .concat(),
    };
    (ascii, ucs4, rec)
}

#[test]
fn strings_and_records_round_trip_in_every_storage() {
    let (ascii, ucs4, rec) = strings_and_records();
    for storage in [Storage::Internal, Storage::Inline, Storage::InlineUpTo(1)] {
        let mut w = Writer::new(WriteOptions::default().storage(storage));
        let na = w.add_array(&ascii);
        let nu = w.add_array(&ucs4);
        let nr = w.add_array(&rec);
        let bytes = w
            .write_to_vec(&Node::map(vec![("a", na), ("u", nu), ("r", nr)]))
            .unwrap();
        dump(
            &format!("strings_records_{storage:?}").replace(['(', ')'], "_"),
            &bytes,
        );
        let f = AsdfFile::from_bytes(bytes).unwrap();
        let a = f.dyn_array("/a").unwrap();
        assert_eq!(
            a.strings().unwrap().into_raw_vec_and_offset().0,
            vec!["ab", "xyz"]
        );
        let u = f.dyn_array("/u").unwrap();
        assert_eq!(
            u.strings().unwrap().into_raw_vec_and_offset().0,
            vec!["é😀", "abc"]
        );
        let r = f.dyn_array("/r").unwrap();
        assert_eq!(
            r.field("id")
                .unwrap()
                .to_array::<i32>()
                .unwrap()
                .into_raw_vec_and_offset()
                .0,
            vec![7, -1]
        );
        let x = r
            .field("x")
            .unwrap()
            .to_array::<f64>()
            .unwrap()
            .into_raw_vec_and_offset()
            .0;
        assert_eq!(x[0], 1.5);
        assert!(x[1] == 0.0 && x[1].is_sign_negative());
        // two records of two fields cannot be read inline by python: they go to a block
        let inline = storage == Storage::Inline;
        assert_eq!(f.blocks().len(), if inline { 1 } else { 3 }, "{storage:?}");
        assert!(f.get("/r/source").is_some());
    }
}

#[test]
fn inline_complex_uses_the_complex_tag() {
    let a = arr1(&[Complex::new(1.0f64, 2.0), Complex::new(3.0, -4.0)]);
    let mut w = Writer::new(WriteOptions::default().storage(Storage::Inline));
    let n = w.add_array(&a);
    let text = String::from_utf8(w.write_to_vec(&Node::map(vec![("c", n)])).unwrap()).unwrap();
    // As python asdf 6.0.0 writes `np.array([1+2j, 3-4j])` inline.
    assert!(
        text.contains("data: [!core/complex-1.0.0 (1+2j), !core/complex-1.0.0 (3-4j)]"),
        "{text}"
    );
}

#[test]
fn zero_d_arrays_stay_in_blocks_even_inline() {
    let a = ArrayD::from_elem(IxDyn(&[]), 5i64);
    let mut w = Writer::new(WriteOptions::default().storage(Storage::Inline));
    let n = w.add_array(&a);
    let f = AsdfFile::from_bytes(w.write_to_vec(&Node::map(vec![("z", n)])).unwrap()).unwrap();
    assert_eq!(f.blocks().len(), 1);
    assert_eq!(f.array::<i64>("/z").unwrap(), a);
}

#[test]
fn standard_versions_choose_tags() {
    for v in StandardVersion::ALL {
        let a = arr1(&[1.0f32]);
        let mut w = Writer::new(WriteOptions::default().standard(v.clone()));
        let n = w.add_array(&a);
        let bytes = w.write_to_vec(&Node::map(vec![("a", n)])).unwrap();
        dump(
            &format!("standard_{}", v.as_str().replace('.', "_")),
            &bytes,
        );
        let text = text_of(&bytes);
        assert!(text.starts_with(&format!("#ASDF 1.0.0\n#ASDF_STANDARD {v}\n")));
        let root = if v < StandardVersion::V1_2_0 {
            "1.0.0"
        } else {
            "1.1.0"
        };
        assert!(text.contains(&format!("--- !core/asdf-{root}\n")), "{text}");
        let nd = if v < StandardVersion::V1_6_0 {
            "1.0.0"
        } else if v < StandardVersion::V1_7_0 {
            "1.1.0"
        } else {
            "1.2.0"
        };
        assert!(text.contains(&format!("a: !core/ndarray-{nd}\n")), "{text}");
        assert_eq!(text.contains("history:"), v >= StandardVersion::V1_2_0);
        let f = AsdfFile::from_bytes(bytes).unwrap();
        assert_eq!(f.header().standard_version.as_deref(), Some(v.as_str()));
        assert_eq!(f.array::<f32>("/a").unwrap(), a.into_dyn());
    }
}

#[test]
fn compression_overrides_checksums_index_and_padding() {
    let big: Array1<u16> = (0..10_000u16).map(|i| i % 7).collect();
    let small = arr1(&[1u8, 2, 3]);
    let opts = WriteOptions::default()
        .compression(CompressionChoice::Codec(Compression::Zstd))
        .checksums(false)
        .block_index(false)
        .pad_blocks(0.5);
    let mut w = Writer::new(opts);
    let nb = w.add_array(&big);
    let ns = w.add_array_with(
        &small,
        ArrayOptions {
            compression: Some(CompressionChoice::None),
            storage: None,
        },
    );
    let bytes = w
        .write_to_vec(&Node::map(vec![("b", nb), ("s", ns)]))
        .unwrap();
    dump("overrides", &bytes);
    assert!(!bytes.windows(17).any(|w| w == b"#ASDF BLOCK INDEX"));
    let f = AsdfFile::from_bytes(bytes).unwrap();
    let blocks = f.blocks();
    assert_eq!(blocks[0].compression_label(), Some(*b"zstd"));
    assert_eq!(blocks[1].compression_label(), None);
    assert!(blocks.iter().all(|b| b.checksum == [0; 16]));
    assert!(blocks[0].allocated_size >= blocks[0].used_size + blocks[0].used_size / 2);
    assert!(blocks[0].used_size < 20_000);
    assert_eq!(f.array::<u16>("/b").unwrap(), big.into_dyn());
    assert_eq!(f.array::<u8>("/s").unwrap(), small.into_dyn());
}

#[test]
fn every_codec_writes_what_the_reader_reads() {
    let a: Array1<f64> = (0..50_000).map(|i| (i as f64).sin()).collect();
    for c in Compression::ALL {
        let mut w = Writer::new(WriteOptions::default().compression(CompressionChoice::Codec(c)));
        let n = w.add_array(&a);
        let f = AsdfFile::from_bytes(w.write_to_vec(&Node::map(vec![("a", n)])).unwrap()).unwrap();
        f.verify_checksums().unwrap();
        assert_eq!(f.blocks()[0].compression_label(), Some(c.label()));
        assert_eq!(f.array::<f64>("/a").unwrap(), a.clone().into_dyn(), "{c}");
    }
}

#[test]
fn external_storage_writes_one_file_per_array() {
    let dir = tmpdir("ext");
    let path = dir.join("main.asdf");
    let a = arr1(&[1.0f64, 2.0]);
    let b = arr1(&[3i16]);
    let mut w = Writer::new(WriteOptions::default().storage(Storage::External));
    let na = w.add_array(&a);
    let nb = w.add_array(&b);
    let summary = w
        .write_to_path(&Node::map(vec![("a", na), ("b", nb)]), &path)
        .unwrap();
    assert_eq!(
        summary.external_files,
        vec![dir.join("main0000.asdf"), dir.join("main0001.asdf")]
    );
    let f = AsdfFile::open(&path).unwrap();
    assert!(f.blocks().is_empty());
    assert_eq!(f.get("/a/source").unwrap().as_str(), Some("main0000.asdf"));
    assert_eq!(f.array::<f64>("/a").unwrap(), a.clone().into_dyn());
    assert_eq!(f.array::<i16>("/b").unwrap(), b.clone().into_dyn());
    let ext = AsdfFile::open(dir.join("main0001.asdf")).unwrap();
    assert_eq!(ext.blocks().len(), 1);
    // without a path, external storage is refused
    assert!(w
        .write_to_vec(&Node::map(Vec::<(&str, Node)>::new()))
        .is_ok());
    let mut w2 = Writer::new(WriteOptions::default().storage(Storage::External));
    let n = w2.add_array(arr1(&[1u8]));
    assert!(matches!(
        w2.write_to_vec(&Node::map(vec![("x", n)])),
        Err(asdf_core::write::WriteError::ExternalNeedsPath)
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn streamed_rows_are_appended() {
    let mut w = Writer::new(WriteOptions::default());
    let fixed = w.add_array(arr1(&[9u8]));
    let s = w.stream(DType::scalar(ScalarType::Float32, ByteOrder::Little), &[2]);
    let root = Node::map(vec![("fixed", fixed), ("rows", s)]);
    let mut sw = w
        .write_stream(&root, std::io::Cursor::new(Vec::new()))
        .unwrap();
    sw.append(arr2(&[[1.0f32, 2.0], [3.0, 4.0]])).unwrap();
    sw.append_rows(&[0, 0, 0xa0, 0x40, 0, 0, 0xc0, 0x40])
        .unwrap();
    // a partial row is refused, and nothing of it is written
    let err = sw.append_rows(&[1, 2, 3]).unwrap_err().to_string();
    assert!(
        err.ends_with("3 bytes are not whole rows of 8 bytes"),
        "{err}"
    );
    assert_eq!(sw.rows(), 3);
    let bytes = sw.finish().unwrap().into_inner();
    dump("streamed", &bytes);
    let text = text_of(&bytes);
    assert!(text.contains("source: -1"), "{text}");
    assert!(text.contains("shape: ['*', 2]"), "{text}");
    assert!(!bytes.windows(17).any(|w| w == b"#ASDF BLOCK INDEX"));
    let f = AsdfFile::from_bytes(bytes).unwrap();
    assert!(f.blocks()[1].is_streamed());
    assert_eq!(
        f.array::<f32>("/rows").unwrap(),
        arr2(&[[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]]).into_dyn()
    );
    assert_eq!(f.array::<u8>("/fixed").unwrap(), arr1(&[9u8]).into_dyn());
}

#[test]
fn history_entries_are_added() {
    let mut w = Writer::new(WriteOptions::default());
    w.add_history_entry("made by a test");
    let bytes = w
        .write_to_vec(&Node::map(Vec::<(&str, Node)>::new()))
        .unwrap();
    dump("history", &bytes);
    let f = AsdfFile::from_bytes(bytes).unwrap();
    let e = f.get("/history/entries/0").unwrap();
    assert_eq!(e.tag(), Some("tag:stsci.edu:asdf/core/history_entry-1.0.0"));
    assert_eq!(
        e.get("description").unwrap().as_str(),
        Some("made by a test")
    );
}

#[test]
fn from_file_keeps_views_and_unknown_tags() {
    // a file with two views of one block and an unknown tag with its own handle
    let yaml = "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n%TAG !ex! asdf://example.org/tags/\n--- !core/asdf-1.1.0\n\
a: !core/ndarray-1.0.0 {source: 0, datatype: int16, byteorder: big, shape: [2]}\n\
b: !core/ndarray-1.0.0 {source: 0, datatype: int16, byteorder: big, shape: [2], offset: 2, strides: [4]}\n\
thing: !ex!detector-2.1.0 {name: x}\n...\n";
    let mut orig = yaml.as_bytes().to_vec();
    let data = [0u8, 1, 0, 2, 0, 3, 0, 4];
    orig.extend_from_slice(b"\xd3BLK\x00\x30");
    orig.extend_from_slice(&[0; 8]);
    orig.extend_from_slice(&8u64.to_be_bytes());
    orig.extend_from_slice(&8u64.to_be_bytes());
    orig.extend_from_slice(&8u64.to_be_bytes());
    orig.extend_from_slice(&[0; 16]);
    orig.extend_from_slice(&data);
    let file = AsdfFile::from_bytes(orig).unwrap();
    let w = Writer::from_file(
        &file,
        WriteOptions::default().standard(StandardVersion::V1_5_0),
    );
    let bytes = w.write_to_vec(file.tree()).unwrap();
    dump("views_unknown_tags", &bytes);
    let text = text_of(&bytes);
    assert!(
        text.contains("%TAG !ex! asdf://example.org/tags/"),
        "{text}"
    );
    assert!(text.contains("thing: !ex!detector-2.1.0"), "{text}");
    let back = AsdfFile::from_bytes(bytes).unwrap();
    assert_eq!(back.blocks().len(), 1, "both views share one block");
    assert_eq!(back.get("/b/offset").unwrap().as_i64(), Some(2));
    assert_eq!(
        back.array::<i16>("/a").unwrap(),
        arr1(&[1i16, 2]).into_dyn()
    );
    assert_eq!(
        back.array::<i16>("/b").unwrap(),
        arr1(&[2i16, 4]).into_dyn()
    );
}

#[test]
fn default_update_replaces_the_file_whole() {
    use std::os::unix::fs::MetadataExt;
    let dir = tmpdir("update-replace");
    let path = dir.join("u.asdf");
    let a: Array1<f64> = (0..1000).map(f64::from).collect();
    let mut w = Writer::new(WriteOptions::default().pad_tree(4096));
    let n = w.add_array(&a);
    w.write_to_path(&Node::map(vec![("a", n)]), &path).unwrap();
    let inode = std::fs::metadata(&path).unwrap().ino();
    // A reader holding the old file keeps seeing it whole after the update.
    let mut held = std::fs::File::open(&path).unwrap();
    let before = std::fs::read(&path).unwrap();

    let a_node = AsdfFile::open(&path).unwrap().get("/a").unwrap().clone();
    // The tree would fit in place (4096 spare bytes), yet the default replaces the file.
    let kind = update(
        &path,
        &Node::map(vec![("a", a_node), ("note", Node::str("new"))]),
        WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(kind, UpdateKind::Rewritten);
    assert_ne!(
        std::fs::metadata(&path).unwrap().ino(),
        inode,
        "a new file was renamed in"
    );
    let mut old = Vec::new();
    std::io::Read::read_to_end(&mut held, &mut old).unwrap();
    assert_eq!(old, before, "the old file is untouched");
    let f = AsdfFile::options()
        .verify_checksums(true)
        .open(&path)
        .unwrap();
    assert_eq!(f.get("/note").unwrap().as_str(), Some("new"));
    assert_eq!(f.array::<f64>("/a").unwrap(), a.into_dyn());
    f.verify_checksums().unwrap();
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["u.asdf"], "no temporary file or journal left");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn update_in_place_mode_writes_in_place_when_the_tree_fits_else_rewrites() {
    let dir = tmpdir("update");
    let path = dir.join("u.asdf");
    let a: Array1<f64> = (0..1000).map(f64::from).collect();
    let mut w = Writer::new(WriteOptions::default());
    let n = w.add_array(&a);
    w.write_to_path(
        &Node::map(vec![
            ("a", n),
            ("note", Node::str("a long note to shrink later")),
        ]),
        &path,
    )
    .unwrap();
    let before = std::fs::read(&path).unwrap();
    let first = AsdfFile::open(&path).unwrap().blocks()[0].offset as usize;

    // shorter tree: written in place, blocks untouched
    let file = AsdfFile::open(&path).unwrap();
    let a_node = file.get("/a").unwrap().clone();
    drop(file);
    let kind = update_with(
        &path,
        &Node::map(vec![("a", a_node.clone()), ("note", Node::str("short"))]),
        WriteOptions::default(),
        UpdateMode::InPlace,
    )
    .unwrap();
    assert_eq!(kind, UpdateKind::InPlace);
    let after = std::fs::read(&path).unwrap();
    assert_eq!(after.len(), before.len());
    assert_eq!(&after[first..], &before[first..]);
    let f = AsdfFile::open(&path).unwrap();
    assert_eq!(f.get("/note").unwrap().as_str(), Some("short"));
    assert_eq!(f.array::<f64>("/a").unwrap(), a.clone().into_dyn());
    f.verify_checksums().unwrap();
    drop(f);

    // longer tree: rewritten through a temporary file
    let long = "x".repeat(5000);
    let kind = update_with(
        &path,
        &Node::map(vec![("a", a_node), ("note", Node::str(long.clone()))]),
        WriteOptions::default(),
        UpdateMode::InPlace,
    )
    .unwrap();
    assert_eq!(kind, UpdateKind::Rewritten);
    let f = AsdfFile::open(&path).unwrap();
    assert_eq!(f.get("/note").unwrap().as_str(), Some(long.as_str()));
    assert_eq!(f.array::<f64>("/a").unwrap(), a.into_dyn());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn write_array_from_bytes_any_byte_order() {
    let data = [0x3f, 0xf0, 0, 0, 0, 0, 0, 0];
    let wa = WriteArray::from_bytes(
        DType::scalar(ScalarType::Float64, ByteOrder::Big),
        vec![1],
        Cow::Borrowed(&data[..]),
    )
    .unwrap();
    let mut w = Writer::new(WriteOptions::default());
    let n = w.add_array(wa);
    let bytes = w.write_to_vec(&Node::map(vec![("a", n)])).unwrap();
    assert!(text_of(&bytes).contains("byteorder: big"));
    let f = AsdfFile::from_bytes(bytes).unwrap();
    assert_eq!(f.array::<f64>("/a").unwrap(), arr1(&[1.0]).into_dyn());
}

#[test]
fn input_compression_copies_stored_bytes() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/fixtures");
    let dir = tmpdir("input");
    for name in ["codec_zlib.asdf", "codec_bzp2.asdf", "codec_lz4.asdf"] {
        let src = fixtures.join(name);
        let file = AsdfFile::open(&src).unwrap();
        let out = dir.join(name);
        Writer::from_file(
            &file,
            WriteOptions::default().compression(CompressionChoice::Input),
        )
        .write_to_path(file.tree(), &out)
        .unwrap();
        let back = AsdfFile::options()
            .verify_checksums(true)
            .open(&out)
            .unwrap();
        assert_eq!(back.blocks().len(), file.blocks().len());
        let a = std::fs::File::open(&src).unwrap();
        let b = std::fs::File::open(&out).unwrap();
        let mut compared = 0;
        for (p, node) in file.arrays() {
            let Some(i) = node.get("source").and_then(Node::as_i64) else {
                continue;
            };
            let j = back.get(&format!("{p}/source")).unwrap().as_i64().unwrap();
            let (x, y) = (&file.blocks()[i as usize], &back.blocks()[j as usize]);
            assert_eq!(x.compression_label(), y.compression_label());
            let sx = asdf_core::unstable::read_stored(&a, x).unwrap();
            let sy = asdf_core::unstable::read_stored(&b, y).unwrap();
            assert!(sx == sy, "{name} {p}: stored bytes not copied");
            compared += 1;
        }
        assert!(compared > 0);
        for (p, _) in file.arrays() {
            assert_eq!(
                file.dyn_array(&p).unwrap(),
                back.dyn_array(&p).unwrap(),
                "{name} {p}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tree_padding_lets_a_larger_tree_fit_in_place() {
    let dir = tmpdir("padtree");
    let path = dir.join("p.asdf");
    let a = arr1(&[1u32, 2, 3]);
    let mut w = Writer::new(WriteOptions::default().pad_tree(4096));
    let n = w.add_array(&a);
    w.write_to_path(&Node::map(vec![("a", n)]), &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let file = AsdfFile::open(&path).unwrap();
    let first = file.blocks()[0].offset as usize;
    let a_node = file.get("/a").unwrap().clone();
    drop(file);
    let note = "n".repeat(2000);
    let kind = update_with(
        &path,
        &Node::map(vec![("a", a_node), ("note", Node::str(note.clone()))]),
        WriteOptions::default(),
        UpdateMode::InPlace,
    )
    .unwrap();
    assert_eq!(kind, UpdateKind::InPlace);
    let after = std::fs::read(&path).unwrap();
    dump("padded_updated", &after);
    assert_eq!(&after[first..], &before[first..]);
    let f = AsdfFile::options()
        .verify_checksums(true)
        .open(&path)
        .unwrap();
    assert_eq!(f.get("/note").unwrap().as_str(), Some(note.as_str()));
    assert_eq!(f.array::<u32>("/a").unwrap(), a.into_dyn());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn interrupted_in_place_update_is_recovered_from_its_journal() {
    let dir = tmpdir("journal");
    let path = dir.join("j.asdf");
    let a = arr1(&[1u32, 2, 3]);
    let mut w = Writer::new(WriteOptions::default().pad_tree(4096));
    let n = w.add_array(&a);
    w.write_to_path(&Node::map(vec![("a", n), ("v", Node::str("old"))]), &path)
        .unwrap();
    let original = std::fs::read(&path).unwrap();
    let first = AsdfFile::open(&path).unwrap().blocks()[0].offset as usize;

    // A crash in the middle of the in-place write: the journal holds the old head, and the
    // file has half of a new head over the old one (its tree no longer parses).
    let journal = dir.join(".j.asdf.asdf-journal");
    std::fs::write(&journal, &original[..first]).unwrap();
    let mut torn = original.clone();
    for b in &mut torn[40..first / 2] {
        *b = b'#';
    }
    std::fs::write(&path, &torn).unwrap();
    // While the journal is there, readers see the old head: the file opens, old content.
    let old_canonical =
        asdf_core::unstable::canonical::to_json(&AsdfFile::from_bytes(original.clone()).unwrap())
            .unwrap();
    let seen = AsdfFile::open(&path).unwrap();
    assert_eq!(seen.get("/v").unwrap().as_str(), Some("old"));
    assert_eq!(
        asdf_core::unstable::canonical::to_json(&seen).unwrap(),
        old_canonical
    );
    drop(seen);
    // Without it, the torn head would not read.
    std::fs::rename(&journal, dir.join("aside")).unwrap();
    assert!(AsdfFile::open(&path)
        .and_then(|f| asdf_core::unstable::canonical::to_json(&f))
        .is_err());
    std::fs::rename(dir.join("aside"), &journal).unwrap();

    assert!(asdf_core::write::recover(&path).unwrap());
    assert_eq!(std::fs::read(&path).unwrap(), original);
    assert!(!journal.exists());
    assert!(
        !asdf_core::write::recover(&path).unwrap(),
        "nothing left to recover"
    );

    // A later update first recovers, then applies; it leaves no journal behind.
    std::fs::write(&journal, &original[..first]).unwrap();
    std::fs::write(&path, &torn).unwrap();
    let a_node = AsdfFile::from_bytes(original.clone())
        .unwrap()
        .get("/a")
        .unwrap()
        .clone();
    let kind = update_with(
        &path,
        &Node::map(vec![("a", a_node), ("v", Node::str("new"))]),
        WriteOptions::default(),
        UpdateMode::InPlace,
    )
    .unwrap();
    assert_eq!(kind, UpdateKind::InPlace);
    assert!(!journal.exists());
    let f = AsdfFile::options()
        .verify_checksums(true)
        .open(&path)
        .unwrap();
    assert_eq!(f.get("/v").unwrap().as_str(), Some("new"));
    assert_eq!(f.array::<u32>("/a").unwrap(), a.into_dyn());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn masked_arrays_in_blocks_and_inline() {
    let data = arr1(&[1i64, 2, 3]);
    let mask = arr1(&[true, false, true]);
    for storage in [Storage::Internal, Storage::Inline] {
        let mut w = Writer::new(WriteOptions::default().storage(storage));
        let n = w.add_masked_array(&data, &mask, ArrayOptions::default());
        let bytes = w.write_to_vec(&Node::map(vec![("m", n)])).unwrap();
        dump(&format!("masked_{storage:?}"), &bytes);
        let f = AsdfFile::from_bytes(bytes).unwrap();
        assert_eq!(f.array::<i64>("/m").unwrap(), data.clone().into_dyn());
        assert_eq!(f.array::<bool>("/m/mask").unwrap(), mask.clone().into_dyn());
        let blocks = if storage == Storage::Internal { 2 } else { 0 };
        assert_eq!(f.blocks().len(), blocks);
    }
    // a mask that is not bool8: the error's tree path is the typed path to the array, one
    // step per key or index (a key with `/` is one step, escaped when displayed)
    let mut w = Writer::new(WriteOptions::default());
    let n = w.add_masked_array(&data, arr1(&[1u8, 0, 1]), ArrayOptions::default());
    let in_list = Node::new(asdf_core::Value::Seq(vec![Node::map(vec![("m/x", n)])]));
    match w.write_to_vec(&Node::map(vec![("obs", in_list)])) {
        Err(asdf_core::write::WriteError::BadTree { path, message }) => {
            use asdf_core::yaml::PathSegment;
            assert_eq!(
                path.segments(),
                [
                    PathSegment::Key("obs".into()),
                    PathSegment::Index(0),
                    PathSegment::Key("m/x".into())
                ]
            );
            assert_eq!(path.to_string(), "/obs/0/m~1x");
            assert!(message.contains("mask must be bool8"), "{message}");
        }
        other => panic!("expected BadTree, got {other:?}"),
    }
}

#[test]
fn views_share_the_base_block() {
    use ndarray::s;
    let base = arr2(&[[1i32, 2, 3], [4, 5, 6]]);
    for storage in [Storage::Internal, Storage::Inline] {
        let mut w = Writer::new(WriteOptions::default());
        let nb = w.add_array_with(
            &base,
            ArrayOptions {
                compression: None,
                storage: Some(storage),
            },
        );
        // the second column, and the transposed array reversed along its first axis
        let col = w.add_view(&nb, 4, &[2], &[12]).unwrap();
        let rev = w.add_view(&nb, 8, &[3, 2], &[-4, 12]).unwrap();
        assert!(w.add_view(&nb, 16, &[2], &[12]).is_none(), "out of bounds");
        assert!(w.add_view(&nb, 0, &[2], &[]).is_none());
        let root = Node::map(vec![("base", nb), ("col", col), ("rev", rev)]);
        let r = w.write_to_vec(&root);
        if storage == Storage::Inline {
            assert!(matches!(
                r,
                Err(asdf_core::write::WriteError::BadTree { .. })
            ));
            continue;
        }
        let bytes = r.unwrap();
        dump("views", &bytes);
        let f = AsdfFile::from_bytes(bytes).unwrap();
        assert_eq!(f.blocks().len(), 1);
        assert_eq!(
            f.array::<i32>("/col").unwrap(),
            base.slice(s![.., 1]).to_owned().into_dyn()
        );
        let expected = base.t().slice(s![..;-1, ..]).to_owned().into_dyn();
        assert_eq!(f.array::<i32>("/rev").unwrap(), expected);
    }
}

/// The writer honours `propertyOrder` and `flowStyle` of a schema registered for a tag.
#[test]
fn schema_writing_hints_shape_the_yaml() {
    asdf_core::schema::register_schema(
        "asdf://example.org/schemas/ordered-1.0.0",
        "$schema: http://stsci.edu/schemas/yaml-schema/draft-01\n\
         id: asdf://example.org/schemas/ordered-1.0.0\n\
         type: object\n\
         propertyOrder: [zeta, alpha]\n\
         properties:\n  alpha: {flowStyle: flow}\n",
    )
    .unwrap();
    asdf_core::schema::register_tag(
        "asdf://example.org/tags/ordered-1.0.0",
        "asdf://example.org/schemas/ordered-1.0.0",
    );
    let thing = Node::tagged(
        "asdf://example.org/tags/ordered-1.0.0",
        Value::Map(vec![
            (
                Node::str("alpha"),
                Node::map([("x", Node::int(1)), ("y", Node::int(2))]),
            ),
            (Node::str("beta"), Node::int(3)),
            (Node::str("zeta"), Node::int(4)),
        ]),
    );
    let w = Writer::new(WriteOptions::default());
    let bytes = w.write_to_vec(&Node::map([("thing", thing)])).unwrap();
    dump("schema_hints", &bytes);
    let text = text_of(&bytes);
    let zeta = text.find("zeta:").unwrap();
    let alpha = text.find("alpha:").unwrap();
    let beta = text.find("beta:").unwrap();
    assert!(zeta < alpha && alpha < beta, "{text}");
    assert!(text.contains("alpha: {x: 1, y: 2}"), "{text}");
}

/// The stored bytes and the checksum of each block of the file at `path`.
fn stored_blocks(path: &std::path::Path) -> Vec<(Vec<u8>, [u8; 16])> {
    let bytes = std::fs::read(path).unwrap();
    let f = AsdfFile::open(path).unwrap();
    f.blocks()
        .iter()
        .map(|h| {
            let start = h.data_offset() as usize;
            (
                bytes[start..start + h.used_size as usize].to_vec(),
                h.checksum,
            )
        })
        .collect()
}

#[test]
fn update_copies_kept_blocks_verbatim_with_their_checksums() {
    let dir = tmpdir("update-copy");
    let path = dir.join("c.asdf");
    // large enough for every write path (pieces, hashing thread), with a compressed block
    let a: Array1<f64> = (0..(1 << 20)).map(|i| f64::from(i % 977)).collect();
    let b: Array1<i32> = (0..100_000).map(|i| i % 13).collect();
    let mut w = Writer::new(WriteOptions::default());
    let na = w.add_array(&a);
    let nb = w.add_array_with(
        &b,
        ArrayOptions {
            compression: Some(CompressionChoice::Codec(Compression::Zstd)),
            ..Default::default()
        },
    );
    w.write_to_path(&Node::map(vec![("a", na), ("b", nb)]), &path)
        .unwrap();
    // Damage one stored byte of the uncompressed block: its checksum no longer matches.
    let first = AsdfFile::open(&path).unwrap().blocks()[0].data_offset() + 12_345;
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[first as usize] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let before = stored_blocks(&path);
    assert_eq!(before.len(), 2);

    let f = AsdfFile::open(&path).unwrap();
    let tree = Node::map(vec![
        ("a", f.get("/a").unwrap().clone()),
        ("b", f.get("/b").unwrap().clone()),
        ("note", Node::str("kept")),
    ]);
    drop(f);
    let opts = WriteOptions::default().compression(CompressionChoice::Input);
    assert_eq!(
        update(&path, &tree, opts.clone()).unwrap(),
        UpdateKind::Rewritten
    );
    // Both blocks are the same bytes with the same checksums: the damaged block is not
    // given a fresh checksum that would hide the damage.
    assert_eq!(stored_blocks(&path), before);
    let f = AsdfFile::open(&path).unwrap();
    assert_eq!(f.get("/note").unwrap().as_str(), Some("kept"));
    assert_eq!(f.array::<i32>("/b").unwrap(), b.clone().into_dyn());
    match f.verify_checksums() {
        Err(asdf_core::Error::Checksum { block, .. }) => assert_eq!(block, 0),
        other => panic!("expected a checksum error on block 0, got {other:?}"),
    }

    // Written to memory (no file to copy into), the same bytes come out.
    let mem = Writer::from_file(&f, opts.clone())
        .write_to_vec(&tree)
        .unwrap();
    let mem_path = dir.join("mem.asdf");
    std::fs::write(&mem_path, &mem).unwrap();
    assert_eq!(stored_blocks(&mem_path), before);

    // A file written without checksums gets them computed from the stored bytes.
    let plain = dir.join("plain.asdf");
    let mut w = Writer::new(WriteOptions::default().checksums(false));
    let na = w.add_array(&a);
    let nb = w.add_array_with(
        &b,
        ArrayOptions {
            compression: Some(CompressionChoice::Codec(Compression::Zstd)),
            ..Default::default()
        },
    );
    w.write_to_path(&Node::map(vec![("a", na), ("b", nb)]), &plain)
        .unwrap();
    let unsummed = stored_blocks(&plain);
    assert!(unsummed.iter().all(|(_, sum)| *sum == [0; 16]));
    let f = AsdfFile::open(&plain).unwrap();
    let tree = Node::map(vec![
        ("a", f.get("/a").unwrap().clone()),
        ("b", f.get("/b").unwrap().clone()),
    ]);
    drop(f);
    update(&plain, &tree, opts).unwrap();
    let summed = stored_blocks(&plain);
    for ((data, sum), (old, _)) in summed.iter().zip(&unsummed) {
        assert_eq!(data, old);
        assert_eq!(*sum, <[u8; 16]>::from(Md5::digest(data)));
    }
    AsdfFile::open(&plain).unwrap().verify_checksums().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ascii strings with bytes above 0x7F are text nobody reads back as ascii: refused
/// inline when the array asked for inline storage (typed, with the tree path and the
/// element), put in a block when inlined by size or by the writer's default; ASCII ones
/// stay inline.
#[test]
fn non_ascii_ascii_strings_are_never_written_inline() {
    use asdf_core::write::{ArrayOptions, Storage, WriteError, WriteOptions, Writer};
    let field = |name: &str, dtype, shape| Field {
        name: name.into(),
        dtype,
        shape,
    };
    let ascii = |data: &[u8]| DynArray {
        dtype: DType::scalar(ScalarType::Ascii(2), ByteOrder::Big),
        shape: vec![data.len() / 2],
        data: data.to_vec(),
    };
    let inline = ArrayOptions {
        compression: None,
        storage: Some(Storage::Inline),
    };
    let high = ascii(b"ok\xd7x");
    assert_eq!(high.first_non_ascii(), Some((1, 0xd7)));
    let mut w = Writer::new(WriteOptions::default());
    let n = w.add_array_with(high.clone(), inline);
    let tree = Node::map(vec![("obs", Node::map(vec![("when", n)]))]);
    match w.write_to_vec(&tree) {
        Err(WriteError::NotAscii {
            path,
            element,
            what,
        }) => {
            assert_eq!(
                (path.to_string(), element, what.as_str()),
                ("/obs/when".to_string(), 1, "byte 0xd7")
            );
        }
        other => panic!("{other:?}"),
    }
    // a record's ascii field too; its numbers may hold any byte
    let rec = DynArray {
        dtype: DType::Record(vec![
            field(
                "n",
                DType::scalar(ScalarType::UInt8, ByteOrder::Little),
                vec![],
            ),
            field(
                "s",
                DType::scalar(ScalarType::Ascii(2), ByteOrder::Big),
                vec![],
            ),
        ]),
        shape: vec![3],
        data: b"\xffab\xfecd\x00e\x80".to_vec(),
    };
    assert_eq!(rec.first_non_ascii(), Some((2, 0x80)));
    let mut w = Writer::new(WriteOptions::default());
    let n = w.add_array_with(rec.clone(), inline);
    assert!(matches!(
        w.write_to_vec(&Node::map(vec![("r", n)])),
        Err(WriteError::NotAscii { element: 2, .. })
    ));
    // inlined by size: a block, bytes kept; ASCII strings beside it stay inline
    let mut w = Writer::new(WriteOptions::default().storage(Storage::InlineUpTo(100)));
    let (a, b) = (w.add_array(high.clone()), w.add_array(ascii(b"abcd")));
    let bytes = w
        .write_to_vec(&Node::map(vec![("a", a), ("b", b)]))
        .unwrap();
    let f = AsdfFile::from_bytes(bytes).unwrap();
    assert!(f.get("/a/source").is_some(), "{:?}", f.get("/a"));
    assert!(f.get("/b/data").is_some(), "{:?}", f.get("/b"));
    assert_eq!(f.dyn_array("/a").unwrap(), high);
    assert_eq!(f.dyn_array("/b").unwrap().data, b"abcd");
    // inline data in a tree: refused as the reader would refuse it
    let text = "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nx: !core/ndarray-1.0.0\n  data: [[ab, cd], [ef, \"g\\xD7\"]]\n  datatype: [ascii, 2]\n  shape: [2, 2]\n...\n";
    let f = AsdfFile::from_bytes(text.as_bytes().to_vec()).unwrap();
    let err = f.dyn_array("/x").unwrap_err().to_string();
    assert!(err.contains("is not ascii"), "{err}");
    let w = Writer::new(WriteOptions::default());
    match w.write_to_vec(f.tree()) {
        Err(WriteError::NotAscii {
            path,
            element,
            what,
        }) => {
            assert_eq!(
                (path.to_string(), element, what.as_str()),
                ("/x".to_string(), 3, "'×'")
            );
        }
        other => panic!("{other:?}"),
    }
}

/// Implode with `CompressionChoice::Input` (`asdftool implode`): arrays brought back from
/// external block files keep the codec their blocks had, as internal blocks do; explode
/// with it keeps them too.
#[test]
fn implode_and_explode_keep_the_codecs_of_external_blocks() {
    let dir = tmpdir("implode-codecs");
    let path = dir.join("main.asdf");
    let (a, b) = (arr1(&[1.5f64; 300]), arr1(&[7i32; 500]));
    let mut w = Writer::new(WriteOptions::default().storage(Storage::External));
    let na = w.add_array_with(
        &a,
        ArrayOptions {
            compression: Some(CompressionChoice::Codec(Compression::Zstd)),
            storage: None,
        },
    );
    let nb = w.add_array_with(
        &b,
        ArrayOptions {
            compression: Some(CompressionChoice::Codec(Compression::Zlib)),
            storage: None,
        },
    );
    w.write_to_path(&Node::map(vec![("a", na), ("b", nb)]), &path)
        .unwrap();
    let label = |f: &AsdfFile, i: usize| f.blocks()[i].compression_label();
    let ext = AsdfFile::open(dir.join("main0000.asdf")).unwrap();
    assert_eq!(label(&ext, 0), Some(*b"zstd"));
    let f = AsdfFile::open(&path).unwrap();
    let input = WriteOptions::default().compression(CompressionChoice::Input);
    let imploded = dir.join("imploded.asdf");
    Writer::from_file(&f, input.clone().storage(Storage::Internal))
        .write_to_path(f.tree(), &imploded)
        .unwrap();
    let g = AsdfFile::open(&imploded).unwrap();
    assert_eq!(g.blocks().len(), 2);
    assert_eq!(
        (label(&g, 0), label(&g, 1)),
        (Some(*b"zstd"), Some(*b"zlib"))
    );
    assert_eq!(g.array::<f64>("/a").unwrap(), a.clone().into_dyn());
    assert_eq!(g.array::<i32>("/b").unwrap(), b.clone().into_dyn());
    // and exploded again, external to external
    let again = dir.join("again.asdf");
    Writer::from_file(&f, input.storage(Storage::External))
        .write_to_path(f.tree(), &again)
        .unwrap();
    let e = AsdfFile::open(dir.join("again0001.asdf")).unwrap();
    assert_eq!(label(&e, 0), Some(*b"zlib"));
    let _ = std::fs::remove_dir_all(&dir);
}
