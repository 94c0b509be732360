//! Memory for large decoded data: zeroed allocations that ask the kernel for transparent huge
//! pages, as numpy does for its big buffers. With 4 KiB pages, filling a fresh 256 MiB buffer
//! costs ~65,000 page faults; with 2 MiB pages, ~128.

/// Buffers from this size up ask for transparent huge pages.
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// `len` zero bytes, allocated zeroed (fresh pages for large sizes, no memset pass), with
/// huge pages requested for large buffers. `None` when the allocation fails.
pub(crate) fn zeroed_bytes(len: usize) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(0).ok()?;
    if len == 0 {
        return Some(v);
    }
    let layout = std::alloc::Layout::array::<u8>(len).ok()?;
    // SAFETY: `layout` has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    advise_huge_pages(ptr, len);
    // SAFETY: `ptr` comes from the global allocator with the layout of `[u8; len]` (so the
    // capacity matches), and all `len` bytes are initialised (zeroed).
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// Asks for transparent huge pages on the 2 MiB-aligned interior of a fresh allocation
/// (before it is touched, so its faults are served with huge pages). A no-op for small
/// buffers and on other systems; failure is harmless.
#[cfg(target_os = "linux")]
pub(crate) fn advise_huge_pages(ptr: *mut u8, size: usize) {
    if size < HUGE_PAGE_THRESHOLD {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize).saturating_add(size) & !(HUGE_PAGE - 1);
    if end > start {
        // SAFETY: [start, end) lies inside the caller's live allocation and is page aligned;
        // MADV_HUGEPAGE changes how the kernel backs these pages, never their content.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

/// Asks for transparent huge pages (only on Linux).
#[cfg(not(target_os = "linux"))]
pub(crate) fn advise_huge_pages(_ptr: *mut u8, _size: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn zeroed_buffers_are_zero_and_sized() {
        for len in [0, 1, 4095, 8 << 20] {
            let v = super::zeroed_bytes(len).unwrap();
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&b| b == 0));
        }
    }
}
