//! Memory for large decoded data: zeroed allocations that fail softly and ask the kernel for
//! transparent huge pages, as numpy does for its big buffers. With 4 KiB pages, filling a
//! fresh 256 MiB buffer costs ~65,000 page faults; with 2 MiB pages, ~128.
//!
//! Allocated zeroed rather than reserved then filled: the allocator hands out fresh pages of
//! a large buffer already zero, so nothing writes the whole buffer on one thread before the
//! decoders (often on other threads) do; and a failed allocation is `None`, not an abort.

/// Buffers from this size up ask for transparent huge pages.
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;
/// The size of a transparent huge page on the systems that have them (x86-64, aarch64 with
/// 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// `len` zero bytes, allocated zeroed (fresh pages for large sizes, no memset pass), with
/// huge pages requested for large buffers. `None` when the allocation fails.
pub fn zeroed_bytes(len: usize) -> Option<Vec<u8>> {
    zeroed_vec::<u8>(len)
}

/// A `Vec<T>` of `len` all-zero-bytes elements, allocated zeroed (fresh pages for large sizes,
/// no memset pass), with huge pages requested for large buffers. `None` when the allocation
/// fails or its size overflows. `T: Zeroable` (plain integers, IEEE floats, complex numbers
/// of them, `bool`) guarantees that all-zero bytes are a valid `T`.
pub fn zeroed_vec<T: bytemuck::Zeroable>(len: usize) -> Option<Vec<T>> {
    if len == 0 || std::mem::size_of::<T>() == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(len).ok()?;
    // SAFETY: `layout` has a non-zero size (len > 0, size_of::<T>() > 0), as `alloc_zeroed`
    // requires.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return None;
    }
    advise_huge_pages(ptr.cast::<u8>(), layout.size());
    // SAFETY: `ptr` is non-null and was allocated by the global allocator with the layout of
    // `[T; len]`, so it is aligned for `T` and the capacity `len` matches; all `len` elements
    // are initialised, because the memory is zeroed and all-zero bytes are a valid `T`
    // (`T: Zeroable`, whose contract is exactly that). The Vec owns the allocation from here (nothing else frees it).
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// Asks for transparent huge pages on the 2 MiB-aligned interior of a fresh allocation of
/// `size` bytes at `ptr` (before it is touched, so its faults are served with huge pages). A
/// no-op for small buffers and on other systems; a failure is harmless and ignored.
#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, size: usize) {
    if size < HUGE_PAGE_THRESHOLD {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize).saturating_add(size) & !(HUGE_PAGE - 1);
    if end > start {
        // SAFETY: [start, end) lies inside the caller's live allocation and is page aligned;
        // MADV_HUGEPAGE changes how the kernel backs these pages, never their content or the
        // mapping, so no reference to the memory is invalidated; madvise reads no memory of
        // ours.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _size: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn zeroed_buffers_are_zero_and_sized() {
        for len in [0, 1, 4095, 8 << 20] {
            let v = super::zeroed_bytes(len).unwrap();
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&b| b == 0));
        }
        let v = super::zeroed_vec::<f64>(1 << 20).unwrap();
        assert_eq!(v.len(), 1 << 20);
        assert!(v.iter().all(|&x| x == 0.0));
        assert_eq!(v.as_ptr() as usize % std::mem::align_of::<f64>(), 0);
    }

    #[test]
    fn impossible_sizes_are_none_not_an_abort() {
        assert!(super::zeroed_bytes(usize::MAX).is_none());
        assert!(super::zeroed_vec::<u64>(usize::MAX / 4).is_none());
    }
}
