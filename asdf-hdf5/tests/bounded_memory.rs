//! Hostile HDF5 input stays bounded in memory (issue 31 item 7): an 8 KB file whose
//! variable-length string dataset declares 21 GB of references in 32 bytes of contiguous data
//! (`fuzz/regressions/hdf5/vlen-strings-declared-beyond-the-file`) is refused, both with the
//! default limits (as `asdftool convert` runs) and with the fuzz target's, while this test's
//! allocator counts the bytes live at once: the refusal must come before the 21 GB are
//! allocated (it peaked at 20.8 GB before). One test in this binary, so that no other test's
//! allocations count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use asdf_hdf5::{to_asdf_bytes, Hdf5Error, ToAsdfOptions};

/// The system allocator, counting the bytes live and the most live at once.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged, with the layout it was
// given; the counters are only bookkeeping beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed` is passed on as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation above is).
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` was allocated by `System` with `layout`; the caller's contract for
        // `realloc` is passed on as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            let now = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Most bytes live at once the refusals may take (the file is 8 KB; 64 MiB leaves room for
/// the test harness and the reader's caches, and is 300 times below what it took).
const BOUND: usize = 64 << 20;

#[test]
fn a_small_file_declaring_21_gb_of_strings_is_refused_within_64_mib() {
    let data = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/regressions/hdf5/vlen-strings-declared-beyond-the-file"),
    )
    .unwrap();
    assert_eq!(data.len(), 8386);
    // the fuzz target's limits: the declared size is over the dataset limit
    let fuzz = ToAsdfOptions {
        max_dataset_bytes: 16 << 20,
        ..ToAsdfOptions::default()
    };
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let err = to_asdf_bytes(&data, &fuzz).unwrap_err();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    match &err {
        Hdf5Error::Read { path, message } => {
            assert_eq!(path, "/vlen_ascii");
            assert_eq!(
                message,
                "the dataset holds 21282178320 bytes, more than the limit of 16777216"
            );
        }
        _ => panic!("{err:?}"),
    }
    assert!(peak < BOUND, "fuzz limits: {peak} bytes live at once");

    // the default limits (1 TiB, as `asdftool convert`): the data's place in the file
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let err = to_asdf_bytes(&data, &ToAsdfOptions::default()).unwrap_err();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    assert!(
        matches!(&err, Hdf5Error::Read { path, message }
            if path == "/vlen_ascii" && message.contains("21282178320 bytes")),
        "{err:?}"
    );
    assert!(peak < BOUND, "default limits: {peak} bytes live at once");

    // the reader alone (hdf5-reader, as any other user of it): refused before allocating
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let file = hdf5_reader::Hdf5File::from_bytes(&data).unwrap();
    let err = file
        .dataset("/vlen_ascii")
        .unwrap()
        .read_strings()
        .unwrap_err();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    assert!(
        err.to_string()
            .contains("contiguous raw data has 32 bytes, expected 21282178320 bytes"),
        "{err}"
    );
    assert!(peak < BOUND, "hdf5-reader: {peak} bytes live at once");
}
