//! Fuzz target: ASDF in FITS. Arbitrary bytes after a fixed `SIMPLE = T` card, opened and read
//! whole (every HDU an array names, through the canonical JSON form), so every input reaches
//! the FITS walker, the card parser and the HDU-to-array conversions. Errors are fine; panics,
//! aborts, hangs and huge allocations are bugs.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// The first card of every FITS file (80 bytes).
const SIMPLE: &[u8; 80] =
    b"SIMPLE  =                    T                                                  ";

fuzz_target!(|data: &[u8]| {
    // seeds are whole FITS files: do not repeat their first card
    let rest = data.strip_prefix(&SIMPLE[..]).unwrap_or(data);
    let mut bytes = SIMPLE.to_vec();
    bytes.extend_from_slice(rest);
    if let Ok(file) = asdf_core::AsdfFile::from_bytes(bytes) {
        let _ = asdf_core::unstable::canonical::to_json(&file);
        for hdu in file.fits_hdus().unwrap_or_default() {
            let _ = hdu.shape();
        }
    }
});
