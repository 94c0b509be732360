//! The writer's operating-system calls, each with its fallback where the system lacks it:
//! starting writeback of what is written (`sync_file_range`) and copying between files in
//! the kernel (`copy_file_range`). Both are Linux calls; elsewhere writeback is left to the
//! fsync and copies go through memory. [`Writeback`] paces the first for a write in
//! progress. The file format stays in `file_writer`.

use std::fs::File;

/// Starts writeback of `len` bytes of `f` from `offset` (`sync_file_range` on Linux;
/// nothing elsewhere). Only a hint: durability comes from the fsync that follows.
#[cfg(target_os = "linux")]
pub(super) fn start_writeback(f: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    // SAFETY: sync_file_range takes a descriptor and plain integers, touches no memory of
    // ours, and `f` keeps the descriptor open for the call. SYNC_FILE_RANGE_WRITE only
    // starts writeback of dirty pages in the range; its result is ignored because nothing
    // depends on it (the fsync that follows the write makes the data durable).
    unsafe {
        libc::sync_file_range(f.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE);
    }
}

/// Starts writeback (a hint that this platform does without).
#[cfg(not(target_os = "linux"))]
pub(super) fn start_writeback(_: &File, _: u64, _: u64) {}

/// Copies up to `len` bytes from `src` at `from` to `dst` at `to` inside the kernel; returns
/// how many it copied (fewer, down to none, where the kernel cannot: the caller copies the
/// rest itself).
#[cfg(target_os = "linux")]
pub(super) fn kernel_copy(
    src: &File,
    from: u64,
    dst: &File,
    to: u64,
    len: u64,
) -> std::io::Result<u64> {
    use std::os::fd::AsRawFd;
    let mut done = 0u64;
    while done < len {
        let (Ok(mut off_in), Ok(mut off_out)) =
            (i64::try_from(from + done), i64::try_from(to + done))
        else {
            break;
        };
        let n = usize::try_from(len - done)
            .unwrap_or(usize::MAX)
            .min(1 << 30);
        // SAFETY: copy_file_range reads and writes only the two files' contents; the two
        // offset pointers point to live local i64s for the duration of the call, and the
        // `File`s keep both descriptors open.
        let r = unsafe {
            libc::copy_file_range(
                src.as_raw_fd(),
                &mut off_in,
                dst.as_raw_fd(),
                &mut off_out,
                n,
                0,
            )
        };
        match r {
            // end of the source: it shrank under us; the copy through memory reports that
            0 => break,
            r if r > 0 => done += r as u64,
            _ => {
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => {}
                    // not supported between these files (another file system, an old
                    // kernel, special files): copy through memory instead
                    Some(
                        libc::ENOSYS
                        | libc::EXDEV
                        | libc::EINVAL
                        | libc::EOPNOTSUPP
                        | libc::ETXTBSY
                        | libc::EPERM,
                    ) => break,
                    _ => return Err(e),
                }
            }
        }
    }
    Ok(done)
}

/// Copies nothing in the kernel (no `copy_file_range` here): the caller copies it all.
#[cfg(not(target_os = "linux"))]
pub(super) fn kernel_copy(_: &File, _: u64, _: &File, _: u64, _: u64) -> std::io::Result<u64> {
    Ok(0)
}

/// Written bytes that are handed to the kernel's writeback at a time.
pub(super) const WRITEBACK_MIN: u64 = 8 << 20;

/// Starts the kernel's writeback of what a write has produced so far, so that the closing
/// fsync does not have to write the whole file at once. Only a hint: durability still comes
/// from the fsync.
pub(crate) struct Writeback<'f> {
    file: Option<&'f File>,
    /// File offset up to which writeback was started.
    done: u64,
    /// The file the sink writes straight through (only buffering in between), from its
    /// start: kept blocks may be copied into it by the kernel.
    copy_to: Option<&'f File>,
}

impl<'f> Writeback<'f> {
    /// No file behind the sink: nothing to do.
    pub(crate) fn none() -> Self {
        Writeback {
            file: None,
            done: 0,
            copy_to: None,
        }
    }

    /// The sink writes `file` from its start.
    pub(crate) fn file(file: &'f File) -> Self {
        Writeback {
            file: Some(file),
            done: 0,
            copy_to: None,
        }
    }

    /// The sink writes `file` from its start, only buffering on the way (after a flush, the
    /// file holds everything written), so bytes may also be put into `file` directly.
    pub(crate) fn direct(file: &'f File) -> Self {
        Writeback {
            file: Some(file),
            done: 0,
            copy_to: Some(file),
        }
    }

    /// The file bytes may be put into directly (see [`Writeback::direct`]).
    pub(crate) fn copy_to(&self) -> Option<&'f File> {
        self.copy_to
    }

    /// The sink has been given the bytes up to file offset `end` (a buffering sink may hold
    /// some still: those are left for the fsync).
    pub(crate) fn written(&mut self, end: u64) {
        let Some(f) = self.file else { return };
        if end >= self.done.saturating_add(WRITEBACK_MIN) {
            start_writeback(f, self.done, end - self.done);
            self.done = end;
        }
    }
}
