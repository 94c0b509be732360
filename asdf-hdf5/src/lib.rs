//! HDF5 ↔ ASDF conversion without a C library, over the pure-Rust `hdf5-reader` and
//! `hdf5-writer` crates.
