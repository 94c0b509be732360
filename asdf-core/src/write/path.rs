//! Writing to paths without ever losing data: temporary file, fsync, rename, fsync of the
//! directory; in-place update of the tree when it fits before the first block.

use std::fs::{self, File};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::blocks::{head_text, write_file, Writeback};
use super::prepare::{self, Plan};
use super::{WriteError, WriteOptions, WriteSummary, Writer};
use crate::file::journal_path;
use crate::yaml::Node;
use crate::AsdfFile;

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

fn sync_dir(path: &Path) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // Directories cannot be opened for syncing everywhere; the rename is done either way.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Writes `path` through a temporary file: `f` writes the content; on success the file is
/// synced and renamed over `path`, on failure the temporary file is removed and `path` is
/// untouched.
pub(crate) fn atomic_write(
    path: &Path,
    wrap: &mut Wrap<'_>,
    f: impl FnOnce(&mut dyn WriteSeek, &mut Writeback<'_>) -> Result<(), WriteError>,
) -> Result<(), WriteError> {
    let tmp = temp_path(path);
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    let sync = file.try_clone();
    let result = (|| {
        let sync = sync?;
        let mut w = wrap(file);
        f(&mut *w, &mut Writeback::file(&sync))?;
        w.flush()?;
        drop(w);
        sync.sync_all()?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(e.into());
    }
    sync_dir(path);
    Ok(())
}

pub(crate) fn buffered(f: File) -> Box<dyn WriteSeek> {
    Box::new(BufWriter::with_capacity(1 << 20, f))
}

pub(crate) fn write_to_path(
    writer: &Writer<'_>,
    root: &Node,
    path: &Path,
    wrap: &mut Wrap<'_>,
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
            atomic_write(&ext_path, &mut |f| wrap(f), |w, wb| {
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

/// How [`update`] wrote the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpdateKind {
    /// The new tree fit before the first block and was written in place; blocks untouched.
    InPlace,
    /// The file was rewritten through a temporary file.
    Rewritten,
}

/// Replaces the tree of the ASDF file at `path` with `root` (a tree read from that file,
/// edited; its ndarray nodes keep referring to the file's blocks).
///
/// When the blocks stay as they are (same arrays, same compression) and the new tree fits
/// in the space before the first block, only the tree is rewritten, in place, padded with
/// zero bytes up to the first block. Otherwise the whole file is rewritten through a
/// temporary file and renamed, so the original stays intact on any failure.
///
/// Pass `WriteOptions::default().compression(`[`CompressionChoice::Input`]`)` to keep compressed
/// blocks as they are (with the default, no compression, they are decompressed and the file
/// is rewritten).
///
/// The in-place write is journaled: the old head (everything before the first block) is
/// first saved, synced, beside the file (`.NAME.asdf-journal`); then the new head is written
/// and synced; then the journal is removed. If writing the new head fails, the old head is
/// written back. If the process dies in between, the next [`update`] (or [`recover`]) of the
/// file puts the old head back from the journal before doing anything else. While a journal
/// exists, [`AsdfFile::open`] reads the old head from it, so the file always opens (old
/// content); readers that do not know the journal can see a torn tree in that crash window.
///
/// [`CompressionChoice::Input`]: super::CompressionChoice::Input
pub fn update(
    path: impl AsRef<Path>,
    root: &Node,
    opts: WriteOptions,
) -> Result<UpdateKind, WriteError> {
    let path = path.as_ref();
    recover(path)?;
    // mapped: uncompressed blocks are not read when only the tree changes
    let file = AsdfFile::options()
        .mmap(true)
        .open(path)
        .map_err(|e| WriteError::Source {
            path: String::new(),
            source: Box::new(e),
        })?;
    let kind = {
        let writer = Writer::from_file(&file, opts);
        let plan = prepare::plan(&writer, root, None);
        let in_place = match &plan {
            Ok(p) => in_place_text(&file, &writer, p)?,
            Err(_) => None,
        };
        match in_place {
            Some((text, first)) => {
                drop(plan);
                drop(writer);
                write_in_place(path, &text, first)?;
                UpdateKind::InPlace
            }
            None => {
                drop(plan);
                write_to_path(&writer, root, path, &mut buffered)?;
                UpdateKind::Rewritten
            }
        }
    };
    Ok(kind)
}

/// The new head text and the first block's offset, when the plan keeps every block of the
/// file where it is and the text fits.
fn in_place_text(
    file: &AsdfFile,
    writer: &Writer<'_>,
    plan: &Plan<'_>,
) -> Result<Option<(String, u64)>, WriteError> {
    let old = file.blocks();
    if !plan.externals.is_empty() || plan.streamed || plan.blocks.len() != old.len() {
        return Ok(None);
    }
    let Some(first) = old.first().map(|b| b.offset) else {
        return Ok(None);
    };
    for (i, (job, hdr)) in plan.blocks.iter().zip(old).enumerate() {
        let same_codec = job.compression.map(|c| c.label()) == hdr.compression_label();
        let same_data = job.origin == Some(i);
        if !same_codec || !same_data || hdr.is_streamed() {
            return Ok(None);
        }
    }
    let text = head_text(&writer.opts, plan)?;
    Ok((text.len() as u64 <= first).then_some((text, first)))
}

/// Finishes an interrupted in-place [`update`] of `path`: when a journal from one exists, the
/// old head it holds is written back (synced) and the journal removed. Returns whether a
/// journal was found. [`update`] calls this first.
pub fn recover(path: impl AsRef<Path>) -> Result<bool, WriteError> {
    let path = path.as_ref();
    let journal = journal_path(path);
    let head = match fs::read(&journal) {
        Ok(h) => h,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    let mut f = fs::OpenOptions::new().write(true).open(path)?;
    f.seek(SeekFrom::Start(0))?;
    f.write_all(&head)?;
    f.sync_all()?;
    fs::remove_file(&journal)?;
    sync_dir(path);
    Ok(true)
}

fn write_in_place(path: &Path, text: &str, first: u64) -> Result<(), WriteError> {
    let first = usize::try_from(first).map_err(|_| WriteError::TooLarge { what: "tree" })?;
    let mut f = fs::OpenOptions::new().read(true).write(true).open(path)?;
    // 1. Save the old head, durably, before touching the file.
    let mut old = vec![0u8; first];
    std::io::Read::read_exact(&mut f, &mut old)?;
    let journal = journal_path(path);
    {
        let mut j = File::create(&journal)?;
        j.write_all(&old)?;
        j.sync_all()?;
    }
    sync_dir(path);
    // 2. The new head, padded with zero bytes up to the first block.
    let mut buf = Vec::with_capacity(first);
    buf.extend_from_slice(text.as_bytes());
    buf.resize(first, 0);
    let written = write_head(&mut f, &buf);
    if let Err(e) = written {
        // Put the old head back; keep the journal if even that fails.
        if write_head(&mut f, &old).is_ok() {
            let _ = fs::remove_file(&journal);
            sync_dir(path);
        }
        return Err(e);
    }
    // 3. Done: the journal goes.
    fs::remove_file(&journal)?;
    sync_dir(path);
    Ok(())
}

fn write_head(f: &mut File, head: &[u8]) -> Result<(), WriteError> {
    f.seek(SeekFrom::Start(0))?;
    f.write_all(head)?;
    f.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::Value;

    use crate::write::test_sink::Failing;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("asdf-write-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
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
            let r = write_to_path(&w, &root, &path, &mut |f| {
                Box::new(Failing { inner: f, budget })
            });
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
