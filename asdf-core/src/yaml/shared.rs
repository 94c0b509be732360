//! [`Shared`]: the reference-counted pointer behind [`Node`](super::Node).
//!
//! It is `std::sync::Arc` without weak references, tuned for parsed trees of hundreds of
//! thousands of nodes, where each atomic read-modify-write costs several nanoseconds and
//! each `malloc`/`free` pair tens:
//! - dropping the last handle to a node frees it after a plain load of the count, with no
//!   atomic decrement (std's `Arc` does two: strong and weak);
//! - the parser, which holds every handle to the nodes it is building on its own thread,
//!   may count a new handle with a plain store ([`Shared::clone_local`]);
//! - the parser allocates its nodes from an [`Arena`]: slabs of [`SLAB`] nodes, one
//!   allocation each, freed when the last node in them is dropped. A slab keeps a count of
//!   its live nodes; a node's drop runs its data's destructor and takes one from that count.
//!   A few nodes kept from a large document keep their slabs alive (a slab of `Node` data
//!   is about 5 KiB).
//!
//! Everything else (clone, drop of a shared node, `Send`/`Sync`) is as `Arc`.
//!
//! Kept over `std::sync::Arc` because it pays: `cargo bench -p asdfrs-core --bench read --
//! --quick --only tree_open_walk` (open and walk a tree of 200,000 leaves) took 59.9, 61.1
//! and 90.7 ms with this module against 80.9, 77.0 and 97.4 ms with `Shared` as a plain
//! wrapper of `Arc` and no arena (runs alternated on a shared 2-core machine). Its `unsafe`
//! is checked by `.ci/unsafe-check` (AddressSanitizer and LeakSanitizer over these tests and
//! the parser's).

use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicUsize, Ordering};

/// Above this many handles the count is deemed corrupt or leaked, and the process aborts
/// (as `Arc` does), so the count can never wrap.
const MAX_COUNT: usize = isize::MAX as usize;

struct Inner<T> {
    count: AtomicUsize,
    /// The slab holding this node, or `None` for a node allocated on its own (`Box`).
    slab: Option<NonNull<Slab<T>>>,
    data: T,
}

/// Nodes per slab.
pub(crate) const SLAB: usize = 64;

/// [`SLAB`] node slots in one allocation. `live` counts the slots that hold a node not yet
/// dropped, plus the unused slots and one while an [`Arena`] still allocates from it; the
/// slab is freed when it reaches zero.
struct Slab<T> {
    live: AtomicUsize,
    slots: [UnsafeCell<MaybeUninit<Inner<T>>>; SLAB],
}

impl<T> Slab<T> {
    /// Takes `n` from the live count; frees the slab if that was the rest of it.
    ///
    /// # Safety
    /// `slab` points to a live slab made by [`Arena`], and the caller gives up `n` of its
    /// count (a dropped node, or the arena's unused slots and hold); nothing of the caller
    /// touches the slab afterwards.
    unsafe fn release(slab: NonNull<Slab<T>>, n: usize) {
        // SAFETY: the slab is live (caller), and only shared references are made to it.
        let live = unsafe { &slab.as_ref().live };
        // As for the node count in `Shared::drop`: the last holder may skip the atomic.
        if live.load(Ordering::Acquire) != n {
            if live.fetch_sub(n, Ordering::Release) != n {
                return;
            }
            fence(Ordering::Acquire);
        }
        // SAFETY: the count reached zero, so no node or arena refers to the slab; it was
        // made with `Box` in `Arena::alloc`. Its slots are `MaybeUninit`, so freeing it runs
        // no destructor (every node's data was dropped when the node was).
        drop(unsafe { Box::from_raw(slab.as_ptr()) });
    }
}

/// Allocates nodes from slabs (see the module docs). Used by one parser on one thread.
pub(crate) struct Arena<T> {
    /// The slab being filled and how many of its slots are used.
    current: Option<(NonNull<Slab<T>>, usize)>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { current: None }
    }
}

impl<T> Arena<T> {
    /// A new pointer with one handle, in the arena's current slab.
    pub(crate) fn alloc(&mut self, data: T) -> Shared<T> {
        let (slab, used) = match self.current.take() {
            Some((slab, used)) if used < SLAB => (slab, used),
            full => {
                if let Some((slab, used)) = full {
                    // SAFETY: the arena's hold and the unused slots are its to give up.
                    unsafe { Slab::release(slab, SLAB - used + 1) };
                }
                let mut fresh = Box::<Slab<T>>::new_uninit();
                let raw = fresh.as_mut_ptr();
                // SAFETY: `raw` points to the box's memory; `live` is initialised here, and
                // the slots are `MaybeUninit`, valid uninitialised.
                let slab = unsafe {
                    std::ptr::addr_of_mut!((*raw).live).write(AtomicUsize::new(SLAB + 1));
                    fresh.assume_init()
                };
                (NonNull::from(Box::leak(slab)), 0)
            }
        };
        // SAFETY: `slab` is live (the arena holds it); slot `used` exists (`used < SLAB`,
        // checked above) and is unused: the arena hands each slot out once, and no other
        // reference to it exists yet.
        let inner = unsafe {
            let slot = slab.as_ref().slots.get_unchecked(used).get();
            (*slot).write(Inner {
                count: AtomicUsize::new(1),
                slab: Some(slab),
                data,
            })
        };
        self.current = Some((slab, used + 1));
        Shared {
            ptr: NonNull::from(inner),
            _owns: PhantomData,
        }
    }
}

impl<T> Drop for Arena<T> {
    fn drop(&mut self) {
        if let Some((slab, used)) = self.current.take() {
            // SAFETY: the arena's hold and the unused slots are its to give up.
            unsafe { Slab::release(slab, SLAB - used + 1) };
        }
    }
}

/// A thread-safe reference-counted pointer to an immutable `T` (see the module docs).
pub(crate) struct Shared<T> {
    ptr: NonNull<Inner<T>>,
    /// Owns an `Inner<T>` (for drop check and variance).
    _owns: PhantomData<Inner<T>>,
}

// SAFETY: a `Shared<T>` gives shared access to `T` from any thread holding a handle and
// drops `T` on whichever thread drops the last handle, exactly as `Arc<T>`; so it is `Send`
// and `Sync` under `Arc`'s bounds. The count is atomic for every operation other threads
// can reach (`clone_local` is `unsafe` and limited to handles no other thread can see).
unsafe impl<T: Send + Sync> Send for Shared<T> {}
// SAFETY: as for `Send` above.
unsafe impl<T: Send + Sync> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// A new pointer with one handle.
    pub(crate) fn new(data: T) -> Self {
        let inner = Box::new(Inner {
            count: AtomicUsize::new(1),
            slab: None,
            data,
        });
        Shared {
            ptr: NonNull::from(Box::leak(inner)),
            _owns: PhantomData,
        }
    }

    fn inner(&self) -> &Inner<T> {
        // SAFETY: `ptr` came from `Box::leak` in `new` and is freed only when the last
        // handle is dropped; `self` is a live handle, so the allocation is live.
        unsafe { self.ptr.as_ref() }
    }

    /// Whether both handles point to the same allocation.
    pub(crate) fn ptr_eq(a: &Self, b: &Self) -> bool {
        a.ptr == b.ptr
    }

    /// The address of the shared data.
    pub(crate) fn as_ptr(this: &Self) -> *const T {
        &this.inner().data
    }

    /// The data, for changing it, when `this` is the only handle (as `Arc::get_mut`).
    pub(crate) fn get_mut(this: &mut Self) -> Option<&mut T> {
        if this.inner().count.load(Ordering::Acquire) != 1 {
            return None;
        }
        // SAFETY: a count of 1 seen with Acquire means `this` is the only handle, and no
        // other can appear while `this` is borrowed mutably (a handle is made only from an
        // existing one: `clone` and `clone_local` both need `&this`). The Acquire pairs with
        // the Release of every earlier drop, so other threads' reads of the data happen
        // before this write. The data lives in a `Box` allocation or an `UnsafeCell` slab
        // slot, reached through a pointer made from a unique reference, so writing through
        // it is allowed; the returned borrow is tied to `&mut this`, which keeps the
        // allocation alive and the count at 1 until it ends.
        Some(unsafe { &mut (*this.ptr.as_ptr()).data })
    }

    /// How many handles exist now (a snapshot; other threads may change it).
    pub(crate) fn count(this: &Self) -> usize {
        this.inner().count.load(Ordering::Acquire)
    }

    /// A new handle, counted with a plain load and store instead of an atomic increment.
    ///
    /// # Safety
    /// No other thread may hold a handle to this allocation, or obtain one, while the call
    /// runs: the parser calls it only for nodes it built itself and still holds every
    /// handle of on its own thread.
    pub(crate) unsafe fn clone_local(this: &Self) -> Self {
        let count = &this.inner().count;
        let n = count.load(Ordering::Relaxed);
        if n >= MAX_COUNT {
            std::process::abort();
        }
        count.store(n + 1, Ordering::Relaxed);
        Shared {
            ptr: this.ptr,
            _owns: PhantomData,
        }
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        // Relaxed as in `Arc::clone`: a new handle is made from an existing one, which
        // already keeps the data alive and visible.
        let old = self.inner().count.fetch_add(1, Ordering::Relaxed);
        if old >= MAX_COUNT {
            std::process::abort();
        }
        Shared {
            ptr: self.ptr,
            _owns: PhantomData,
        }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        let count = &self.inner().count;
        // A count of 1 seen with Acquire means this is the only handle, and no other can
        // appear (a new one is made only from an existing one); the Acquire pairs with the
        // Release of every earlier drop, so their uses of the data happen before the free.
        if count.load(Ordering::Acquire) != 1 {
            if count.fetch_sub(1, Ordering::Release) != 1 {
                return;
            }
            fence(Ordering::Acquire);
        }
        match self.inner().slab {
            // SAFETY: this was the last handle (above), so nothing else can reach the
            // allocation, which `new` made with `Box`.
            None => drop(unsafe { Box::from_raw(self.ptr.as_ptr()) }),
            Some(slab) => {
                // SAFETY: this was the last handle, so the data is dropped exactly once and
                // never read again; the slot stays allocated until the slab's count (which
                // this node still holds one of) is released just after.
                unsafe {
                    std::ptr::drop_in_place(std::ptr::addr_of_mut!((*self.ptr.as_ptr()).data));
                    Slab::release(slab, 1);
                }
            }
        }
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner().data
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize as Counter;
    use std::sync::Arc;

    /// Counts its drops.
    struct Probe(Arc<Counter>);
    impl Drop for Probe {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn data_is_dropped_once_when_the_last_handle_goes() {
        let drops = Arc::new(Counter::new(0));
        let a = Shared::new(Probe(drops.clone()));
        let b = a.clone();
        // SAFETY: all handles are on this thread.
        let c = unsafe { Shared::clone_local(&b) };
        assert_eq!(Shared::count(&a), 3);
        assert!(Shared::ptr_eq(&a, &c));
        drop(a);
        drop(c);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        assert_eq!(Shared::count(&b), 1);
        drop(b);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn arena_nodes_drop_their_data_once_in_any_order() {
        let drops = Arc::new(Counter::new(0));
        let n = SLAB * 3 + 5;
        let mut arena = Arena::default();
        let mut nodes: Vec<Shared<Probe>> =
            (0..n).map(|_| arena.alloc(Probe(drops.clone()))).collect();
        let extra = nodes[7].clone();
        // drop the arena first, then every other node, then the rest in reverse
        drop(arena);
        let mut odd = Vec::new();
        for (i, node) in nodes.drain(..).enumerate() {
            if i % 2 == 1 {
                odd.push(node);
            }
        }
        assert_eq!(drops.load(Ordering::SeqCst), n - odd.len());
        while let Some(node) = odd.pop() {
            drop(node);
        }
        assert_eq!(drops.load(Ordering::SeqCst), n - 1);
        assert_eq!(Shared::count(&extra), 1);
        drop(extra);
        assert_eq!(drops.load(Ordering::SeqCst), n);
    }

    #[test]
    fn arena_nodes_outlive_the_arena_and_cross_threads() {
        let drops = Arc::new(Counter::new(0));
        let mut arena = Arena::default();
        let nodes: Vec<Shared<Probe>> = (0..SLAB * 4)
            .map(|_| arena.alloc(Probe(drops.clone())))
            .collect();
        let (left, right) = nodes.split_at(SLAB * 2 + 3);
        let (left, right) = (left.to_vec(), right.to_vec());
        drop(nodes);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        std::thread::scope(|s| {
            s.spawn(move || drop(left));
            s.spawn(move || drop(right));
        });
        assert_eq!(drops.load(Ordering::SeqCst), SLAB * 4);
        // the arena's slab is still live for its next node
        let last = arena.alloc(Probe(drops.clone()));
        drop(arena);
        assert_eq!(drops.load(Ordering::SeqCst), SLAB * 4);
        drop(last);
        assert_eq!(drops.load(Ordering::SeqCst), SLAB * 4 + 1);
    }

    #[test]
    fn handles_cloned_and_dropped_across_threads_free_once() {
        let drops = Arc::new(Counter::new(0));
        let root = Shared::new(Probe(drops.clone()));
        std::thread::scope(|s| {
            for _ in 0..4 {
                let mine = root.clone();
                s.spawn(move || {
                    let mut held = Vec::new();
                    for i in 0..10_000 {
                        held.push(mine.clone());
                        if i % 3 == 0 {
                            held.clear();
                        }
                    }
                    assert!(Shared::count(&mine) >= 2);
                });
            }
        });
        assert_eq!(Shared::count(&root), 1);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(root);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }
}
