//! Datasets larger than memory convert band by band in both directions, with memory bounded
//! by a few bands: 768 MiB of array data (a 512 MiB contiguous array, a 256 MiB one in
//! `lz4` blocks recorded with an HDF5 chunk shape) go ASDF → HDF5 → ASDF, each step in a
//! child process (this same program, `harness = false`) that reports its peak resident set
//! (`getrusage`); each peak must stay below [`LIMIT`], several times less than the data. The
//! values are then checked: the HDF5 file through hdf5-reader (chunk shape, and rows read
//! band by band), the final ASDF file through our reader. Linux only (`ru_maxrss`).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use asdf_core::array::{ArrayOptions, ByteOrder, DType, ScalarType};
use asdf_core::codec::Compression;
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
    let peak = text
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse::<u64>().ok())
        .ok_or_else(|| format!("{name}: no peak in {text:?}"))?;
    if peak > LIMIT {
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
    let dir = std::env::temp_dir().join(format!("asdf-hdf5-big-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let result = (|| {
        let mut peaks = Vec::new();
        for name in ["make", "to_h5", "to_asdf"] {
            let t = std::time::Instant::now();
            let peak = step(&dir, name)?;
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
        check_values(&dir)?;
        Ok(format!(
            "768 MiB of arrays, peak resident sets below {} MiB: {}",
            LIMIT >> 20,
            peaks.join(", ")
        ))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
