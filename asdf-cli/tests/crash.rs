//! Crash harness: kills a process with SIGKILL at many points while it writes a file, and
//! checks that the target always holds the old file or the new one, whole.
//!
//! Operations: `Writer::write_to_path` over an existing file, `write::update` (the default,
//! replacing the file), `write::update_with(.., UpdateMode::InPlace)`, `asdftool defragment`
//! over an existing output, and `asdftool convert` in every direction it converts (ASDF to
//! ASDF, ASDF to Blosc2 and back, ASDF to HDF5 and back, ASDF in FITS to ASDF), each over an
//! existing output of the target's format. For each, the operation is first run to its end
//! to learn the new content and how long it takes; then it is started again and again from
//! the old file and killed after a delay that sweeps the whole run. After every kill:
//! - the target reads (an ASDF file: every array, checksums verified; a Blosc2 frame: its
//!   array decoded; an HDF5 file: converted back to ASDF, every dataset read) as the old or
//!   the new content, nothing else;
//! - beside it there is nothing a user would trip on: no file but the target, except the
//!   hidden journal of an interrupted in-place update (which the next update consumes) and,
//!   for the instant between naming a finished temporary file and renaming it, that hidden
//!   file (which the next write removes);
//! - after the next complete operation nothing but the target is left.
//!
//! With `ASDF_CRASH_OUT=DIR`, every distinct state of an ASDF target is kept under
//! DIR/OPERATION/ with `old.asdf` and `new.asdf`; `tests/oracle/canonical.py states DIR/*`
//! then checks that python asdf reads each as the old or the new file (`.ci/run` does). The
//! states of Blosc2 and HDF5 targets are checked here only.
//!
//! This is a test without the libtest harness (`harness = false`): the same binary is the
//! child, told what to do by environment variables. `ASDF_CRASH_KILLS` sets the kill points
//! per operation (default 200; a quarter of them for each conversion), `ASDF_CRASH_ONLY=TEXT`
//! runs only the operations whose name holds TEXT (`convert_asdf_to_h5`, `update`, ...).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use asdf_core::write::Compression;
use asdf_core::write::{
    update, update_with, ArrayOptions, CompressionChoice, UpdateKind, UpdateMode, WriteOptions,
    Writer,
};
use asdf_core::{unstable::canonical, AsdfFile, Node};

const ROLE: &str = "ASDF_CRASH_ROLE";
const TARGET: &str = "ASDF_CRASH_TARGET";
const SOURCE: &str = "ASDF_CRASH_SOURCE";

/// Elements of each array: large enough that a write takes many milliseconds.
const N: usize = 1 << 17;

#[derive(Clone, Copy, Debug)]
enum Op {
    Write,
    Update,
    UpdateInPlace,
    Defragment,
    /// `asdftool convert` from the format of the source to the format of the target.
    Convert(Format, Format),
}

/// A format `asdftool convert` reads or writes, by the extension it is chosen by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Asdf,
    Blosc2,
    Hdf5,
    Fits,
}

impl Format {
    fn ext(self) -> &'static str {
        match self {
            Format::Asdf => "asdf",
            Format::Blosc2 => "b2nd",
            Format::Hdf5 => "h5",
            Format::Fits => "fits",
        }
    }
}

/// Every operation the harness kills.
fn operations() -> Vec<Op> {
    use Format::*;
    let mut ops = vec![
        Op::Write,
        Op::Update,
        Op::UpdateInPlace,
        Op::Defragment,
        Op::Convert(Asdf, Asdf),
        Op::Convert(Asdf, Blosc2),
        Op::Convert(Blosc2, Asdf),
        Op::Convert(Fits, Asdf),
    ];
    if cfg!(feature = "hdf5") {
        ops.extend([Op::Convert(Asdf, Hdf5), Op::Convert(Hdf5, Asdf)]);
    }
    ops
}

impl Op {
    fn name(self) -> String {
        match self {
            Op::Write => "write_to_path".into(),
            Op::Update => "update".into(),
            Op::UpdateInPlace => "update_in_place".into(),
            Op::Defragment => "defragment".into(),
            Op::Convert(from, to) => format!("convert_{}_to_{}", from.ext(), to.ext()),
        }
    }

    /// The format of the file the operation writes.
    fn target_format(self) -> Format {
        match self {
            Op::Convert(_, to) => to,
            _ => Format::Asdf,
        }
    }
}

fn main() -> ExitCode {
    if let Ok(role) = std::env::var(ROLE) {
        child(&role);
        return ExitCode::SUCCESS;
    }
    let kills = std::env::var("ASDF_CRASH_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200usize);
    let out = std::env::var_os("ASDF_CRASH_OUT").map(PathBuf::from);
    let mut failed = false;
    let only = std::env::var("ASDF_CRASH_ONLY").ok();
    for op in operations() {
        if only
            .as_ref()
            .is_some_and(|o| !op.name().contains(o.as_str()))
        {
            continue;
        }
        // the conversions all end in the one atomic writer the others exercise: a quarter of
        // the kill points each still sweeps every phase of the run
        let kills = match op {
            Op::Convert(..) => kills.div_ceil(4),
            _ => kills,
        };
        match harness(op, kills, out.as_deref()) {
            Ok(summary) => println!("crash {}: {summary}", op.name()),
            Err(e) => {
                println!("crash {}: FAILED\n{e}", op.name());
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

// ---- the child: one operation, killed at some point ----

/// A file with three arrays (one zlib-compressed) and a note; `seed` changes every value.
fn write_version(path: &Path, seed: u32, opts: WriteOptions) {
    // noise, which no codec shrinks: a Blosc2 frame of it takes as long to write as the file
    let a = ndarray::Array1::from_iter((0..N).map(|i| noise(i as u64 ^ u64::from(seed) << 32)));
    let b = ndarray::Array1::from_iter((0..N).map(|i| (i as i32) ^ seed as i32));
    let c = ndarray::Array1::from_iter((0..N).map(|i| ((i / 7) as u16).wrapping_add(seed as u16)));
    let mut w = Writer::new(opts);
    let na = w.add_array(&a);
    let nb = w.add_array(&b);
    let nc = w.add_array_with(
        &c,
        ArrayOptions {
            compression: Some(CompressionChoice::Codec(Compression::Zlib)),
            storage: None,
        },
    );
    let root = Node::map([
        ("a", na),
        ("b", nb),
        ("c", nc),
        ("note", Node::str(format!("version {seed}"))),
    ]);
    w.write_to_path(&root, path).unwrap();
}

/// A number in [0, 1) that looks random, from `x` (splitmix64).
fn noise(x: u64) -> f64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as f64 / 2f64.powi(64)
}

/// The file's tree with `note` replaced (arrays kept as they are in the file).
fn edited_tree(path: &Path, note: &str) -> Node {
    let f = AsdfFile::open(path).unwrap();
    let mut entries = Vec::new();
    for key in ["a", "b", "c"] {
        entries.push((key, f.get(&format!("/{key}")).unwrap().clone()));
    }
    entries.push(("note", Node::str(note)));
    Node::map(entries)
}

fn child(role: &str) {
    let target = PathBuf::from(std::env::var_os(TARGET).unwrap());
    let keep = WriteOptions::default().compression(CompressionChoice::Input);
    match role {
        "write" => write_version(&target, 2, WriteOptions::default()),
        "update" => {
            update(&target, &edited_tree(&target, "updated"), keep).unwrap();
        }
        "update-in-place" => {
            let kind = update_with(
                &target,
                &edited_tree(&target, "updated in place"),
                keep,
                UpdateMode::InPlace,
            )
            .unwrap();
            assert_eq!(kind, UpdateKind::InPlace);
        }
        _ => panic!("unknown role {role}"),
    }
}

// ---- the harness ----

/// What the target read as after one kill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Old,
    New,
}

fn scratch(op: Op) -> PathBuf {
    let d = std::env::temp_dir().join(format!("asdf-crash-{}-{}", op.name(), std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("work")).unwrap();
    d
}

fn asdftool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_asdftool"))
}

/// The command that performs `op` on `target`.
fn command(op: Op, target: &Path, source: &Path) -> Command {
    let mut cmd = match op {
        Op::Defragment => {
            let mut c = asdftool();
            c.arg("defragment").arg(source).arg("-o").arg(target);
            c
        }
        Op::Convert(from, to) => {
            let mut c = asdftool();
            c.arg("convert").arg(source).arg(target);
            if (from, to) == (Format::Asdf, Format::Blosc2) {
                c.args(["--array", "/a"]);
            }
            c
        }
        _ => {
            let mut c = Command::new(std::env::current_exe().unwrap());
            let role = match op {
                Op::Write => "write",
                Op::Update => "update",
                Op::UpdateInPlace => "update-in-place",
                Op::Defragment | Op::Convert(..) => unreachable!(),
            };
            c.env(ROLE, role).env(TARGET, target).env(SOURCE, source);
            c
        }
    };
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    cmd
}

/// `asdftool convert input output [args]`, run to its end.
fn convert(input: &Path, output: &Path, args: &[&str]) {
    let out = asdftool()
        .arg("convert")
        .arg(input)
        .arg(output)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "asdftool convert {} {}: {}",
        input.display(),
        output.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A file of `format` holding version `seed` (for Blosc2, its array `a`; for FITS, a file
/// of the test data, whatever the seed).
fn version_as(format: Format, seed: u32, dir: &Path, name: &str) -> PathBuf {
    let asdf = dir.join(format!("{name}-asdf.asdf"));
    // with spare room before the blocks for the in-place update
    write_version(&asdf, seed, WriteOptions::default().pad_tree(4096));
    let path = dir.join(format!("{name}.{}", format.ext()));
    match format {
        Format::Asdf => std::fs::rename(&asdf, &path).unwrap(),
        Format::Blosc2 => convert(&asdf, &path, &["--array", "/a"]),
        Format::Hdf5 => convert(&asdf, &path, &[]),
        Format::Fits => {
            let fixture = asdf_test_data::require_dir("asdf-in-fits")
                .unwrap_or_else(|| panic!("tests/data/asdf-in-fits is absent"))
                .join("image.fits");
            std::fs::copy(fixture, &path).unwrap();
        }
    }
    path
}

/// What a file reads as: an ASDF file's canonical form (checksums verified), a Blosc2
/// frame's array (its `b2nd` layer and the hash of its decoded bytes), an HDF5 file's
/// canonical form once converted to ASDF (every dataset read).
fn content_as(format: Format, path: &Path) -> Result<String, String> {
    match format {
        Format::Asdf | Format::Fits => content(path),
        Format::Blosc2 => {
            let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
            let frame = asdf_blosc2::Frame::parse(&bytes).map_err(|e| e.to_string())?;
            let nd = frame
                .b2nd()
                .ok_or("no b2nd metalayer")?
                .map_err(|e| e.to_string())?;
            let data = frame.b2nd_array(&nd).map_err(|e| e.to_string())?;
            Ok(format!("{nd:?} {:016x}", hash_of(&data)))
        }
        Format::Hdf5 => hdf5_content(path),
    }
}

#[cfg(feature = "hdf5")]
fn hdf5_content(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let asdf = asdf_hdf5::to_asdf_bytes(&bytes, &asdf_hdf5::ToAsdfOptions::default())
        .map_err(|e| e.to_string())?;
    let f = AsdfFile::from_bytes(asdf).map_err(|e| asdf_core::display_chain(&e))?;
    canonical::to_json(&f).map_err(|e| asdf_core::display_chain(&e))
}

#[cfg(not(feature = "hdf5"))]
fn hdf5_content(_: &Path) -> Result<String, String> {
    Err("built without the hdf5 feature".into())
}

/// Reads everything of the file at `path` (checksums verified) into its canonical form.
fn content(path: &Path) -> Result<String, String> {
    let f = AsdfFile::options()
        .verify_checksums(true)
        .open(path)
        .map_err(|e| asdf_core::display_chain(&e))?;
    canonical::to_json(&f).map_err(|e| asdf_core::display_chain(&e))
}

/// Names in `dir` other than `keep`.
fn others(dir: &Path, keep: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != keep)
        .collect();
    v.sort();
    v
}

fn harness(op: Op, kills: usize, out: Option<&Path>) -> Result<String, String> {
    let dir = scratch(op);
    let work = dir.join("work");
    let format = op.target_format();
    let target_name = format!("t.{}", format.ext());
    let target = work.join(&target_name);
    // The old file: version 1 in the target's format (with spare room before the blocks for
    // the in-place update).
    let old_file = version_as(format, 1, &dir, "old");
    // defragment's and convert's input: version 3 (FITS: a file of the test data).
    let source = match op {
        Op::Convert(from, _) => version_as(from, 3, &dir, "source"),
        _ => {
            let source = dir.join("source.asdf");
            write_version(&source, 3, WriteOptions::default());
            source
        }
    };
    let content = |path: &Path| content_as(format, path);

    // Three full runs: the new content and the longest duration (the machine may be busy).
    let mut full = std::time::Duration::ZERO;
    for _ in 0..3 {
        std::fs::copy(&old_file, &target).unwrap();
        let started = Instant::now();
        let status = command(op, &target, &source).status().unwrap();
        full = full.max(started.elapsed());
        if !status.success() {
            return Err(format!("the operation failed when not killed: {status}"));
        }
    }
    let new_file = dir.join(format!("new.{}", format.ext()));
    std::fs::copy(&target, &new_file).unwrap();
    let old = content(&old_file)?;
    let new = content(&new_file)?;
    if old == new {
        return Err("the operation did not change the content".into());
    }
    let journal = format!(".{target_name}.asdf-journal");
    // the hidden name of a finished temporary file of the target or of the journal
    let temp_prefixes = [format!(".{target_name}."), format!(".{journal}.")];

    // python asdf checks the states of ASDF targets (`canonical.py states`)
    let states = out.filter(|_| format == Format::Asdf).map(|o| {
        let d = o.join(op.name());
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy(&old_file, d.join("old.asdf")).unwrap();
        std::fs::copy(&new_file, d.join("new.asdf")).unwrap();
        d
    });
    let mut seen_states = BTreeMap::new();
    let mut seen: BTreeMap<u64, Result<Outcome, String>> = BTreeMap::new();
    let mut outcomes: BTreeMap<Outcome, usize> = BTreeMap::new();
    let (mut killed_running, mut journals, mut named_temps) = (0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    // Kill delays spread evenly (a golden-ratio sequence) over 0 .. 1.1 × the longest full
    // run; runs continue until `kills` of them were killed while the operation still ran.
    let mut i = 0usize;
    while killed_running < kills && i < kills * 4 {
        i += 1;
        for name in others(&work, "") {
            std::fs::remove_file(work.join(name)).unwrap();
        }
        std::fs::copy(&old_file, &target).unwrap();
        let delay = full.mul_f64(1.1 * (i as f64 * 0.618_033_988_75).fract());
        let mut child = command(op, &target, &source).spawn().unwrap();
        std::thread::sleep(delay);
        if child.try_wait().unwrap().is_none() {
            killed_running += 1;
        }
        let _ = child.kill();
        let _ = child.wait();

        // Each distinct state of the target (with its journal, which our reader reads) is
        // read once.
        let bytes = std::fs::read(&target).unwrap();
        let journal_bytes = std::fs::read(work.join(&journal)).ok();
        let key = hash_of(&(&bytes, &journal_bytes));
        let read = seen.entry(key).or_insert_with(|| match content(&target) {
            Ok(c) if c == old => Ok(Outcome::Old),
            Ok(c) if c == new => Ok(Outcome::New),
            Ok(_) => Err("neither old nor new".to_string()),
            Err(e) => Err(format!("unreadable: {e}")),
        });
        match read {
            Ok(o) => *outcomes.entry(*o).or_default() += 1,
            Err(e) => failures.push(format!("kill {i} after {delay:?}: {e}")),
        }
        for name in others(&work, &target_name) {
            if name == journal && matches!(op, Op::UpdateInPlace) {
                journals += 1;
            } else if temp_prefixes.iter().any(|p| name.starts_with(p.as_str()))
                && name.ends_with(".tmp")
            {
                named_temps += 1;
            } else {
                failures.push(format!("kill {i} after {delay:?}: left {name}"));
            }
        }
        if let Some(d) = &states {
            let key = format!("{:016x}", hash_of(&bytes));
            seen_states.entry(key.clone()).or_insert_with(|| {
                std::fs::write(d.join(format!("state-{key}.asdf")), &bytes).unwrap();
            });
        }
    }
    // The next complete operation leaves nothing but the target (it consumes a journal and
    // removes what a killed writer left).
    let status = command(op, &target, &source).status().unwrap();
    if !status.success() {
        failures.push(format!("the operation after the kills failed: {status}"));
    }
    let left = others(&work, &target_name);
    if !left.is_empty() {
        failures.push(format!("left after a complete operation: {left:?}"));
    }
    let (n_old, n_new) = (
        outcomes.get(&Outcome::Old).copied().unwrap_or(0),
        outcomes.get(&Outcome::New).copied().unwrap_or(0),
    );
    match content(&target) {
        Ok(c) if c == new => {}
        _ => failures
            .push("a complete operation after the kills did not give the new content".into()),
    }
    // The kills must have hit the operation while it ran, and seen its start.
    if killed_running < kills || n_old == 0 {
        failures.push(format!(
            "the kills did not sweep the operation: {killed_running} of {i} runs hit it running \
             ({kills} wanted), {n_old} old, {n_new} new (a full run takes {full:?})"
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    if failures.is_empty() {
        Ok(format!(
            "{i} runs killed, {killed_running} while running (a full run takes {full:?}): \
             {n_old} old, {n_new} new ({} distinct files); {journals} journals and {named_temps} named temporary \
             files left by a kill, none after the next run",
            seen.len()
        ))
    } else {
        Err(failures.join("\n"))
    }
}

fn hash_of(value: &impl std::hash::Hash) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}
