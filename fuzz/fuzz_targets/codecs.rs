//! Fuzz target: every block codec's decoder, whole and as a stream (`codec::decoder`, which
//! must give exactly what the whole decoder gives when both succeed). The first byte picks
//! the codec, the next three give the declared decoded size (at most 16 MiB), the rest is the
//! stored block. One target for all codecs, so one corpus grows for all of them and inputs
//! cross over between codecs. Errors are fine; panics, aborts, hangs and huge allocations are
//! bugs.
#![no_main]

use std::io::Read;

use asdf_core::unstable::{decode, decoder};
use asdf_core::write::Compression;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Some((size, stored)) = rest.split_at_checked(3) else {
        return;
    };
    let codec = Compression::ALL[usize::from(pick) % Compression::ALL.len()];
    let data_size = u64::from(size[0]) << 16 | u64::from(size[1]) << 8 | u64::from(size[2]);
    let whole = decode(codec, stored, data_size);
    if let Ok(out) = &whole {
        assert_eq!(
            out.len() as u64,
            data_size,
            "{codec:?} decoded another size"
        );
    }
    if let Some(mut r) = decoder(codec, stored, data_size) {
        let mut out = Vec::new();
        if r.read_to_end(&mut out).is_ok() {
            assert_eq!(
                out.len() as u64,
                data_size,
                "{codec:?} streamed another size"
            );
            if let Ok(w) = &whole {
                assert!(w == &out, "{codec:?} streamed other bytes");
            }
        }
    }
});
