//! asdf-hdf5's integration tests, one module per area, in one test program (7 programs
//! before: each linked asdf-core, hdf5-reader, hdf5-writer and its own copy of the shared
//! helpers alone). Run one area with a filter, e.g. `cargo test -p asdfrs-hdf5 --test it
//! masks::`. Not here: `big_data` (its own harness, measuring the peak resident set of child
//! processes) and `bounded_memory` (its own counting allocator: no other test may allocate in
//! its process).

#[path = "../../../asdf-core/tests/common/mod.rs"]
mod common;

mod checksums;
mod fuzz_regressions;
mod h5py_files;
mod masks;
mod round_trip;
mod sequences;
mod tree_forms;
