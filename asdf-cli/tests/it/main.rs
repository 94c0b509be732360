//! asdftool's integration tests, one module per area, in one test program (21 programs
//! before: each linked asdf-core, the CLI's dependencies and its own copy of the shared helpers
//! alone). Run one area with a filter, e.g. `cargo test -p asdfrs-cli --test it view::`. The
//! crash harness (`crash`, its own `main`) stays a program of its own.

#[path = "../../../asdf-core/tests/common/mod.rs"]
mod common;
#[path = "../../../asdf-store/tests/support/mod.rs"]
mod support;
#[path = "../tool/mod.rs"]
mod tool;

mod check_schemas;
mod cli;
mod codegen;
mod commands;
mod convert_blosc2;
mod convert_blosc2_tensor;
mod convert_blosc2_vl;
mod convert_fits;
#[cfg(feature = "hdf5")]
mod convert_hdf5;
mod diff;
mod edit;
mod extract_slice;
mod legacy;
mod manners;
mod portable;
mod preview;
mod references;
mod remote;
mod standard_option;
mod validate_blocks;
mod view;
mod zarr_arrays;
