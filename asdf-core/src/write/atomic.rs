//! Writing to paths without ever losing data: the content goes to a temporary file beside the
//! target, is synced, renamed over the target, and the directory is synced; on any failure the
//! temporary file is removed and the target is untouched.
//!
//! On Linux the temporary file is anonymous (`O_TMPFILE`) until it is complete: it gets a
//! name only for the instant between linking it into the folder and renaming it over the
//! target, so a process killed while writing leaves nothing behind. Where the file system
//! has no anonymous files, a hidden `.NAME.PID-N.tmp` is used, which a kill can leave. The
//! next write of the same path removes such leftovers of processes that no longer run.

use std::fs::{self, File};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::file_writer::{write_file, Writeback};
use super::prepare::{self, Plan};
use super::{WriteError, WriteSummary, Writer};
use crate::yaml::Node;

/// A writable, seekable sink (the file, possibly wrapped).
pub(crate) trait WriteSeek: Write + Seek {}
impl<T: Write + Seek> WriteSeek for T {}

/// Wraps the temporary file before writing (tests inject failures here).
pub(crate) type Wrap<'x> = dyn FnMut(File) -> Box<dyn WriteSeek> + 'x;

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn temp_path(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new(""));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()))
}

pub(super) fn sync_dir(path: &Path) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // Directories cannot be opened for syncing everywhere; the rename is done either way.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// The temporary file being written.
enum Temp {
    /// Not linked into any folder yet (`O_TMPFILE`).
    Anonymous,
    /// A hidden file beside the target.
    Named(PathBuf),
}

/// Removes temporary files of earlier writes of `path` whose process is gone (killed between
/// naming its temporary file and renaming it, or writing through a named one): they are
/// `.NAME.PID-N.tmp` beside the target, and [`process_runs`] tells whether PID still runs.
#[cfg(target_os = "linux")]
fn remove_stale_temps(path: &Path) {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let prefix = format!(".{name}.");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|n| n.strip_suffix(".tmp"))
        else {
            continue;
        };
        let Some(pid) = rest.split_once('-').and_then(|(p, n)| {
            (n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty())
                .then(|| p.parse::<u32>().ok())
                .flatten()
        }) else {
            continue;
        };
        if pid != std::process::id() && !process_runs(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether a process with this id exists: `kill(pid, 0)` sends no signal and only checks
/// (EPERM: it exists but is another user's).
#[cfg(target_os = "linux")]
fn process_runs(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 delivers nothing to the process; the call reads no memory of ours.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(target_os = "linux"))]
fn remove_stale_temps(_: &Path) {}

/// Linux's own view of this process's open files: the only way an unprivileged process can
/// give an `O_TMPFILE` file a name (`linkat` of `/proc/self/fd/N`, open(2)). A kernel
/// interface, not a file of any machine's; without it the named temporary file is used.
#[cfg(target_os = "linux")]
const PROC_SELF_FD: &str = "/proc/self/fd";

/// Creates the temporary file for a write of `path`.
fn create_temp(path: &Path) -> std::io::Result<(File, Temp)> {
    remove_stale_temps(path);
    #[cfg(target_os = "linux")]
    if Path::new(PROC_SELF_FD).is_dir() {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        // File systems without O_TMPFILE refuse it (EOPNOTSUPP, EISDIR, EINVAL): fall back.
        if let Ok(f) = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o666)
            .custom_flags(libc::O_TMPFILE)
            .open(dir)
        {
            return Ok((f, Temp::Anonymous));
        }
    }
    let tmp = temp_path(path);
    let f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    Ok((f, Temp::Named(tmp)))
}

/// Gives the anonymous file `file` the name `to`.
#[cfg(target_os = "linux")]
fn link_anonymous(file: &File, to: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let from = CString::new(format!("{PROC_SELF_FD}/{}", file.as_raw_fd()))?;
    let to = CString::new(to.as_os_str().as_bytes())?;
    // SAFETY: linkat reads the two NUL-terminated strings, which live until the call
    // returns, and touches no other memory of ours. `file` keeps the descriptor that
    // `/proc/self/fd/N` names open for the call; AT_SYMLINK_FOLLOW links the file that
    // magic link points to (the anonymous file), as open(2) documents for O_TMPFILE.
    let r = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn link_anonymous(_: &File, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// Writes `path` through a temporary file: `f` writes the content; on success the file is
/// synced and renamed over `path`, on failure the temporary file is removed and `path` is
/// untouched. `wrap` wraps the file (tests inject failures so); `None` buffers it, and lets
/// kept blocks be copied into it by the kernel.
pub(crate) fn atomic_write(
    path: &Path,
    wrap: Option<&mut Wrap<'_>>,
    f: impl FnOnce(&mut dyn WriteSeek, &mut Writeback<'_>) -> Result<(), WriteError>,
) -> Result<(), WriteError> {
    let (file, temp) = create_temp(path)?;
    let sync = file.try_clone();
    let result = (|| {
        let sync = sync?;
        let (mut w, mut wb) = match wrap {
            Some(wrap) => (wrap(file), Writeback::file(&sync)),
            None => (buffered(file), Writeback::direct(&sync)),
        };
        f(&mut *w, &mut wb)?;
        w.flush()?;
        drop(w);
        sync.sync_all()?;
        Ok(sync)
    })();
    let sync = match result {
        Ok(sync) => sync,
        Err(e) => {
            if let Temp::Named(tmp) = &temp {
                let _ = fs::remove_file(tmp);
            }
            return Err(e);
        }
    };
    let tmp = match temp {
        Temp::Named(tmp) => tmp,
        Temp::Anonymous => {
            let tmp = temp_path(path);
            link_anonymous(&sync, &tmp)?;
            tmp
        }
    };
    drop(sync);
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(e.into());
    }
    sync_dir(path);
    Ok(())
}

fn buffered(f: File) -> Box<dyn WriteSeek> {
    Box::new(BufWriter::with_capacity(1 << 20, f))
}

pub(crate) fn write_to_path(
    writer: &Writer<'_>,
    root: &Node,
    path: &Path,
    mut wrap: Option<&mut Wrap<'_>>,
) -> Result<WriteSummary, WriteError> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "data".into());
    let Plan {
        root,
        tag_handles,
        blocks,
        externals,
        streamed,
    } = prepare::plan(writer, root, Some(&stem))?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut external_files = Vec::new();
    if !externals.is_empty() {
        let ext_writer = Writer::new(writer.opts.clone());
        for (name, job) in externals {
            let mut p = prepare::plan(&ext_writer, &super::empty_root(), None)?;
            p.blocks.push(job);
            let ext_path = dir.join(&name);
            atomic_write(&ext_path, wrap.as_deref_mut(), |w, wb| {
                write_file(&writer.opts, &p, &mut BoxedSink(w), wb).map(|_| ())
            })?;
            external_files.push(ext_path);
        }
    }
    let plan = Plan {
        root,
        tag_handles,
        blocks,
        externals: Vec::new(),
        streamed,
    };
    let mut summary = WriteSummary::default();
    atomic_write(path, wrap, |w, wb| {
        let (len, offsets) = write_file(&writer.opts, &plan, &mut BoxedSink(w), wb)?;
        summary.len = len;
        summary.block_offsets = offsets;
        Ok(())
    })?;
    summary.external_files = external_files;
    Ok(summary)
}

/// `&mut dyn WriteSeek` as a sized `Write + Seek`.
struct BoxedSink<'x>(&'x mut dyn WriteSeek);

impl Write for BoxedSink<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.0.write_all(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl Seek for BoxedSink<'_> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.0.seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::WriteOptions;
    use crate::yaml::Value;
    use crate::AsdfFile;

    use crate::write::test_sink::Failing;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("asdf-write-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn leftovers_of_dead_writers_are_removed_by_the_next_write() {
        let dir = tmpdir("stale");
        let path = dir.join("f.asdf");
        // PIDs above the kernel's maximum (2^22) never run; our own PID does.
        let dead = dir.join(".f.asdf.4194999-3.tmp");
        let ours = dir.join(format!(".f.asdf.{}-99.tmp", std::process::id()));
        let other = dir.join(".g.asdf.4194999-3.tmp");
        let unrelated = dir.join(".f.asdf.notes.tmp");
        for p in [&dead, &ours, &other, &unrelated] {
            fs::write(p, b"x").unwrap();
        }
        let w = Writer::new(WriteOptions::default());
        let root = Node::new(Value::Map(vec![(Node::str("a"), Node::str("b"))]));
        w.write_to_path(&root, &path).unwrap();
        assert!(!dead.exists(), "a dead writer's temporary file is removed");
        assert!(ours.exists() && other.exists() && unrelated.exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn failed_write_leaves_original_intact() {
        let dir = tmpdir("fail");
        let path = dir.join("f.asdf");
        let data: Vec<f64> = (0..100_000).map(f64::from).collect();
        let arr = ndarray::Array1::from(data);
        let mut w = Writer::new(WriteOptions::default());
        let n = w.add_array(&arr);
        let root = Node::new(Value::Map(vec![(Node::str("x"), n)]));
        w.write_to_path(&root, &path).unwrap();
        let original = fs::read(&path).unwrap();
        for budget in [0, 10, 500, 5000, 700_000] {
            let r = write_to_path(
                &w,
                &root,
                &path,
                Some(&mut |f| Box::new(Failing { inner: f, budget })),
            );
            assert!(matches!(r, Err(WriteError::Io(_))), "budget {budget}");
            assert_eq!(fs::read(&path).unwrap(), original);
            let leftovers: Vec<_> = fs::read_dir(&dir).unwrap().collect();
            assert_eq!(leftovers.len(), 1, "temporary file removed");
        }
        let f = AsdfFile::open(&path).unwrap();
        assert_eq!(f.array::<f64>("/x").unwrap(), arr.into_dyn());
        let _ = fs::remove_dir_all(&dir);
    }
}
