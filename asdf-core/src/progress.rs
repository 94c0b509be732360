//! Progress of long operations (writing blocks, verifying checksums), for progress bars.

/// The one progress type of asdf-rs (defined in `asdf-common`, so that asdf-blosc2, below
/// this crate, has it too: `asdf_blosc2::Progress` is this type): a callback told how far a
/// long operation has come, as `(done, total)` in bytes, from the thread doing the work,
/// every few MiB, with `done` never decreasing and ending at `total`. What the bytes are is
/// said where a `Progress` is accepted
/// ([`WriteOptions::progress`](crate::WriteOptions::progress),
/// [`AsdfFile::verify_checksums_with_progress`](crate::AsdfFile::verify_checksums_with_progress)).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// let seen = Arc::new(AtomicU64::new(0));
/// let s = seen.clone();
/// let progress = asdf_core::Progress::new(move |done, _total| s.store(done, Ordering::Relaxed));
/// let a = ndarray::Array1::<f64>::from_elem(1000, 0.5);
/// let mut w = asdf_core::Writer::new(asdf_core::WriteOptions::default().progress(progress));
/// let root = asdf_core::tree!({"a": w.add_array(&a)});
/// w.write_to_vec(&root)?;
/// assert_eq!(seen.load(Ordering::Relaxed), 8000); // the array's 8000 bytes
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub use asdf_common::Progress;

/// Counts bytes done towards a known total and reports them (when there is a callback).
pub(crate) struct Ticker<'p> {
    progress: Option<&'p Progress>,
    done: u64,
    total: u64,
}

impl<'p> Ticker<'p> {
    pub(crate) fn new(progress: Option<&'p Progress>, total: u64) -> Self {
        Ticker {
            progress,
            done: 0,
            total,
        }
    }

    /// `n` more bytes are done.
    pub(crate) fn add(&mut self, n: u64) {
        self.set(self.done.saturating_add(n));
    }

    /// `done` bytes are done in all (never moves back).
    pub(crate) fn set(&mut self, done: u64) {
        let done = done.min(self.total);
        if done > self.done {
            self.done = done;
            if let Some(p) = self.progress {
                p.report(self.done, self.total);
            }
        }
    }

    pub(crate) fn done(&self) -> u64 {
        self.done
    }
}
