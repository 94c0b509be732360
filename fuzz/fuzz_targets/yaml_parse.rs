//! Fuzz target: the YAML parser alone (fast path and libyaml-safer) with the default limits.
//! Errors are fine; panics, aborts, hangs and huge allocations are bugs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = asdf_core::yaml::parse(data, &asdf_core::yaml::YamlLimits::default());
});
