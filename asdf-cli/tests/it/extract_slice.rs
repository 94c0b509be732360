//! `asdftool extract FILE PATH --slice SEL -o OUT`: the region numpy's `a[SEL]` gives, from
//! local files and URLs alike, to `.npy` and `.asdf`; selections that do not fit refused in
//! one line with exit status 2; only the region's bytes fetched from a URL.
//!
//! Expected values: the whole array read (`dyn_array`), then sliced with ndarray's `s![]`,
//! each selection translated to ndarray's slicing by hand below; and python (numpy and
//! python asdf 6.0.0 from the oracle venv) reading each `.npy` against its own `a[SEL]`.

use crate::common;
use crate::tool;

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use asdf_core::array::DynArray;
use asdf_core::write::Compression;
use asdf_core::write::{ArrayOptions, CompressionChoice, WriteOptions, Writer};
use asdf_core::AsdfFile;
use ndarray::{s, ArrayD, Axis, IxDyn};
use tool::{asdftool, ok, stderr};

fn fixture(name: &str) -> PathBuf {
    common::data_dir("fixtures").join(name)
}

fn example() -> PathBuf {
    common::repo_root().join("examples/data/observation.asdf")
}

/// The parts of a `.npy` file: descr, shape text, data.
fn parse_npy(bytes: &[u8]) -> (String, String, Vec<u8>) {
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let n = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + n) % 64, 0, "header aligned to 64 bytes");
    let header = std::str::from_utf8(&bytes[10..10 + n]).unwrap();
    let descr = header.split("'descr': ").nth(1).unwrap();
    let descr = descr.split(", 'fortran_order'").next().unwrap().to_string();
    assert!(header.contains("'fortran_order': False"));
    let shape = header.split("'shape': ").nth(1).unwrap();
    let shape = shape[..=shape.find(')').unwrap()].to_string();
    (descr, shape, bytes[10 + n..].to_vec())
}

/// numpy's text of a shape: `(3,)`, `(2, 4)`, `()`.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The region of `whole` that `slice` (ndarray slicing of its elements' indices) picks:
/// datatype, shape and the elements' bytes in C order.
fn expected(whole: &DynArray, slice: fn(ArrayD<usize>) -> ArrayD<usize>) -> DynArray {
    let n = whole.element_count();
    let idx = ArrayD::from_shape_vec(IxDyn(&whole.shape), (0..n).collect()).unwrap();
    let picked = slice(idx);
    let item = whole.dtype.itemsize();
    DynArray {
        dtype: whole.dtype.clone(),
        shape: picked.shape().to_vec(),
        data: picked
            .iter()
            .flat_map(|&i| whole.data[i * item..(i + 1) * item].iter().copied())
            .collect(),
    }
}

/// One case: file, array, numpy's selection, the same selection in ndarray's terms.
struct Case {
    file: PathBuf,
    path: &'static str,
    sel: &'static str,
    slice: fn(ArrayD<usize>) -> ArrayD<usize>,
}

fn d2(a: ArrayD<usize>) -> ndarray::Array2<usize> {
    a.into_dimensionality().unwrap()
}

fn d3(a: ArrayD<usize>) -> ndarray::Array3<usize> {
    a.into_dimensionality().unwrap()
}

fn d1(a: ArrayD<usize>) -> ndarray::Array1<usize> {
    a.into_dimensionality().unwrap()
}

fn cases() -> Vec<Case> {
    let c = |file: PathBuf, path, sel, slice| Case {
        file,
        path,
        sel,
        slice,
    };
    vec![
        // the example's 64x64 float32 images: sci in zlib, err in lz4
        c(example(), "/sci", "10:20, 30:50", |a| {
            d2(a).slice(s![10..20, 30..50]).to_owned().into_dyn()
        }),
        c(example(), "/sci", "::4, :", |a| {
            d2(a).slice(s![..;4, ..]).to_owned().into_dyn()
        }),
        // two indices: a 0-d array, shape ()
        c(example(), "/sci", "3, -4", |a| {
            d2(a).slice(s![3, 60]).to_owned().into_dyn()
        }),
        c(example(), "/sci", "-1", |a| {
            d2(a).index_axis(Axis(0), 63).to_owned().into_dyn()
        }),
        // numpy ::-3 over 64 starts at 63, as ndarray's ..;-3 does
        c(example(), "/err", "..., ::-3", |a| {
            d2(a).slice(s![.., ..;-3]).to_owned().into_dyn()
        }),
        // numpy 5:1:-1 is 5, 4, 3, 2: ndarray's 2..6 walked backwards
        c(example(), "err", "5:1:-1, 7", |a| {
            d2(a).slice(s![2..6;-1, 7]).to_owned().into_dyn()
        }),
        c(example(), "/sci", "100:228, 2000:2256", |a| {
            d2(a).slice(s![64..64, 64..64]).to_owned().into_dyn()
        }),
        // python asdf's lz4 block of three 4 MiB sub-blocks: across the first boundary
        c(
            fixture("codec_lz4_multichunk.asdf"),
            "/big",
            "1048570:1048580",
            |a| d1(a).slice(s![1048570..1048580]).to_owned().into_dyn(),
        ),
        c(
            fixture("codec_lz4_multichunk.asdf"),
            "/big",
            "::-500000",
            |a| d1(a).slice(s![..;-500000]).to_owned().into_dyn(),
        ),
        // views python wrote (offset, negative strides), big-endian
        c(
            fixture("views_shared_base_bigendian.asdf"),
            "/t",
            "1:, ..., ::-2",
            |a| d3(a).slice(s![1.., .., ..;-2]).to_owned().into_dyn(),
        ),
        c(
            fixture("views_shared_base_bigendian.asdf"),
            "/r",
            "-1, 0",
            |a| d3(a).slice(s![1, 0, ..]).to_owned().into_dyn(),
        ),
        // records and strings
        c(fixture("dtypes_structured.asdf"), "/rec", "::-2", |a| {
            d1(a).slice(s![..;-2]).to_owned().into_dyn()
        }),
        c(fixture("dtypes_structured.asdf"), "/rec_2d", "1, :", |a| {
            d2(a).slice(s![1, ..]).to_owned().into_dyn()
        }),
        c(fixture("dtypes_strings.asdf"), "/ucs4_big", "1:4", |a| {
            d1(a).slice(s![1..4]).to_owned().into_dyn()
        }),
        // every other codec
        c(fixture("codec_mixed.asdf"), "/zstd", "::3", |a| {
            a.slice_axis(Axis(0), ndarray::Slice::new(0, None, 3))
                .to_owned()
        }),
    ]
}

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("asdftool-slice-{name}"))
}

#[test]
fn regions_to_npy_equal_the_whole_array_sliced() {
    let dir = scratch("npy");
    for (k, case) in cases().iter().enumerate() {
        let out = dir.join(format!("{k}.npy"));
        let o = asdftool(&[
            "extract".as_ref(),
            case.file.as_os_str(),
            case.path.as_ref(),
            "--slice".as_ref(),
            case.sel.as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        let said = ok(&o);
        let file = AsdfFile::open(&case.file).unwrap();
        let pointer = format!("/{}", case.path.trim_start_matches('/'));
        let whole = file.dyn_array(&pointer).unwrap();
        let want = expected(&whole, case.slice);
        let (descr, shape, data) = parse_npy(&std::fs::read(&out).unwrap());
        let what = format!("{} {}[{}]", case.file.display(), case.path, case.sel);
        let dt = whole.dtype.to_numpy_str();
        let want_descr = if dt.starts_with('[') {
            dt
        } else {
            format!("'{dt}'")
        };
        assert_eq!(descr, want_descr, "{what}");
        assert_eq!(shape, shape_text(&want.shape), "{what}");
        assert!(data == want.data, "{what}: data");
        assert!(
            said.contains(&format!("{:?}", want.shape)),
            "{what}: {said}"
        );
    }
}

/// python: `numpy.load(OUT)` equals python asdf's `af[PATH][SEL]`, datatype and values;
/// and python asdf opens each region written to `.asdf` (validated, checksums checked) as
/// that same `af[PATH][SEL]`, masked arrays with their masks.
#[test]
fn python_reads_each_npy_as_its_own_slice_of_the_file() {
    let python = common::repo_root().join(".venv-oracle/bin/python");
    if !python.exists() {
        if asdf_test_data::skip_missing() {
            println!("skipped: no {}", python.display());
            return;
        }
        panic!(
            "{} is absent: `bash .ci/run` installs the oracle venv (tests/oracle-requirements.txt)",
            python.display()
        );
    }
    let dir = scratch("python");
    let mut lines = String::new();
    for (k, case) in cases().iter().enumerate() {
        let out = dir.join(format!("{k}.npy"));
        ok(&asdftool(&[
            "extract".as_ref(),
            case.file.as_os_str(),
            case.path.as_ref(),
            "--slice".as_ref(),
            case.sel.as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ]));
        lines.push_str(&format!(
            "{}\t{}\t{}\t{}\n",
            case.file.display(),
            case.path.trim_start_matches('/'),
            case.sel,
            out.display()
        ));
    }
    // regions to .asdf: python asdf reads them (validated) as its own a[SEL], masks included
    for (k, (file, path, sel)) in [
        (example(), "err", "8:40:2, -10:"),
        (fixture("masked.asdf"), "m2", ":, ::-1"),
        (fixture("masked.asdf"), "m", "::-2"),
        (fixture("codec_mixed.asdf"), "blsc", "::7"),
        (fixture("views_shared_base.asdf"), "sub_rev", "1:, 0"),
    ]
    .into_iter()
    .enumerate()
    {
        let out = dir.join(format!("{k}.asdf"));
        ok(&asdftool(&[
            "extract".as_ref(),
            file.as_os_str(),
            path.as_ref(),
            "--slice".as_ref(),
            sel.as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ]));
        lines.push_str(&format!(
            "{}\t{path}\t{sel}\t{}\n",
            file.display(),
            out.display()
        ));
    }
    let script = r#"
import sys, asdf, numpy as np
bad = 0
lines = sys.stdin.read().splitlines()
for line in lines:
    f, path, sel, npy = line.split("\t")
    with asdf.open(f, lazy_load=False, memmap=False) as af:
        a = af[path]
        if not npy.endswith(".asdf"):
            a = np.asarray(a)
        want = eval("a[" + sel + "]", {"a": a})
    if npy.endswith(".asdf"):
        with asdf.open(npy, lazy_load=False, memmap=False, validate_checksums=True) as out:
            got = out[path][...]
        if np.ma.isMaskedArray(want) != np.ma.isMaskedArray(got) or not np.array_equal(
                np.ma.getmaskarray(got), np.ma.getmaskarray(want)):
            bad += 1
            print(f"{f} {path}[{sel}]: masks differ: {got!r} {want!r}")
        got, want = np.ma.getdata(got), np.ma.getdata(want)
    else:
        got = np.load(npy)
    if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != np.ascontiguousarray(want).tobytes():
        bad += 1
        print(f"{f} {path}[{sel}]: got {got.dtype} {got.shape}, python {want.dtype} {want.shape}")
print(f"{len(lines)} checked, {bad} differ")
sys.exit(1 if bad else 0)
"#;
    use std::io::Write;
    let mut child = std::process::Command::new(&python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "python: {said}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        said.trim(),
        format!("{} checked, 0 differ", cases().len() + 5),
        "python"
    );
}

#[test]
fn a_selection_that_does_not_fit_is_one_line_with_exit_status_2() {
    let dir = scratch("bad");
    let e = example();
    let e = e.to_str().unwrap();
    let npy = dir.join("x.npy");
    let n = npy.to_str().unwrap();
    // /sci is 64 x 64
    for (sel, words) in [
        (
            "70",
            &["/sci", "(64, 64)", "index 70", "axis 0", "size 64"][..],
        ),
        ("3, -65", &["/sci", "index -65", "axis 1", "size 64"]),
        ("::0", &["/sci", "step", "axis 0"]),
        ("0, 0, 0", &["/sci", "3 indices", "2 dimensions"]),
        ("..., 1, ...", &["--slice", "ellipsis"]),
        ("1:x", &["--slice", "\"1:x\"", "character 2"]),
        ("1:2:3:4", &["--slice", "two ':'"]),
    ] {
        let o = asdftool(&["extract", e, "/sci", "--slice", sel, "-o", n]);
        assert_eq!(o.status.code(), Some(2), "{sel}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{sel}: {err}");
        assert!(err.starts_with("asdftool: "), "{sel}: {err}");
        for w in words {
            assert!(err.contains(w), "{sel}: {err:?} lacks {w:?}");
        }
        assert!(o.stdout.is_empty());
    }
    // not an array
    let o = asdftool(&["extract", e, "/meta", "--slice", "0", "-o", n]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/meta is not one"), "{}", stderr(&o));
    assert!(!npy.exists(), "nothing written");
}

#[test]
fn a_region_to_asdf_keeps_codec_and_mask() {
    let dir = scratch("asdf");
    // lz4 /err of the example: the region in an lz4 block of its own
    let out = dir.join("err.asdf");
    ok(&asdftool(&[
        "extract".as_ref(),
        example().as_os_str(),
        "/err".as_ref(),
        "--slice".as_ref(),
        "8:40:2, -10:".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]));
    let src = AsdfFile::open(example()).unwrap();
    let whole = src.array::<f32>("/err").unwrap();
    let got = AsdfFile::open(&out).unwrap();
    assert_eq!(
        got.array::<f32>("/err").unwrap(),
        whole
            .into_dimensionality::<ndarray::Ix2>()
            .unwrap()
            .slice(s![8..40;2, 54..])
            .into_dyn()
    );
    assert_eq!(&got.blocks()[0].compression, b"lz4\0");
    // python's masked array m2 = [[0, 1, 2], [3, 4, 5]], mask [[0, 0, 1], [1, 0, 0]]
    let out = dir.join("m2.asdf");
    ok(&asdftool(&[
        "extract".as_ref(),
        fixture("masked.asdf").as_os_str(),
        "m2".as_ref(),
        "--slice".as_ref(),
        ":, ::-1".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]));
    let got = AsdfFile::open(&out).unwrap();
    let m: asdf_core::convert::Masked<i32> = got.read_as("/m2").unwrap();
    assert_eq!(
        m.data,
        ndarray::arr2(&[[2, 1, 0], [5, 4, 3]]).into_dyn(),
        "data"
    );
    assert_eq!(
        m.mask,
        ndarray::arr2(&[[true, false, false], [false, false, true]]).into_dyn(),
        "mask"
    );
    // a scalar mask stays a scalar
    let out = dir.join("int.asdf");
    ok(&asdftool(&[
        "extract".as_ref(),
        fixture("masked_scalar.asdf").as_os_str(),
        "/inline_int".as_ref(),
        "--slice".as_ref(),
        "1:".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]));
    let got = AsdfFile::open(&out).unwrap();
    assert_eq!(
        got.get("/inline_int/mask").and_then(|m| m.as_i64()),
        Some(-999)
    );
    let m: asdf_core::convert::Masked<i32> = got.read_as("/inline_int").unwrap();
    assert_eq!(m.data, ndarray::arr1(&[-999, 3, -999]).into_dyn());
    assert_eq!(m.mask, ndarray::arr1(&[true, false, true]).into_dyn());
}

#[test]
fn help_documents_slice() {
    let help = ok(&asdftool(&["extract", "--help"]));
    for w in [
        "--slice <SEL>",
        "numpy's slice syntax",
        "100:228, 2000:2256",
        "...",
    ] {
        assert!(help.contains(w), "{w:?} missing from:\n{help}");
    }
}

// ---- URLs ----

/// A 2048 x 2048 float32 image (16 MiB) of values that do not compress, in a block of codec
/// `c`, written to `path`.
fn image_file(path: &Path, c: Option<Compression>) -> ndarray::Array2<f32> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let img = ndarray::Array2::from_shape_simple_fn((2048, 2048), || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32
    });
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_array_with(
        &img,
        ArrayOptions {
            compression: Some(c.map_or(CompressionChoice::None, CompressionChoice::Codec)),
            storage: None,
        },
    );
    w.write_to_path(&asdf_core::tree!({"sci": node}), path)
        .unwrap();
    img
}

/// From an `http://` URL the region is the same `.npy` as from the file, and the server
/// sends a small part of the block: the bytes from the region's first element to its last
/// (uncompressed) or the 4 MiB sub-block holding it (lz4), and the head of the file (up to
/// 512 KiB allowed for it and for reading ahead).
#[test]
fn a_region_from_a_url_is_the_same_and_fetches_little() {
    let dir = scratch("url");
    let server = support::Server::start();
    const HEAD: u64 = 512 << 10;
    for (name, c) in [("plain.asdf", None), ("lz4.asdf", Some(Compression::Lz4))] {
        let path = dir.join(name);
        let img = image_file(&path, c);
        let bytes = std::fs::read(&path).unwrap();
        let size = bytes.len() as u64;
        let block = AsdfFile::open(&path).unwrap().blocks()[0].clone();
        let most = match c {
            // element (100, 1000) to element (227, 1255), 4 bytes each
            None => ((227 * 2048 + 1255) - (100 * 2048 + 1000) + 1) * 4 + HEAD,
            // the first sub-block (rows 0 to 511): its 4-byte length and its bytes
            _ => {
                let at = block.data_offset() as usize;
                let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
                4 + u64::from(len) + HEAD
            }
        };
        server.put(name, Arc::new(bytes));
        let url = server.url(name);
        server.reset_counts();
        let from_url = dir.join(format!("{name}.url.npy"));
        let from_file = dir.join(format!("{name}.file.npy"));
        for (input, out) in [
            (url.as_str(), &from_url),
            (path.to_str().unwrap(), &from_file),
        ] {
            ok(&asdftool(&[
                "extract",
                input,
                "/sci",
                "--slice",
                "100:228, 1000:1256",
                "-o",
                out.to_str().unwrap(),
            ]));
        }
        let sent = server.sent();
        let a = std::fs::read(&from_url).unwrap();
        assert_eq!(
            a,
            std::fs::read(&from_file).unwrap(),
            "{name}: URL against file"
        );
        let (_, shape, data) = parse_npy(&a);
        assert_eq!(shape, "(128, 256)");
        let want: Vec<u8> = img
            .slice(s![100..228, 1000..1256])
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert!(data == want, "{name}: values");
        println!("{name}: {sent} bytes sent of {size}");
        assert!(
            sent <= most,
            "{name}: {sent} bytes sent for a 128 x 256 region of a {size}-byte file"
        );
    }
}

/// Every codec, and external blocks fetched from beside the URL: the region from the URL is
/// the same `.npy` as from the file, and both are the whole array sliced.
#[test]
fn every_codec_and_external_blocks_from_a_url() {
    let dir = scratch("url-codecs");
    let img = ndarray::Array2::from_shape_fn((300, 200), |(i, j)| (i * 200 + j) as f64 / 7.0);
    let mut w = Writer::new(WriteOptions::default());
    let mut entries = Vec::new();
    let names: Vec<String> = Compression::ALL
        .iter()
        .map(|c| {
            String::from_utf8_lossy(&c.label())
                .trim_end_matches('\0')
                .to_string()
        })
        .collect();
    for (c, name) in Compression::ALL.iter().zip(&names) {
        let node = w.add_array_with(
            &img,
            ArrayOptions {
                compression: Some(CompressionChoice::Codec(*c)),
                storage: None,
            },
        );
        entries.push((name.clone(), node));
    }
    let path = dir.join("codecs.asdf");
    w.write_to_path(&asdf_core::Node::map(entries), &path)
        .unwrap();
    let server = support::Server::start();
    server.put("codecs.asdf", Arc::new(std::fs::read(&path).unwrap()));
    for name in ["external.asdf", "external0000.asdf", "external0001.asdf"] {
        server.put(name, Arc::new(std::fs::read(fixture(name)).unwrap()));
    }
    let mut runs: Vec<(String, PathBuf, String, &str, DynArray)> = Vec::new();
    let sel = "250:20:-3, 7::5";
    let want_img = DynArray {
        dtype: asdf_core::array::DType::scalar(
            asdf_core::array::ScalarType::Float64,
            asdf_core::array::ByteOrder::Little,
        ),
        shape: vec![300, 200],
        data: img.iter().flat_map(|v| v.to_le_bytes()).collect(),
    };
    for name in &names {
        runs.push((
            server.url("codecs.asdf"),
            path.clone(),
            format!("/{name}"),
            sel,
            want_img.clone(),
        ));
    }
    // python's exploded file: b = arange(6, >i4).reshape(2, 3) in external0001.asdf
    let ext = AsdfFile::open(fixture("external.asdf")).unwrap();
    runs.push((
        server.url("external.asdf"),
        fixture("external.asdf"),
        "/b".to_string(),
        "-1, ::-2",
        ext.dyn_array("/b").unwrap(),
    ));
    for (k, (url, file, array, sel, whole)) in runs.iter().enumerate() {
        let mut outs = Vec::new();
        for input in [url.as_str(), file.to_str().unwrap()] {
            let out = dir.join(format!("{k}-{}.npy", outs.len()));
            ok(&asdftool(&[
                "extract",
                input,
                array,
                "--slice",
                sel,
                "-o",
                out.to_str().unwrap(),
            ]));
            outs.push(std::fs::read(&out).unwrap());
        }
        assert_eq!(outs[0], outs[1], "{array}[{sel}]: URL against file");
        let (_, _, data) = parse_npy(&outs[0]);
        let want = if array == "/b" {
            // b[-1, ::-2] = [5, 3]
            expected(whole, |a| d2(a).slice(s![1, ..;-2]).to_owned().into_dyn())
        } else {
            // rows 250, 247, ..., 22 (numpy 250:20:-3), columns 7, 12, ..., 197
            expected(whole, |a| {
                d2(a).slice(s![22..251;-3, 7..;5]).to_owned().into_dyn()
            })
        };
        assert!(data == want.data, "{array}[{sel}]: values");
    }
}
