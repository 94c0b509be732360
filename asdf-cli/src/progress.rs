//! Progress on standard error for work on large files: shown only when the file is at
//! least [`MIN_BYTES`], standard error is a terminal and `--quiet` was not given.
//!
//! Every display is a bar of bytes. Writing blocks, verifying checksums, hashing arrays
//! for the canonical form, Blosc2's chunk encoder and decoder and the HDF5 conversions report
//! their progress from inside the libraries (the one `asdf_core::Progress`, which is also
//! `asdf_blosc2::Progress`; asdf-hdf5's reports are handed on to it): `canonical`,
//! `convert`, `defragment`, `edit`, `extract` and `validate` draw a bar from those reports
//! ([`Progress::fed`]); `extract` to `.npy` and the Blosc2 conversions count the bytes
//! they write themselves. `diff` advances a bar array by array. Reading one whole array from an ASDF block (before `extract` to `.npy` or a
//! conversion to Blosc2 writes it) reports through `AsdfFile::dyn_array_with_progress`:
//! bytes read, or decoded (zlib, zstd, lz4f, blsc; the codecs that decode on several
//! threads report once, at the end).

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Files smaller than this show no progress (256 MiB).
pub const MIN_BYTES: u64 = 256 << 20;

static QUIET: AtomicBool = AtomicBool::new(false);

/// Silences progress (and informational messages) for the rest of the process.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Whether work on `bytes` shows progress.
pub fn wanted(bytes: u64, terminal: bool, quiet: bool) -> bool {
    terminal && !quiet && bytes >= MIN_BYTES
}

/// The size of the largest of `paths` (0 for those that cannot be read).
pub fn largest(paths: &[&Path]) -> u64 {
    paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .max()
        .unwrap_or(0)
}

/// A progress display, or nothing.
pub struct Progress(Option<ProgressBar>);

impl Progress {
    fn show(bytes: u64) -> bool {
        wanted(bytes, std::io::stderr().is_terminal(), quiet())
    }

    /// A bar of `total` units (bytes) for work on files of `bytes` bytes.
    pub fn bar(bytes: u64, total: u64, what: impl Into<String>) -> Progress {
        if !Self::show(bytes) {
            return Progress(None);
        }
        let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        pb.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} ({elapsed}, {eta} left)",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        pb.set_message(what.into());
        Progress(Some(pb))
    }

    /// A bar of bytes for work on files of `bytes` bytes, moved by the library's reports:
    /// the display, and the callback to hand to the library (`None` when nothing is shown).
    pub fn fed(bytes: u64, what: impl Into<String>) -> (Progress, Option<asdf_core::Progress>) {
        // the file's size stands for the total until the first report gives the real one
        let shown = Progress::bar(bytes, bytes, what);
        let feed = shown.0.clone().map(|pb| {
            asdf_core::Progress::new(move |done, total| {
                pb.set_length(total);
                pb.set_position(done);
            })
        });
        (shown, feed)
    }

    /// Advances a bar by `n` units.
    pub fn inc(&self, n: u64) {
        if let Some(pb) = &self.0 {
            pb.inc(n);
        }
    }

    /// Changes the message.
    pub fn message(&self, what: impl Into<String>) {
        if let Some(pb) = &self.0 {
            pb.set_message(what.into());
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(pb) = &self.0 {
            pb.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_large_files_on_a_terminal_without_quiet() {
        assert!(wanted(MIN_BYTES, true, false));
        assert!(!wanted(MIN_BYTES - 1, true, false));
        assert!(!wanted(MIN_BYTES, false, false));
        assert!(!wanted(MIN_BYTES, true, true));
    }
}
