//! Datasets larger than memory convert band by band in both directions, with memory bounded
//! by a few bands: 768 MiB of array data (a 512 MiB contiguous array, a 256 MiB one in
//! `lz4` blocks recorded with an HDF5 chunk shape) go ASDF → HDF5 → ASDF, each step in a
//! child process (this same program, `harness = false`) that reports its peak resident set
//! (`getrusage`); each peak must stay below [`LIMIT`], several times less than the data. The
//! values are then checked: the HDF5 file through hdf5-reader (chunk shape, and rows read
//! band by band), the final ASDF file through our reader.
//!
//! Then the arrays that are no plain run of their block, each 136 MiB (more than the bound):
//! views of an uncompressed block (an offset, the transpose, both axes reversed) and of an
//! `lz4` block (the transpose, through a spill file, and an offset), a masked array (its
//! 34 MiB mask a companion dataset, band by band too), and
//! arrays in `blsc`, `bsc2` and `bls2` blocks, go to HDF5 with checksums verified in a
//! child held to the same bound (the file holding them is made in a child of its own: the
//! writer holds arrays given whole), and their values are checked in the HDF5 file.
//! Linux only (`ru_maxrss`).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

#[path = "../../asdf-core/tests/common/mod.rs"]
mod common;

use asdf_core::array::{ArrayOptions, ByteOrder, DType, ScalarType};
use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
use asdf_core::{AsdfFile, Node, Value};

const CHILD: &str = "ASDF_HDF5_BIG_CHILD";
const DIR: &str = "ASDF_HDF5_BIG_DIR";
/// Peak resident set allowed to each step.
const LIMIT: u64 = 128 << 20;
const COLS: usize = 4096;
/// Rows of the contiguous array (512 MiB of uint32) and of the chunked one (256 MiB).
const CONTIG_ROWS: usize = 32768;
const CHUNKED_ROWS: usize = 16384;
/// The HDF5 chunk shape recorded for the chunked array (1 MiB chunks).
const CHUNK_ROWS: usize = 64;
/// Rows per piece when the ASDF file is made.
const PIECE_ROWS: usize = 1024;

fn contig(r: usize, c: usize) -> u32 {
    (r * COLS + c) as u32
}

fn chunked(r: usize, c: usize) -> u32 {
    (r * 31 + c / 64) as u32
}

fn main() -> ExitCode {
    if let Some(step) = std::env::var_os(CHILD) {
        let dir = PathBuf::from(std::env::var_os(DIR).expect("the parent sets the folder"));
        let before = peak_rss();
        match step.to_str() {
            Some("make") => make(&dir.join("big.asdf")),
            Some("to_h5") => {
                asdf_hdf5::from_asdf(&dir.join("big.asdf"), &dir.join("big.h5")).unwrap();
            }
            Some("make_kinds") => make_kinds(&dir.join("kinds.asdf")),
            Some("kinds_to_h5") => {
                let opts = asdf_hdf5::FromAsdfOptions {
                    verify_checksums: true,
                    ..Default::default()
                };
                asdf_hdf5::from_asdf_with(&dir.join("kinds.asdf"), &dir.join("kinds.h5"), &opts)
                    .unwrap();
            }
            Some("to_asdf") => {
                let opts = asdf_hdf5::ToAsdfOptions::default();
                asdf_hdf5::to_asdf(&dir.join("big.h5"), &dir.join("back.asdf"), &opts).unwrap();
            }
            other => panic!("unknown step {other:?}"),
        }
        println!("{before} {}", peak_rss());
        return ExitCode::SUCCESS;
    }
    if !cfg!(target_os = "linux") {
        println!("big_data: needs getrusage's ru_maxrss in kilobytes (Linux)");
        return ExitCode::FAILURE;
    }
    match run() {
        Ok(summary) => {
            println!("big_data: {summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("big_data: FAILED\n{e}");
            ExitCode::FAILURE
        }
    }
}

/// Peak resident set of this process, in bytes (`getrusage`: kilobytes on Linux).
fn peak_rss() -> u64 {
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one `rusage`, which `usage` is, and nothing else.
    let r = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    assert_eq!(r, 0, "getrusage");
    usage.ru_maxrss as u64 * 1024
}

/// Rows `from..to` of an array of `f` as uint32 little-endian bytes.
fn rows(f: fn(usize, usize) -> u32, from: usize, to: usize) -> Vec<u8> {
    let mut out = vec![0u8; (to - from) * COLS * 4];
    for (i, v) in out.chunks_exact_mut(4).enumerate() {
        v.copy_from_slice(&f(from + i / COLS, i % COLS).to_le_bytes());
    }
    out
}

/// An array of `f`, `total` rows, produced a piece at a time.
fn pieces(
    f: fn(usize, usize) -> u32,
    total: usize,
) -> impl FnMut() -> std::io::Result<Option<Vec<u8>>> + Send {
    let mut at = 0;
    move || {
        if at == total {
            return Ok(None);
        }
        let to = (at + PIECE_ROWS).min(total);
        let piece = rows(f, at, to);
        at = to;
        Ok(Some(piece))
    }
}

/// The ASDF file: `/contig` uncompressed, `/chunked` in lz4 with an HDF5 chunk shape.
fn make(path: &Path) {
    let u4 = DType::scalar(ScalarType::UInt32, ByteOrder::Little);
    let mut w = Writer::new(WriteOptions::default());
    let opts = |c: Option<Compression>| ArrayOptions {
        compression: Some(c.map_or(CompressionChoice::None, CompressionChoice::Codec)),
        storage: None,
    };
    let a = w.add_array_pieces(
        u4.clone(),
        &[CONTIG_ROWS, COLS],
        opts(None),
        pieces(contig, CONTIG_ROWS),
    );
    let b = w.add_array_pieces(
        u4,
        &[CHUNKED_ROWS, COLS],
        opts(Some(Compression::Lz4)),
        pieces(chunked, CHUNKED_ROWS),
    );
    let hint = Node::new(Value::Map(vec![(
        Node::str("chunks"),
        Node::new(Value::Map(vec![(
            Node::str("/chunked"),
            Node::seq([Node::int(CHUNK_ROWS as i128), Node::int(COLS as i128)]),
        )])),
    )]));
    let root = Node::new(Value::Map(vec![
        (Node::str("contig"), a),
        (Node::str("chunked"), b),
        (Node::str("_hdf5"), hint),
    ]));
    w.write_to_path(&root, path).unwrap();
}

/// Rows and columns of the arrays of `kinds.asdf` (136 MiB of uint32 each).
const KR: usize = 8704;
const KC: usize = 4096;

/// The values of the arrays of `kinds.asdf`, one function each (`k` tells them apart).
fn kind(k: u32, r: usize, c: usize) -> u32 {
    (r as u32).wrapping_mul(40_503) ^ (c as u32 / 3) ^ (k << 28)
}

fn kind_array(k: u32) -> ndarray::Array2<u32> {
    ndarray::Array2::from_shape_fn((KR, KC), |(r, c)| kind(k, r, c))
}

/// The arrays that are not a plain run of their block, with what each holds at `(i, j)`.
#[allow(clippy::type_complexity)]
fn kinds() -> Vec<(&'static str, [usize; 2], Box<dyn Fn(usize, usize) -> u32>)> {
    vec![
        ("/offset", [KR - 1, KC], Box::new(|i, j| kind(0, i + 1, j))),
        ("/transposed", [KC, KR], Box::new(|i, j| kind(0, j, i))),
        (
            "/reversed",
            [KR, KC],
            Box::new(|i, j| kind(0, KR - 1 - i, KC - 1 - j)),
        ),
        ("/lz_transposed", [KC, KR], Box::new(|i, j| kind(1, j, i))),
        (
            "/lz_offset",
            [KR - 2, KC],
            Box::new(|i, j| kind(1, i + 2, j)),
        ),
        ("/masked", [KR, KC], Box::new(|i, j| kind(2, i, j))),
        ("/blsc", [KR, KC], Box::new(|i, j| kind(3, i, j))),
        ("/bsc2", [KR, KC], Box::new(|i, j| kind(4, i, j))),
        ("/bls2", [KR, KC], Box::new(|i, j| kind(5, i, j))),
    ]
}

/// `kinds.asdf`: views of an uncompressed and of an `lz4` block, a masked array and the
/// Blosc codecs; the compressed ones with an HDF5 chunk shape recorded (so that they are
/// not deflated, which a debug build does slowly).
fn make_kinds(path: &Path) {
    let mut w = Writer::new(WriteOptions::default());
    let opts = |c: Option<Compression>| ArrayOptions {
        compression: Some(c.map_or(CompressionChoice::None, CompressionChoice::Codec)),
        storage: None,
    };
    let row = (KC * 4) as i64;
    let base = w.add_array_with(kind_array(0), opts(None));
    let offset = w
        .add_view(&base, row as u64, &[KR - 1, KC], &[row, 4])
        .unwrap();
    let transposed = w.add_view(&base, 0, &[KC, KR], &[4, row]).unwrap();
    let last = ((KR * KC - 1) * 4) as u64;
    let reversed = w.add_view(&base, last, &[KR, KC], &[-row, -4]).unwrap();
    let lz = w.add_array_with(kind_array(1), opts(Some(Compression::Lz4)));
    let lz_transposed = w.add_view(&lz, 0, &[KC, KR], &[4, row]).unwrap();
    let lz_offset = w
        .add_view(&lz, 2 * row as u64, &[KR - 2, KC], &[row, 4])
        .unwrap();
    let mask = ndarray::Array2::from_shape_fn((KR, KC), |(r, c)| (r + c) % 5 == 0);
    let masked = w.add_masked_array(kind_array(2), mask, opts(None));
    let blsc = w.add_array_with(kind_array(3), opts(Some(Compression::Blsc)));
    let bsc2 = w.add_array_with(kind_array(4), opts(Some(Compression::Bsc2)));
    let bls2 = w.add_array_with(kind_array(5), opts(Some(Compression::Bls2)));
    let chunks =
        |rows: usize, cols: usize| Node::seq([Node::int(rows as i128), Node::int(cols as i128)]);
    let hint = Node::new(Value::Map(vec![(
        Node::str("chunks"),
        Node::new(Value::Map(vec![
            (Node::str("/lz"), chunks(64, KC)),
            (Node::str("/lz_transposed"), chunks(64, KR)),
            (Node::str("/lz_offset"), chunks(64, KC)),
            (Node::str("/blsc"), chunks(64, KC)),
            (Node::str("/bsc2"), chunks(64, KC)),
            (Node::str("/bls2"), chunks(64, KC)),
        ])),
    )]));
    let root = Node::new(Value::Map(vec![
        (Node::str("base"), base),
        (Node::str("offset"), offset),
        (Node::str("transposed"), transposed),
        (Node::str("reversed"), reversed),
        (Node::str("lz"), lz),
        (Node::str("lz_transposed"), lz_transposed),
        (Node::str("lz_offset"), lz_offset),
        (Node::str("masked"), masked),
        (Node::str("blsc"), blsc),
        (Node::str("bsc2"), bsc2),
        (Node::str("bls2"), bls2),
        (Node::str("_hdf5"), hint),
    ]));
    w.write_to_path(&root, path).unwrap();
}

/// Checks that `kinds.asdf` holds what the test means it to (views with offsets and
/// strides, a mask, the Blosc codecs), then the values of the HDF5 file made from it:
/// the first, a middle and the last bands of every array.
fn check_kinds(dir: &Path) -> Result<(), String> {
    let f = AsdfFile::open(dir.join("kinds.asdf")).map_err(|e| e.to_string())?;
    let has = |path: &str, key: &str| f.get(&format!("{path}/{key}")).is_some();
    for (path, key) in [
        ("/offset", "offset"),
        ("/transposed", "strides"),
        ("/reversed", "strides"),
        ("/lz_transposed", "strides"),
        ("/lz_offset", "offset"),
        ("/masked", "mask"),
    ] {
        if !has(path, key) {
            return Err(format!("kinds.asdf: {path} has no {key}"));
        }
    }
    let labels: Vec<String> = f
        .blocks()
        .iter()
        .filter_map(|b| b.compression_label())
        .map(|l| {
            String::from_utf8_lossy(&l)
                .trim_end_matches('\0')
                .to_string()
        })
        .collect();
    for codec in ["lz4", "blsc", "bsc2", "bls2"] {
        if !labels.iter().any(|l| l == codec) {
            return Err(format!("kinds.asdf has no {codec} block ({labels:?})"));
        }
    }
    drop(f);
    let h5 = hdf5_reader::Hdf5File::open(dir.join("kinds.h5")).map_err(|e| e.to_string())?;
    for (path, shape, value) in kinds() {
        let ds = h5.dataset(path).map_err(|e| format!("{path}: {e}"))?;
        if ds.shape() != [shape[0] as u64, shape[1] as u64] {
            return Err(format!("{path}: shape {:?}", ds.shape()));
        }
        // bands on chunk rows (the chunked ones are read a chunk row at a time): the first,
        // one in the middle and the last, short when the rows are not a whole number
        let rows = CHUNK_ROWS;
        for from in [0, shape[0] / 2 / rows * rows, (shape[0] - 1) / rows * rows] {
            let count = rows.min(shape[0] - from);
            let mut band = vec![0u8; count * shape[1] * 4];
            ds.read_raw_rows_into(from as u64, &mut band)
                .map_err(|e| format!("{path}: {e}"))?;
            for (n, v) in band.chunks_exact(4).enumerate() {
                let (i, j) = (from + n / shape[1], n % shape[1]);
                let got = u32::from_le_bytes([v[0], v[1], v[2], v[3]]);
                if got != value(i, j) {
                    return Err(format!("{path}[{i}, {j}] is {got}, not {}", value(i, j)));
                }
            }
        }
    }
    // the masked array's mask (more than the band threshold too): the companion dataset
    // its attribute names, every element
    let ds = h5.dataset("/masked").map_err(|e| e.to_string())?;
    let named = ds
        .attributes()
        .into_iter()
        .find(|a| a.name == "_asdf_mask")
        .and_then(|a| a.read_strings().ok());
    if named.as_deref() != Some(&["masked.mask".to_string()][..]) {
        return Err(format!("/masked: _asdf_mask is {named:?}"));
    }
    let mask = h5
        .dataset("/masked.mask")
        .and_then(|d| d.read_raw_bytes())
        .map_err(|e| format!("/masked.mask: {e}"))?;
    let want = |n: usize| (n / KC + n % KC) % 5 == 0;
    if mask.len() != KR * KC || !mask.iter().enumerate().all(|(n, &b)| (b != 0) == want(n)) {
        return Err("/masked.mask: not the mask".into());
    }
    Ok(())
}

fn step(dir: &Path, name: &str) -> Result<u64, String> {
    let out = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .env(CHILD, name)
        .env(DIR, dir)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "{name}: {}\n{text}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut figures = text.split_whitespace().map(|p| p.parse::<u64>().ok());
    let (Some(Some(before)), Some(Some(peak))) = (figures.next(), figures.next()) else {
        return Err(format!("{name}: no peak in {text:?}"));
    };
    // a child's peak starts at its parent's: a parent already past the bound would make
    // the child's figure say nothing
    if before > LIMIT {
        return Err(format!(
            "{name}: the peak resident set is {} MiB before the step starts",
            before >> 20
        ));
    }
    if peak > LIMIT && name != "make_kinds" {
        return Err(format!(
            "{name}: peak resident set {} MiB, above the {} MiB bound",
            peak >> 20,
            LIMIT >> 20
        ));
    }
    Ok(peak)
}

fn check_values(dir: &Path) -> Result<(), String> {
    // the HDF5 file: layouts as asked, rows as written
    let h5 = hdf5_reader::Hdf5File::open(dir.join("big.h5")).map_err(|e| e.to_string())?;
    let ds = h5.dataset("/chunked").map_err(|e| e.to_string())?;
    if ds.chunks() != Some(vec![CHUNK_ROWS as u32, COLS as u32]) {
        return Err(format!("/chunked has chunks {:?}", ds.chunks()));
    }
    let contig_ds = h5.dataset("/contig").map_err(|e| e.to_string())?;
    if contig_ds.chunks().is_some() {
        return Err("/contig is chunked".into());
    }
    for (ds, f, total) in [
        (&ds, chunked as fn(usize, usize) -> u32, CHUNKED_ROWS),
        (&contig_ds, contig, CONTIG_ROWS),
    ] {
        // a band in the middle and the last one
        for from in [total / 2, total - 2 * CHUNK_ROWS] {
            let mut band = vec![0u8; 2 * CHUNK_ROWS * COLS * 4];
            ds.read_raw_rows_into(from as u64, &mut band)
                .map_err(|e| e.to_string())?;
            if band != rows(f, from, from + 2 * CHUNK_ROWS) {
                return Err(format!("{}: rows from {from} differ", ds.name()));
            }
        }
    }
    // the ASDF file converted back: every row's ends and every 61st row whole (all of them
    // take long in a debug build), and the checksums of the blocks written
    let f = AsdfFile::open(dir.join("back.asdf")).map_err(|e| e.to_string())?;
    f.verify_checksums().map_err(|e| e.to_string())?;
    for (key, g, total) in [
        ("/contig", contig as fn(usize, usize) -> u32, CONTIG_ROWS),
        ("/chunked", chunked, CHUNKED_ROWS),
    ] {
        let a = f.array::<u32>(key).map_err(|e| e.to_string())?;
        if a.shape() != [total, COLS] {
            return Err(format!("{key}: shape {:?}", a.shape()));
        }
        let a = a
            .into_dimensionality::<ndarray::Ix2>()
            .map_err(|e| e.to_string())?;
        for r in 0..total {
            let cols: Vec<usize> = if r % 61 == 0 || r == total - 1 {
                (0..COLS).collect()
            } else {
                vec![0, COLS - 1]
            };
            for c in cols {
                if a[[r, c]] != g(r, c) {
                    return Err(format!("{key}[{r}, {c}] is {}, not {}", a[[r, c]], g(r, c)));
                }
            }
        }
    }
    Ok(())
}

fn run() -> Result<String, String> {
    let dir = common::Scratch::new("big");
    let dir: &Path = &dir;
    let result = (|| {
        let mut peaks = Vec::new();
        for name in ["make", "to_h5", "to_asdf"] {
            let t = std::time::Instant::now();
            let peak = step(dir, name)?;
            peaks.push(format!(
                "{name} {} MiB in {:.1} s",
                peak >> 20,
                t.elapsed().as_secs_f64()
            ));
            if name == "to_h5" {
                // no longer needed: two files on disk at a time, not three
                std::fs::remove_file(dir.join("big.asdf")).map_err(|e| e.to_string())?;
            }
        }
        // every child before the checks: a child's peak starts at its parent's (Linux
        // keeps the high-water mark across fork and exec), and the checks read whole arrays
        let mut kind_peaks = Vec::new();
        for name in ["make_kinds", "kinds_to_h5"] {
            let t = std::time::Instant::now();
            let peak = step(dir, name)?;
            kind_peaks.push(format!(
                "{name} {} MiB in {:.1} s",
                peak >> 20,
                t.elapsed().as_secs_f64()
            ));
        }
        check_values(dir)?;
        std::fs::remove_file(dir.join("big.h5")).map_err(|e| e.to_string())?;
        std::fs::remove_file(dir.join("back.asdf")).map_err(|e| e.to_string())?;
        check_kinds(dir)?;
        // nothing left beside the files (no spill file)
        let mut left: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| e.to_string())?
            .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
            .collect();
        left.sort();
        if left != ["kinds.asdf", "kinds.h5"] {
            return Err(format!("files left in the folder: {left:?}"));
        }
        Ok(format!(
            "768 MiB of arrays, peak resident sets below {} MiB: {}; nine arrays of 136 MiB \
             that are views, masked or Blosc-compressed: {}",
            LIMIT >> 20,
            peaks.join(", "),
            kind_peaks.join(", ")
        ))
    })();
    result
}
