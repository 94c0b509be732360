//! Fuzz target: ASDF 0.1.0 files, whose block headers have the legacy layouts (44, 36 and 40
//! bytes) and whose draft blocks start with a YAML encoding chain. The input is a whole file:
//! it is opened (a file headed `#ASDF 0.1.0` walks its blocks with the legacy layouts) and every
//! block and array is read; the legacy header parser and the chain decoder also run alone on
//! the bytes from the first block magic on. Errors are fine; panics, aborts, hangs and huge
//! allocations are bugs.
#![no_main]

use asdf_core::array::ByteOrder;
use asdf_core::unstable::{decode_chain, parse_legacy_block_header};
use asdf_core::{ExternalPolicy, OpenOptions};
use libfuzzer_sys::fuzz_target;

const MAX: u64 = 16 << 20;

fuzz_target!(|data: &[u8]| {
    let opts = OpenOptions::new()
        .max_block_bytes(MAX)
        .external_policy(ExternalPolicy::None);
    if let Ok(f) = opts.open_bytes(data.to_vec(), ".") {
        for i in 0..f.blocks().len() {
            if let Ok(bytes) = f.block_data(i) {
                assert!(bytes.len() as u64 <= MAX.max(f.blocks()[i].used_size));
            }
        }
        for (path, _) in f.arrays() {
            let _ = f.dyn_array(&path);
        }
    }
    let Some(at) = data.windows(4).position(|w| w == b"\xd3BLK") else {
        return;
    };
    let block = &data[at..];
    if let Ok((h, legacy)) = parse_legacy_block_header(block, at as u64) {
        assert_eq!(h.header_size, legacy.layout.header_size());
        let start = 6 + usize::from(h.header_size);
        if let Some(stored) = block.get(start..) {
            let memory = h.data_size.min(MAX);
            if let Ok(out) = decode_chain(stored, memory, MAX, ByteOrder::Little) {
                assert_eq!(out.len() as u64, memory);
            }
        }
    }
});
