//! Crash harness: kills a process with SIGKILL at many points while it writes an ASDF file,
//! and checks that the target always holds the old file or the new one, whole.
//!
//! Operations: `Writer::write_to_path` over an existing file, `write::update` (the default,
//! replacing the file), `write::update_with(.., UpdateMode::InPlace)` and `asdftool
//! defragment` over an existing output. For each, the operation is first run to its end to
//! learn the new content and how long it takes; then it is started again and again from the
//! old file and killed after a delay that sweeps the whole run. After every kill:
//! - the target opens in this library and reads (every array, checksums verified) as the old
//!   or the new content, nothing else;
//! - beside it there is nothing a user would trip on: no file but the target, except the
//!   hidden journal of an interrupted in-place update (which the next update consumes) and,
//!   for the instant between naming a finished temporary file and renaming it, that hidden
//!   file (which the next write removes);
//! - after the next complete operation nothing but the target is left.
//!
//! With `ASDF_CRASH_OUT=DIR`, every distinct state of the target is kept under DIR/OPERATION/
//! with `old.asdf` and `new.asdf`; `tests/oracle/canonical.py states DIR/*` then checks that
//! python asdf reads each as the old or the new file (`.ci/run` does).
//!
//! This is a test without the libtest harness (`harness = false`): the same binary is the
//! child, told what to do by environment variables. `ASDF_CRASH_KILLS` sets the kill points
//! per operation (default 200).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use asdf_core::codec::Compression;
use asdf_core::write::{
    update, update_with, ArrayOptions, CompressionChoice, UpdateKind, UpdateMode, WriteOptions,
    Writer,
};
use asdf_core::{canonical, AsdfFile, Node};

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
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Write => "write_to_path",
            Op::Update => "update",
            Op::UpdateInPlace => "update_in_place",
            Op::Defragment => "defragment",
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
    for op in [Op::Write, Op::Update, Op::UpdateInPlace, Op::Defragment] {
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
    let a = ndarray::Array1::from_iter((0..N).map(|i| (i as f64) * 0.5 + f64::from(seed)));
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

/// The command that performs `op` on `target`.
fn command(op: Op, target: &Path, source: &Path) -> Command {
    let mut cmd = match op {
        Op::Defragment => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_asdftool"));
            c.arg("defragment").arg(source).arg("-o").arg(target);
            c
        }
        _ => {
            let mut c = Command::new(std::env::current_exe().unwrap());
            let role = match op {
                Op::Write => "write",
                Op::Update => "update",
                Op::UpdateInPlace => "update-in-place",
                Op::Defragment => unreachable!(),
            };
            c.env(ROLE, role).env(TARGET, target).env(SOURCE, source);
            c
        }
    };
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    cmd
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
    let target = work.join("t.asdf");
    let old_file = dir.join("old.asdf");
    let source = dir.join("source.asdf");
    // The old file: version 1 (with spare room before the blocks for the in-place update).
    write_version(&old_file, 1, WriteOptions::default().pad_tree(4096));
    // defragment's input: version 3, uncompressed.
    write_version(&source, 3, WriteOptions::default());

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
    let new_file = dir.join("new.asdf");
    std::fs::copy(&target, &new_file).unwrap();
    let old = content(&old_file)?;
    let new = content(&new_file)?;
    if old == new {
        return Err("the operation did not change the content".into());
    }
    let journal = format!(".{}.asdf-journal", "t.asdf");

    let states = out.map(|o| {
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
        for name in others(&work, "t.asdf") {
            if name == journal && matches!(op, Op::UpdateInPlace) {
                journals += 1;
            } else if name.starts_with(".t.asdf.") && name.ends_with(".tmp") {
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
    let left = others(&work, "t.asdf");
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
