//! asdf-core's integration tests, one module per area, in one test program.
//!
//! One program instead of 31: each was a crate of its own that loaded asdf-core's metadata,
//! instantiated the same generic code again and was linked on its own, for the lints and the
//! test build alike. Run one area with a filter, e.g. `cargo test -p asdfrs-core --test it
//! region::`. Not here: `memory` and `dyn_direct` (their own harness, measuring peak memory
//! in child processes) and `ui` (the derive's compile-fail cases).

mod asdf_in_fits;
mod asdf_zarr;
mod blosc2_blocks;
mod checksums;
#[path = "../common/mod.rs"]
mod common;
mod concurrency;
mod confinement;
mod conformance;
mod convert;
#[cfg(feature = "derive")]
mod derive;
#[cfg(feature = "derive")]
mod derive_props;
mod error_messages;
mod file_api;
mod lazy_headers;
mod legacy;
mod libasdf;
mod malformed;
mod masked_and_strings;
#[cfg(feature = "derive")]
mod one_call;
mod other_labels;
mod progress;
mod python_asdf_data;
mod region;
mod schema_validate;
mod serde_bridge;
mod standard_version;
#[cfg(feature = "derive")]
mod testing_helpers;
mod truncation;
mod write_api;
mod write_props;
mod write_roundtrip;
mod zarr_manifest;
