//! Progress reports of decoding and encoding frames, chunk by chunk, for progress bars.

use std::sync::Mutex;

/// The one progress type of asdf-rs (defined in `asdf-common`; `asdf_core::Progress` is
/// this type too): here told how far decoding
/// ([`Frame::with_progress`](crate::Frame::with_progress)) or encoding
/// ([`b2nd_frame_with_progress`](crate::encode::b2nd_frame_with_progress)) has come, as
/// `(done, total)` in bytes of the data (the decoded output, or the input taken into chunks):
/// called once per chunk, from the thread that did the chunk, one call at a time, with `done`
/// never decreasing and ending at `total`.
pub use asdf_common::Progress;

/// Counts the bytes of the chunks done towards `total` and reports them; shared by the
/// threads decoding chunks (the lock keeps the reports in order).
pub(crate) struct Tally<'p> {
    progress: Option<&'p Progress>,
    total: u64,
    done: Mutex<u64>,
}

impl<'p> Tally<'p> {
    pub(crate) fn new(progress: Option<&'p Progress>, total: u64) -> Self {
        Tally {
            progress,
            total,
            done: Mutex::new(0),
        }
    }

    /// `n` more bytes are done.
    pub(crate) fn add(&self, n: u64) {
        let Some(p) = self.progress else { return };
        if let Ok(mut done) = self.done.lock() {
            let next = done.saturating_add(n).min(self.total);
            if next > *done {
                *done = next;
                p.report(next, self.total);
            }
        }
    }

    /// The work is over: reports `total` if the chunks did not add up to it.
    pub(crate) fn finish(&self) {
        let Some(p) = self.progress else { return };
        if let Ok(mut done) = self.done.lock() {
            if *done < self.total {
                *done = self.total;
                p.report(self.total, self.total);
            }
        }
    }
}
