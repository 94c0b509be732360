//! Fuzz target: region reads of every array of a file. The first byte gives the length of a
//! selection text (numpy's syntax), which follows; the rest is the file. A text that does not
//! parse still selects: its bytes are read as items instead (so mutations that break the
//! syntax keep reaching the reader). Every array (at most 16) is read in part with
//! `dyn_region_of`, `region::<f64>`, `read_region_into::<u8>` and `masked_region::<f64>`,
//! and whole with `dyn_array_of`; when the whole read and the region read both succeed, the
//! region must be the whole array sliced (by `Selection::resolve` and a gather written
//! here, not by the region reader). Errors are fine; panics, aborts, hangs, huge
//! allocations and a region that differs from the whole sliced are bugs.
#![no_main]

use asdf_core::array::DynArray;
use asdf_core::{AsdfFile, SelItem, Selection};
use libfuzzer_sys::fuzz_target;

/// Elements of a caller's buffer the target allocates for `read_region_into`, at most.
const MAX_BUFFER: usize = 1 << 20;

/// A selection made of raw bytes: three bytes an item (kind, two values).
fn from_bytes(b: &[u8]) -> Selection {
    Selection::new(b.chunks(3).take(8).map(|c| {
        let v = |i: usize| i64::from(*c.get(i).unwrap_or(&0) as i8);
        match c[0] % 8 {
            0 => SelItem::Index(v(1)),
            1 => SelItem::Ellipsis,
            2 => SelItem::ALL,
            3 => SelItem::slice(Some(v(1)), Some(v(2)), None),
            4 => SelItem::slice(None, None, Some(v(1))),
            5 => SelItem::slice(Some(v(1)), None, Some(v(2))),
            6 => SelItem::slice(None, Some(v(1)), Some(-1)),
            _ => SelItem::slice(
                Some(v(1) << 40),
                Some(v(2) << 56),
                Some(v(1).wrapping_mul(1 << 50)),
            ),
        }
    }))
}

/// `whole` sliced as `sel` says: the positions `Selection::resolve` gives, gathered in C
/// order. `None` when the selection does not fit.
fn sliced(whole: &DynArray, sel: &Selection) -> Option<DynArray> {
    let axes = sel.resolve(&whole.shape).ok()?;
    let item = whole.dtype.itemsize();
    // C-order strides of the whole array, in elements
    let mut strides = vec![1usize; whole.shape.len()];
    for k in (0..whole.shape.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * whole.shape[k + 1];
    }
    let count: usize = axes.iter().map(|a| a.count).product();
    let mut data = Vec::with_capacity(count * item);
    let mut idx = vec![0usize; axes.len()];
    for _ in 0..count {
        let mut at = 0usize;
        for (k, a) in axes.iter().enumerate() {
            let pos = a.start as i128 + idx[k] as i128 * a.step as i128;
            at += pos as usize * strides[k];
        }
        data.extend_from_slice(&whole.data[at * item..(at + 1) * item]);
        for k in (0..axes.len()).rev() {
            idx[k] += 1;
            if idx[k] < axes[k].count {
                break;
            }
            idx[k] = 0;
        }
    }
    Some(DynArray {
        dtype: whole.dtype.clone(),
        shape: axes.iter().filter(|a| a.keep).map(|a| a.count).collect(),
        data,
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let (text, file) = rest.split_at((n as usize).min(rest.len()));
    let text = String::from_utf8_lossy(text);
    let sel = match Selection::parse(&text) {
        Ok(sel) => {
            // numpy's text of a selection parses back to it
            let again = Selection::parse(&sel.to_string());
            assert_eq!(again.as_ref(), Ok(&sel), "{text:?} printed as {sel}");
            sel
        }
        Err(_) => from_bytes(text.as_bytes()),
    };
    let Ok(file) = AsdfFile::from_bytes(file.to_vec()) else {
        return;
    };
    for (path, node) in file.arrays().into_iter().take(16) {
        let region = file.dyn_region_of(&node, &path, &sel);
        let _ = file.region::<f64>(&path, &sel);
        let _ = file.masked_region::<f64>(&path, &sel);
        if let Ok(r) = &region {
            if r.element_count() <= MAX_BUFFER {
                let mut buf = vec![0u8; r.element_count()];
                let _ = file.read_region_into::<u8>(&path, &sel, &mut buf);
            }
        }
        let (Ok(region), Ok(whole)) = (region, file.dyn_array_of(&node, &path)) else {
            continue;
        };
        let want = sliced(&whole, &sel).expect("a region was read, so the selection fits");
        assert!(
            region == want,
            "{path}[{sel}]: region {:?} {:?}, whole sliced {:?}",
            region.dtype,
            region.shape,
            want.shape
        );
    }
});
