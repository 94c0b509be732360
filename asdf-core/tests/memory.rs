//! Memory is bounded by the input: opening and fully reading (the canonical form, which reads
//! every block, array, mask and alias) any file of the test corpora, of the fuzz seed corpus
//! and of the hostile inputs below peaks below 2 × the file's size + 64 MiB of resident
//! memory. Declared sizes (block sizes, shapes, alias fan-out) never drive allocation.
//!
//! Each file is read in a child process (this same program, `harness = false`), which
//! reports its own peak resident set (`VmHWM` of /proc/self/status) after the read. Linux only.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use asdf_core::{unstable::canonical, AsdfFile};

const CHILD: &str = "ASDF_MEMORY_CHILD";
const SLACK: u64 = 64 << 20;

fn main() -> ExitCode {
    if let Some(path) = std::env::var_os(CHILD) {
        child(Path::new(&path));
        return ExitCode::SUCCESS;
    }
    if !cfg!(target_os = "linux") {
        println!("memory: needs /proc/self/status (Linux)");
        return ExitCode::FAILURE;
    }
    match run() {
        Ok(summary) => {
            println!("memory: {summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("memory: FAILED\n{e}");
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

fn child(path: &Path) {
    let before = peak_rss();
    let bytes = std::fs::read(path).unwrap();
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let outcome = match AsdfFile::options().open_bytes(bytes, dir) {
        Ok(f) => match canonical::to_json(&f) {
            Ok(_) => "read",
            Err(_) => "read error",
        },
        Err(_) => "open error",
    };
    println!("{} {} {outcome}", before, peak_rss());
}

// ---- hostile inputs that claim more than they hold ----

const HEADER: &str = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n";

fn block(compression: &[u8; 4], allocated: u64, used: u64, data_size: u64, data: &[u8]) -> Vec<u8> {
    let mut out = b"\xd3BLK".to_vec();
    out.extend_from_slice(&48u16.to_be_bytes());
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(compression);
    out.extend_from_slice(&allocated.to_be_bytes());
    out.extend_from_slice(&used.to_be_bytes());
    out.extend_from_slice(&data_size.to_be_bytes());
    out.extend_from_slice(&[0u8; 16]);
    out.extend_from_slice(data);
    out
}

fn zlib(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn hostile() -> Vec<(&'static str, Vec<u8>)> {
    let nd = |shape: &str, dtype: &str| {
        format!(
            "{HEADER}a: !core/ndarray-1.1.0 {{source: 0, datatype: {dtype}, byteorder: little, shape: {shape}}}\n...\n"
        )
        .into_bytes()
    };
    let with = |mut tree: Vec<u8>, blk: Vec<u8>| {
        tree.extend_from_slice(&blk);
        tree
    };
    let small = zlib(&[7u8; 4096]);
    let mut laughs = String::from(HEADER);
    laughs.push_str("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        laughs.push_str(&format!(
            "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
        ));
    }
    laughs.push_str("...\n");
    vec![
        (
            "block claims 1 TiB stored",
            with(nd("[4]", "int32"), block(b"\0\0\0\0", 1 << 40, 1 << 40, 1 << 40, &[1; 16])),
        ),
        (
            "zlib block claims 1 TiB decoded",
            with(
                nd("[1099511627776]", "uint8"),
                block(b"zlib", small.len() as u64, small.len() as u64, 1 << 40, &small),
            ),
        ),
        (
            "zlib block decodes to more than it claims",
            with(
                nd("[16]", "uint8"),
                block(b"zlib", small.len() as u64, small.len() as u64, 16, &small),
            ),
        ),
        (
            "shape of 2^60 elements over a 16-byte block",
            with(nd("[1152921504606846976]", "int32"), block(b"\0\0\0\0", 16, 16, 16, &[1; 16])),
        ),
        (
            "shape whose product overflows",
            with(nd("[4294967296, 4294967296, 16]", "int32"), block(b"\0\0\0\0", 16, 16, 16, &[1; 16])),
        ),
        (
            "inline array with a huge shape",
            format!("{HEADER}a: !core/ndarray-1.1.0 {{data: [1, 2, 3], datatype: int64, shape: [1000000000000]}}\n...\n").into_bytes(),
        ),
        ("alias fan-out of 10^12 nodes", laughs.into_bytes()),
        (
            "nesting 100000 deep",
            format!("{HEADER}a: {}{}\n...\n", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
        ),
        (
            "block index pointing far beyond the file",
            {
                let mut f = with(nd("[4]", "int32"), block(b"\0\0\0\0", 16, 16, 16, &[1; 16]));
                f.extend_from_slice(b"#ASDF BLOCK INDEX\n%YAML 1.1\n--- [1, 99999999999999]\n...\n");
                f
            },
        ),
        (
            "string datatype of 2^40 characters",
            with(nd("[1]", "[ucs4, 1099511627776]"), block(b"\0\0\0\0", 16, 16, 16, &[1; 16])),
        ),
    ]
}

// ---- the harness ----

fn corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        asdf_test_data::REFERENCE_FILES,
        asdf_test_data::FIXTURES,
        asdf_test_data::LAYOUTS,
    ] {
        if let Some(d) = asdf_test_data::require_dir(dir) {
            files.extend(asdf_test_data::files_with_suffix(&d, &[".asdf", ".yaml"]));
        }
    }
    // The committed fuzz seeds and crash regressions, whatever their names.
    let fuzz = asdf_test_data::repository_dir().join("fuzz");
    for sub in ["seeds", "regressions"] {
        collect(&fuzz.join(sub), &mut files);
    }
    files
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        // a link (fuzz/seeds/manifest shares open_read's seeds) is measured where it leads
        if e.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Runs the child on `path`: (peak before reading, peak after, outcome).
fn measure(path: &Path) -> Result<(u64, u64, String), String> {
    // Without backtraces: libyaml-safer panics on a few inputs (caught, and turned into a
    // syntax error), and symbolising a backtrace for the panic message costs the process
    // more than 100 MiB that the library itself never uses.
    let out = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, path)
        .env("RUST_BACKTRACE", "0")
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "the reading process failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.split_whitespace();
    let before = it.next().and_then(|n| n.parse().ok()).ok_or("no report")?;
    let after = it.next().and_then(|n| n.parse().ok()).ok_or("no report")?;
    Ok((before, after, it.collect::<Vec<_>>().join(" ")))
}

fn run() -> Result<String, String> {
    let scratch = std::env::temp_dir().join(format!("asdf-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let mut files = corpus_files();
    for (i, (_, bytes)) in hostile().iter().enumerate() {
        let p = scratch.join(format!("hostile-{i:02}.asdf"));
        std::fs::write(&p, bytes).unwrap();
        files.push(p);
    }
    let names: Vec<&str> = hostile().iter().map(|(n, _)| *n).collect();
    let mut failures = Vec::new();
    let mut worst = (0u64, String::new());
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for f in &files {
        let size = std::fs::metadata(f).unwrap().len();
        let limit = 2 * size + SLACK;
        let label = match f.strip_prefix(&scratch) {
            Ok(rel) => {
                let i: usize = rel.to_string_lossy()[8..10].parse().unwrap();
                format!("hostile: {}", names[i])
            }
            Err(_) => f.display().to_string(),
        };
        match measure(f) {
            Ok((before, peak, outcome)) => {
                *outcomes.entry(outcome).or_default() += 1;
                let grown = peak.saturating_sub(before);
                if grown > worst.0 {
                    worst = (grown, format!("{label} ({size} bytes): +{grown} bytes"));
                }
                if peak > limit {
                    failures.push(format!("{label}: peak {peak} bytes > 2 × {size} + 64 MiB"));
                }
            }
            Err(e) => failures.push(format!("{label}: {e}")),
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if failures.is_empty() {
        Ok(format!(
            "{} files, each within 2 × size + 64 MiB ({outcomes:?}); largest growth of the peak while reading: {}",
            files.len(),
            worst.1
        ))
    } else {
        Err(failures.join("\n"))
    }
}
