//! `AsdfFile::dyn_array` reads a C-contiguous block-backed array straight into the array's
//! own memory, as `array::<T>` does: the same values as the general path (any datatype, byte
//! order, offset, codec, with or without checksum verification), and one copy of the data in
//! memory, not two (the block cache plus the array bound from it).
//!
//! `harness = false`: the memory check reads in a child process (this same program), which
//! reports its own peak resident set. Linux only.

mod common;

use std::path::Path;
use std::process::{Command, ExitCode};

use asdf_core::array::{ByteOrder, DType, DynArray, Field, ScalarType};
use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
use asdf_core::{AsdfFile, Node, Progress};
use common::Scratch;

/// One check: a summary, or what went wrong.
type Check = fn(&Path) -> Result<String, String>;

const CHILD: &str = "ASDF_DYN_DIRECT_CHILD";
/// Elements of the large array of the memory check: 256 MiB of float64.
const BIG: usize = 32 << 20;

fn main() -> ExitCode {
    if let Some(path) = std::env::var_os(CHILD) {
        child(Path::new(&path));
        return ExitCode::SUCCESS;
    }
    if !cfg!(target_os = "linux") {
        println!("dyn_direct: needs /proc/self/status (Linux)");
        return ExitCode::FAILURE;
    }
    let dir = Scratch::new("dyn-direct");
    let checks: [(&str, Check); 4] = [
        ("same values on every path", same_values),
        ("checksum verified on the direct path", checksum_verified),
        ("progress reported as the array is read", progress_reported),
        ("one copy in memory", one_copy),
    ];
    let mut failed = false;
    for (name, check) in checks {
        match check(&dir) {
            Ok(summary) => println!("dyn_direct: {name}: ok ({summary})"),
            Err(e) => {
                println!("dyn_direct: {name}: FAILED\n{e}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn scalar(ty: ScalarType, order: ByteOrder) -> DType {
    DType::scalar(ty, order)
}

/// Arrays of several datatypes and byte orders, with their bytes as stored.
fn arrays() -> Vec<(&'static str, DynArray)> {
    let f8_be: Vec<u8> = (0..12)
        .flat_map(|i| (i as f64 * 1.5).to_be_bytes())
        .collect();
    let i2_le: Vec<u8> = (0..9)
        .flat_map(|i| (i as i16 * -300).to_le_bytes())
        .collect();
    let rec: Vec<u8> = (0..3i32)
        .flat_map(|i| [i.to_be_bytes().to_vec(), (i as f64).to_le_bytes().to_vec()])
        .flatten()
        .collect();
    vec![
        (
            "f8_be",
            DynArray {
                dtype: scalar(ScalarType::Float64, ByteOrder::Big),
                shape: vec![3, 4],
                data: f8_be,
            },
        ),
        (
            "i2_le",
            DynArray {
                dtype: scalar(ScalarType::Int16, ByteOrder::Little),
                shape: vec![9],
                data: i2_le,
            },
        ),
        (
            "bool",
            DynArray {
                dtype: scalar(ScalarType::Bool8, ByteOrder::Big),
                shape: vec![5],
                data: vec![1, 0, 0, 1, 1],
            },
        ),
        (
            "u1",
            DynArray {
                dtype: scalar(ScalarType::UInt8, ByteOrder::Big),
                shape: vec![2, 2, 2],
                data: (0..8).collect(),
            },
        ),
        (
            "ascii",
            DynArray {
                dtype: scalar(ScalarType::Ascii(3), ByteOrder::Big),
                shape: vec![2],
                data: b"ab\0xyz".to_vec(),
            },
        ),
        (
            "record",
            DynArray {
                dtype: DType::Record(vec![
                    Field {
                        name: "id".into(),
                        dtype: scalar(ScalarType::Int32, ByteOrder::Big),
                        shape: vec![],
                    },
                    Field {
                        name: "x".into(),
                        dtype: scalar(ScalarType::Float64, ByteOrder::Little),
                        shape: vec![],
                    },
                ]),
                shape: vec![3],
                data: rec,
            },
        ),
    ]
}

fn same(name: &str, got: &DynArray, want: &DynArray) -> Result<(), String> {
    if got.dtype != want.dtype || got.shape != want.shape || got.data != want.data {
        return Err(format!(
            "{name}: read {:?} {:?} {:?}, wrote {:?} {:?} {:?}",
            got.dtype, got.shape, got.data, want.dtype, want.shape, want.data
        ));
    }
    Ok(())
}

/// Every array, and two views of a float64 base (one contiguous at an offset, one strided),
/// written plain and with each codec, read back from a file opened in every way: the same
/// dtype, shape and bytes as written.
fn same_values(dir: &Path) -> Result<String, String> {
    let base: Vec<u8> = (0..10)
        .flat_map(|i| (i as f64 + 0.25).to_le_bytes())
        .collect();
    let base = DynArray {
        dtype: scalar(ScalarType::Float64, ByteOrder::Little),
        shape: vec![10],
        data: base,
    };
    let contiguous_view = DynArray {
        dtype: base.dtype.clone(),
        shape: vec![4],
        data: base.data[16..48].to_vec(),
    };
    let strided_view = DynArray {
        dtype: base.dtype.clone(),
        shape: vec![3],
        data: [&base.data[8..16], &base.data[24..32], &base.data[40..48]].concat(),
    };
    let mut reads = 0;
    let codecs = [
        None,
        Some(Compression::Zlib),
        Some(Compression::Lz4),
        Some(Compression::Zstd),
        Some(Compression::Bzp2),
    ];
    for codec in codecs {
        let choice = codec.map_or(CompressionChoice::None, CompressionChoice::Codec);
        let all = arrays();
        let mut w = Writer::new(WriteOptions::default().compression(choice));
        let mut entries: Vec<(String, Node)> = all
            .iter()
            .map(|(name, a)| (name.to_string(), w.add_array(a)))
            .collect();
        let b = w.add_array(&base);
        let cv = w.add_view(&b, 16, &[4], &[8]).ok_or("contiguous view")?;
        let sv = w.add_view(&b, 8, &[3], &[16]).ok_or("strided view")?;
        entries.extend([("base".into(), b), ("cv".into(), cv), ("sv".into(), sv)]);
        let path = dir.join(format!("values-{codec:?}.asdf"));
        w.write_to_path(&Node::map(entries), &path)
            .map_err(|e| e.to_string())?;
        let mut want: Vec<(&str, &DynArray)> = all.iter().map(|(n, a)| (*n, a)).collect();
        want.extend([
            ("base", &base),
            ("cv", &contiguous_view),
            ("sv", &strided_view),
        ]);
        for (mmap, verify) in [(false, false), (false, true), (true, false), (true, true)] {
            let f = AsdfFile::options()
                .mmap(mmap)
                .verify_checksums(verify)
                .open(&path)
                .map_err(|e| e.to_string())?;
            for (name, a) in &want {
                let got = f
                    .dyn_array(&format!("/{name}"))
                    .map_err(|e| e.to_string())?;
                same(
                    &format!("{codec:?} mmap {mmap} verify {verify} {name}"),
                    &got,
                    a,
                )?;
                reads += 1;
            }
        }
        let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
        let f = AsdfFile::from_bytes(bytes).map_err(|e| e.to_string())?;
        for (name, a) in &want {
            let got = f
                .dyn_array(&format!("/{name}"))
                .map_err(|e| e.to_string())?;
            same(&format!("{codec:?} from bytes {name}"), &got, a)?;
            reads += 1;
        }
    }
    Ok(format!("{reads} reads"))
}

/// A byte of an uncompressed block's data changed after writing: `dyn_array` of a file
/// opened (without a memory map) to verify checksums fails with the block's checksum error,
/// and without verification reads the changed value.
fn checksum_verified(dir: &Path) -> Result<String, String> {
    let a = DynArray {
        dtype: scalar(ScalarType::UInt8, ByteOrder::Little),
        shape: vec![4096],
        data: (0..4096).map(|i| (i % 251) as u8).collect(),
    };
    let mut w = Writer::new(WriteOptions::default());
    let n = w.add_array(&a);
    let path = dir.join("corrupt.asdf");
    w.write_to_path(&Node::map(vec![("a", n)]), &path)
        .map_err(|e| e.to_string())?;
    let f = AsdfFile::open(&path).map_err(|e| e.to_string())?;
    let at = f.blocks()[0].data_offset() as usize + 1000;
    drop(f);
    let mut bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
    bytes[at] ^= 0xff;
    std::fs::write(&path, &bytes).map_err(|e| e.to_string())?;
    let verified = AsdfFile::options()
        .verify_checksums(true)
        .open(&path)
        .map_err(|e| e.to_string())?;
    match verified.dyn_array("/a") {
        Err(asdf_core::Error::Checksum { .. }) => {}
        other => return Err(format!("verified read of a changed block: {other:?}")),
    }
    let plain = AsdfFile::open(&path).map_err(|e| e.to_string())?;
    let got = plain.dyn_array("/a").map_err(|e| e.to_string())?;
    if got.data[1000] != a.data[1000] ^ 0xff {
        return Err("an unverified read does not see the changed byte".into());
    }
    Ok("Error::Checksum".into())
}

/// `dyn_array_with_progress` on a 40 MiB float64 array, plain (with and without checksum
/// verification) and compressed: the same array as `dyn_array`; reports that never go back
/// and end at the bytes read or decoded; several reports where the read is metered (plain
/// reads every 32 MiB, zlib and zstd every 8 MiB decoded), one at the end for lz4 (decoded
/// on several threads at once).
fn progress_reported(dir: &Path) -> Result<String, String> {
    const N: usize = 5 << 20;
    let a = DynArray {
        dtype: scalar(ScalarType::Float64, ByteOrder::Little),
        shape: vec![N],
        data: (0..N)
            .flat_map(|i| ((i % 1000) as f64).to_le_bytes())
            .collect(),
    };
    let bytes = (N * 8) as u64;
    let mut summary = Vec::new();
    let cases = [
        (None, false, 2),
        (None, true, 2),
        (Some(Compression::Zlib), false, 5),
        (Some(Compression::Zstd), true, 5),
        (Some(Compression::Lz4), false, 1),
    ];
    for (codec, verify, at_least) in cases {
        let choice = codec.map_or(CompressionChoice::None, CompressionChoice::Codec);
        let mut w = Writer::new(WriteOptions::default().compression(choice));
        let n = w.add_array(&a);
        let path = dir.join(format!("progress-{codec:?}.asdf"));
        w.write_to_path(&Node::map(vec![("a", n)]), &path)
            .map_err(|e| e.to_string())?;
        let f = AsdfFile::options()
            .verify_checksums(verify)
            .open(&path)
            .map_err(|e| e.to_string())?;
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let s = seen.clone();
        let progress = Progress::new(move |d, t| s.lock().unwrap().push((d, t)));
        let got = f
            .dyn_array_with_progress("/a", &progress)
            .map_err(|e| e.to_string())?;
        let case = format!("{codec:?} verify {verify}");
        same(&case, &got, &a)?;
        let seen = seen.lock().unwrap().clone();
        // what is read: the stored block when it is hashed, else the array's bytes (or
        // the bytes decoded)
        let total = if verify && codec.is_none() {
            f.blocks()[0].used_size
        } else {
            bytes
        };
        if seen.last() != Some(&(total, total)) {
            return Err(format!(
                "{case}: last report {:?}, {total} expected",
                seen.last()
            ));
        }
        if seen.windows(2).any(|w| w[1].0 < w[0].0 || w[1].1 != total) {
            return Err(format!("{case}: reports go back or change total: {seen:?}"));
        }
        if seen.len() < at_least || (at_least == 1 && seen.len() != 1) {
            return Err(format!(
                "{case}: {} reports, {at_least} expected: {seen:?}",
                seen.len()
            ));
        }
        summary.push(format!("{case}: {}", seen.len()));
    }
    Ok(summary.join(", "))
}

/// Peak resident set of this process, in bytes: `VmHWM` of /proc/self/status, the high-water
/// mark of this program's own memory (`getrusage`'s figure would carry the parent's peak
/// over the `exec` of a `vfork`ed child).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    kib * 1024
}

/// The child: opens the file (no memory map, the default), reads `/data` with `dyn_array`,
/// and prints its peak resident set before and after, and the sum of the values read.
fn child(path: &Path) {
    let before = peak_rss();
    let f = AsdfFile::open(path).unwrap();
    let a = f.dyn_array("/data").unwrap();
    let sum: f64 = a
        .data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .sum();
    println!("{before} {} {sum}", peak_rss());
}

/// A 256 MiB float64 array read with `dyn_array` raises the peak resident set by about its
/// size: read once into the array, not into the block cache and then copied (which took
/// twice its size).
fn one_copy(dir: &Path) -> Result<String, String> {
    let path = dir.join("big.asdf");
    let data: Vec<u8> = (0..BIG)
        .flat_map(|i| ((i % 1000) as f64).to_le_bytes())
        .collect();
    let a = DynArray {
        dtype: scalar(ScalarType::Float64, ByteOrder::Little),
        shape: vec![BIG],
        data,
    };
    let mut w = Writer::new(WriteOptions::default());
    let n = w.add_array(&a);
    w.write_to_path(&Node::map(vec![("data", n)]), &path)
        .map_err(|e| e.to_string())?;
    drop(w);
    drop(a);
    let out = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .env(CHILD, &path)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "child failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let fields: Vec<&str> = text.split_whitespace().collect();
    let [before, after, sum] = fields[..] else {
        return Err(format!("child printed {text:?}"));
    };
    let parse = |s: &str| s.parse::<f64>().map_err(|e| format!("{s}: {e}"));
    let (before, after, sum) = (parse(before)?, parse(after)?, parse(sum)?);
    // 0 + 1 + ... + 999, repeated BIG / 1000 times, plus the first BIG % 1000 values
    let full = (BIG / 1000) as f64 * 499_500.0;
    let rest = BIG % 1000;
    let want = full + (rest * (rest - 1) / 2) as f64;
    if sum != want {
        return Err(format!("sum of the values read {sum}, written {want}"));
    }
    let size = (BIG * 8) as f64;
    let grew = after - before;
    if grew > size * 1.25 {
        return Err(format!(
            "peak resident set grew by {:.0} MiB reading a {:.0} MiB array (at most {:.0} MiB \
             expected: one copy)",
            grew / 1048576.0,
            size / 1048576.0,
            size * 1.25 / 1048576.0
        ));
    }
    Ok(format!(
        "peak grew {:.0} MiB for {:.0} MiB",
        grew / 1048576.0,
        size / 1048576.0
    ))
}
