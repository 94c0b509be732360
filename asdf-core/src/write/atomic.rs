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

use super::file_writer::write_file;
use super::platform::Writeback;
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
#[derive(Debug)]
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

/// An anonymous file (`O_TMPFILE`, read and write) in `dir`, or `None` where the system or
/// the file system has none.
fn anonymous_in(dir: &Path) -> Option<File> {
    #[cfg(target_os = "linux")]
    if Path::new(PROC_SELF_FD).is_dir() {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        // File systems without O_TMPFILE refuse it (EOPNOTSUPP, EISDIR, EINVAL): fall back.
        return fs::OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o666)
            .custom_flags(libc::O_TMPFILE)
            .open(dir)
            .ok();
    }
    let _ = dir;
    None
}

/// Creates the temporary file for a write of `path`.
fn create_temp(path: &Path) -> std::io::Result<(File, Temp)> {
    remove_stale_temps(path);
    if let Some(f) = anonymous_in(path.parent().unwrap_or(Path::new(""))) {
        return Ok((f, Temp::Anonymous));
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

/// A file written in place of a path, which appears there only whole: the content goes to a
/// temporary file beside the target; [`commit`](AtomicFile::commit) syncs it, renames it over
/// the target and syncs the folder, so that after a crash or a power cut the path holds the
/// old file or the new one, never a part. Dropped without a commit (an error, a panic), the
/// temporary file is removed and the target is untouched.
///
/// Every file the crates of asdf-rs write goes through this (the ASDF writer, the command
/// line tool's other outputs, the HDF5 converter).
#[derive(Debug)]
pub struct AtomicFile {
    file: File,
    /// `None` once committed.
    temp: Option<Temp>,
    path: PathBuf,
}

impl AtomicFile {
    /// Starts a write of `path` (removing what killed writes of it left).
    pub fn create(path: impl AsRef<Path>) -> std::io::Result<AtomicFile> {
        let path = path.as_ref();
        let (file, temp) = create_temp(path)?;
        Ok(AtomicFile {
            file,
            temp: Some(temp),
            path: path.to_path_buf(),
        })
    }

    /// The temporary file, to write the content to.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The temporary file, to write the content to.
    pub fn file_mut(&mut self) -> &mut File {
        &mut self.file
    }

    /// Syncs the content, puts it in place of the target and syncs the folder. On an error
    /// the temporary file is removed and the target is untouched.
    pub fn commit(mut self) -> std::io::Result<()> {
        self.file.sync_all()?;
        let tmp = match self.temp.take() {
            Some(Temp::Named(tmp)) => tmp,
            Some(Temp::Anonymous) | None => {
                let tmp = temp_path(&self.path);
                link_anonymous(&self.file, &tmp)?;
                tmp
            }
        };
        if let Err(e) = fs::rename(&tmp, &self.path) {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        sync_dir(&self.path);
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // an anonymous file vanishes with its descriptor; a named one is removed
        if let Some(Temp::Named(tmp)) = &self.temp {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// A file for scratch data (read and written by position), in a chosen folder, that leaves
/// nothing behind: on Linux it never has a name (`O_TMPFILE`), so even a killed process
/// leaves no file; elsewhere (or on file systems without anonymous files) it is a hidden
/// `.NAME.PID-N.tmp` removed when dropped, and by the next scratch file of that name once its
/// process is gone.
#[derive(Debug)]
pub struct ScratchFile {
    file: File,
    path: Option<PathBuf>,
}

impl ScratchFile {
    /// A new scratch file in `dir`; `name` names it where it needs a name.
    pub fn create_in(dir: impl AsRef<Path>, name: &str) -> std::io::Result<ScratchFile> {
        let dir = dir.as_ref();
        if let Some(file) = anonymous_in(dir) {
            return Ok(ScratchFile { file, path: None });
        }
        let like = dir.join(name);
        remove_stale_temps(&like);
        let path = temp_path(&like);
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok(ScratchFile {
            file,
            path: Some(path),
        })
    }

    /// The file.
    pub fn file(&self) -> &File {
        &self.file
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = fs::remove_file(path);
        }
    }
}

/// Writes `path` through an [`AtomicFile`]: `write` fills the temporary file (through a
/// buffer it flushes), which then replaces `path`; on any error from `write` or the commit,
/// `path` is untouched and nothing is left beside it.
pub fn write_atomically<E: From<std::io::Error>>(
    path: impl AsRef<Path>,
    write: impl FnOnce(&mut BufWriter<&mut File>) -> Result<(), E>,
) -> Result<(), E> {
    let mut out = AtomicFile::create(path)?;
    {
        let mut w = BufWriter::with_capacity(1 << 20, out.file_mut());
        write(&mut w)?;
        w.flush()?;
    }
    out.commit()?;
    Ok(())
}

/// Writes `path` through an [`AtomicFile`]: `f` writes the content; on success the file is
/// synced and renamed over `path`, on failure the temporary file is removed and `path` is
/// untouched. `wrap` wraps the file (tests inject failures so); `None` buffers it, and lets
/// kept blocks be copied into it by the kernel.
pub(crate) fn atomic_write(
    path: &Path,
    wrap: Option<&mut Wrap<'_>>,
    f: impl FnOnce(&mut dyn WriteSeek, &mut Writeback<'_>) -> Result<(), WriteError>,
) -> Result<(), WriteError> {
    let out = AtomicFile::create(path)?;
    {
        let sink = out.file().try_clone()?;
        let (mut w, mut wb) = match wrap {
            Some(wrap) => (wrap(sink), Writeback::file(out.file())),
            None => (buffered(sink), Writeback::direct(out.file())),
        };
        f(&mut *w, &mut wb)?;
        w.flush()?;
    }
    out.commit()?;
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
        warnings,
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
        warnings: Vec::new(),
    };
    let mut summary = WriteSummary {
        warnings,
        ..WriteSummary::default()
    };
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

    #[cfg(unix)]
    #[test]
    fn scratch_files_leave_nothing() {
        let dir = tmpdir("scratch");
        let s = ScratchFile::create_in(&dir, "x.spill").unwrap();
        let mut f = s.file();
        f.write_all(b"scratch").unwrap();
        let mut back = [0u8; 7];
        std::os::unix::fs::FileExt::read_exact_at(s.file(), &mut back, 0).unwrap();
        assert_eq!(&back, b"scratch");
        if cfg!(target_os = "linux") {
            // anonymous: no name in the folder while it is open
            assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        }
        drop(s);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn atomic_file_replaces_whole_or_not_at_all() {
        let dir = tmpdir("atomic-file");
        let path = dir.join("out.bin");
        fs::write(&path, b"old").unwrap();
        // dropped without a commit: the target is the old file, nothing is left beside it
        let mut f = AtomicFile::create(&path).unwrap();
        f.file_mut().write_all(b"partial").unwrap();
        drop(f);
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        // an error from the writer: the same, and the error is the writer's
        let r = write_atomically(&path, |w| {
            w.write_all(&[7u8; 3 << 20])?;
            Err(std::io::Error::other("stop"))
        });
        assert_eq!(r.unwrap_err().to_string(), "stop");
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        // success: the new content, nothing else
        write_atomically(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        // into a folder that does not exist: an error, no file
        let missing = dir.join("no").join("out.bin");
        assert!(write_atomically(&missing, |w| w.write_all(b"x")).is_err());
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
