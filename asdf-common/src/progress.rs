//! Progress of long operations (writing blocks, verifying checksums, decoding and encoding
//! Blosc2 frames, converting HDF5), for progress bars.

use std::fmt;
use std::sync::Arc;

/// A callback told how far a long operation has come, as `(done, total)` in bytes: called
/// from the thread doing the work (one call at a time), every chunk or few MiB, with `done`
/// never decreasing and ending at `total`. What the bytes are is said where a `Progress` is
/// accepted (`asdf_core::WriteOptions::progress`, `asdf_core::AsdfFile::verify_checksums_with_progress`,
/// `asdf_blosc2::Frame::with_progress`, ...). This is the one progress type of asdf-rs:
/// `asdf_core::Progress` and `asdf_blosc2::Progress` are this type.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// let seen = Arc::new(AtomicU64::new(0));
/// let s = seen.clone();
/// let progress = asdf_common::Progress::new(move |done, _total| s.store(done, Ordering::Relaxed));
/// progress.report(12, 10);
/// assert_eq!(seen.load(Ordering::Relaxed), 10); // never past the total
/// ```
#[derive(Clone)]
pub struct Progress(Arc<dyn Fn(u64, u64) + Send + Sync>);

impl Progress {
    /// Wraps `f`, called with `(done, total)`.
    pub fn new(f: impl Fn(u64, u64) + Send + Sync + 'static) -> Self {
        Progress(Arc::new(f))
    }

    /// Reports `done` of `total` (`done` capped at `total`).
    pub fn report(&self, done: u64, total: u64) {
        (self.0)(done.min(total), total);
    }
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// Two `Progress` values are equal when they share one callback.
impl PartialEq for Progress {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
