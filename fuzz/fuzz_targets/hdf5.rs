//! Fuzz target: HDF5 → ASDF (`asdf_hdf5::to_asdf_bytes`, whole or band by band) on arbitrary bytes, then the ASDF
//! file it made is opened and read whole. A panic inside hdf5-reader is a bug to fix in a
//! patched copy (`third_party/`), one in asdf-hdf5 ours. Errors are fine; panics, aborts,
//! hangs and huge allocations are bugs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // HDF5 declares sizes that unwritten chunks fill in: keep each dataset small here
    // and half of the inputs take the band-by-band path of large datasets for every dataset
    let opts = asdf_hdf5::ToAsdfOptions {
        max_dataset_bytes: 16 << 20,
        band_min_bytes: if data.len().is_multiple_of(2) {
            0
        } else {
            32 << 20
        },
        ..asdf_hdf5::ToAsdfOptions::default()
    };
    if let Ok(bytes) = asdf_hdf5::to_asdf_bytes(data, &opts) {
        let file = asdf_core::AsdfFile::from_bytes(bytes).expect("our own output opens");
        asdf_core::unstable::canonical::to_json(&file).expect("our own output reads");
    }
});
