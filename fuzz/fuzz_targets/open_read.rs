//! Fuzz target: open arbitrary bytes as an ASDF file and read everything (every block, array,
//! mask and alias) through the canonical JSON form. Errors are fine; panics, aborts, hangs and
//! huge allocations are bugs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = asdf_core::AsdfFile::from_bytes(data.to_vec()) {
        let _ = asdf_core::unstable::canonical::to_json(&file);
    }
});
