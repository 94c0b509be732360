//! Replacing the tree of an existing file: in place (journaled) when the blocks stay and the
//! tree fits before the first block, else a whole rewrite through [`super::atomic`].

use std::fs::{self, File};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use super::atomic::{sync_dir, write_atomically, write_to_path};
use super::file_writer::head_text;
use super::prepare::{self, Plan};
use super::{WriteError, WriteOptions, WriteWarning, Writer};
use crate::file::journal_path;
use crate::yaml::Node;
use crate::AsdfFile;

/// How [`update_with`] may write the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpdateMode {
    /// Write the whole new file beside the old one, sync it and rename it over the old one
    /// (the default). At every moment the path holds the old file or the new one, whole, for
    /// every reader, python asdf and other programs included. Costs a copy of the blocks:
    /// blocks kept as they are (same compression) are never decoded; they are copied by the
    /// kernel (`copy_file_range` on Linux: no pass through this process, and a shared extent
    /// where the file system has reflinks, as btrfs and XFS do), and read once more to hash
    /// them when checksums are written (elsewhere: streamed in 8 MiB pieces).
    #[default]
    Replace,
    /// When the blocks stay as they are and the new tree fits before the first block, write
    /// only the tree, in place; otherwise as [`Replace`](UpdateMode::Replace). Fast for large
    /// files, but with a window: if the process dies while the new tree is being written, the
    /// file on disk holds a mix of old and new tree until the next [`update_with`] or
    /// [`recover`] puts the old tree back. This library's reader sees the old content during
    /// that window (the old tree is journaled beside the file as `.NAME.asdf-journal`);
    /// readers that do not know the journal, python asdf included, can see a torn tree.
    InPlace,
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
/// edited; its ndarray nodes keep referring to the file's blocks), safely for every reader:
/// [`update_with`] in [`UpdateMode::Replace`]. The whole file is written beside the old one
/// and renamed over it, so the path always holds the old or the new file, whole.
///
/// Each array stays where it is, as python asdf's `AsdfFile.update` keeps it: with the
/// default [`Storage::Input`](super::Storage::Input), inline data stays inline, an array in a
/// block stays in a block, an array in an external file stays in one; options that name
/// another storage ([`WriteOptions::storage`]) move every array there. Pass
/// `WriteOptions::default().compression(`[`CompressionChoice::Input`]`)` to keep compressed
/// blocks as they are (with the default, no compression, they are decompressed).
///
/// A block kept as it is keeps its stored bytes. Its checksum, when the options ask for
/// checksums: the MD5 of the stored bytes if the block had none, had that one, or had the
/// MD5 of its decoded data (as older writers wrote it, which python asdf now refuses); a
/// block whose bytes match neither keeps its stored checksum, so the damage stays visible
/// (the update does not bless it with a fresh checksum).
///
/// [`CompressionChoice::Input`]: super::CompressionChoice::Input
pub fn update(
    path: impl AsRef<Path>,
    root: &Node,
    opts: WriteOptions,
) -> Result<UpdateKind, WriteError> {
    update_with(path, root, opts, UpdateMode::Replace)
}

/// Replaces the tree of the ASDF file at `path` with `root`, in the given [`UpdateMode`].
///
/// In [`UpdateMode::InPlace`], when the blocks stay as they are (same arrays, same
/// compression) and the new tree fits in the space before the first block, only the tree is
/// rewritten, padded with zero bytes up to the first block; otherwise the whole file is
/// rewritten as in [`UpdateMode::Replace`]. The in-place write is journaled: the old head
/// (everything before the first block) is first saved, synced, beside the file
/// (`.NAME.asdf-journal`); then the new head is written and synced; then the journal is
/// removed. If writing the new head fails, the old head is written back. If the process dies
/// in between, the next update (or [`recover`]) of the file puts the old head back from the
/// journal before doing anything else. While a journal exists, [`AsdfFile::open`] reads the
/// old head from it, so the file always opens with the old content in this library; readers
/// that do not know the journal can see a torn tree in that window.
///
/// Every update, in either mode, first finishes an interrupted in-place update.
///
/// The warnings of the write ([`WriteSummary::warnings`](super::WriteSummary::warnings):
/// one per codec python asdf reads only with a plugin) are dropped here; [`update_reporting`]
/// returns them.
pub fn update_with(
    path: impl AsRef<Path>,
    root: &Node,
    opts: WriteOptions,
    mode: UpdateMode,
) -> Result<UpdateKind, WriteError> {
    update_reporting(path, root, opts, mode).map(|(kind, _)| kind)
}

/// As [`update_with`], also returning the write's warnings, as
/// [`WriteSummary::warnings`](super::WriteSummary::warnings) holds them for other writes
/// (one [`WriteWarning::NotPortable`] per codec python asdf reads only with a plugin, the
/// blocks kept in place included); with [`WriteOptions::portable`] such a codec is the
/// error instead.
pub fn update_reporting(
    path: impl AsRef<Path>,
    root: &Node,
    opts: WriteOptions,
    mode: UpdateMode,
) -> Result<(UpdateKind, Vec<WriteWarning>), WriteError> {
    let path = path.as_ref();
    recover(path)?;
    // mapped: uncompressed blocks are not read when only the tree changes
    let file = AsdfFile::options().mmap(true).open(path)?;
    if file.fits_hdus().is_some() {
        return Err(WriteError::ReadOnlyFormat {
            path: path.to_path_buf(),
        });
    }
    let writer = Writer::from_file(&file, opts);
    if mode == UpdateMode::InPlace {
        let plan = prepare::plan(&writer, root, None);
        let in_place = match &plan {
            Ok(p) => in_place_text(&file, &writer, p)?.map(|t| (t, p.warnings.clone())),
            Err(_) => None,
        };
        drop(plan);
        if let Some(((text, first), warnings)) = in_place {
            drop(writer);
            write_in_place(path, &text, first)?;
            return Ok((UpdateKind::InPlace, warnings));
        }
    }
    let summary = write_to_path(&writer, root, path, None)?;
    Ok((UpdateKind::Rewritten, summary.warnings))
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
    // whole or absent, synced with its folder: a torn journal would be written back as a head
    write_atomically(&journal, |j| j.write_all(&old))?;
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
