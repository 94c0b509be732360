//! Helpers shared by the crates of asdf-rs, at the bottom of its dependency graph: the one
//! progress type ([`Progress`]) and the one routine for large zeroed allocations
//! ([`mem`]). `asdf-blosc2` and `asdf-core` both use them (and re-export [`Progress`] as
//! `asdf_blosc2::Progress` and `asdf_core::Progress`); since `asdf-core` depends on
//! `asdf-blosc2` only with its `blosc2` feature, neither of the two could hold them for the
//! other.

pub mod mem;
mod progress;

pub use progress::Progress;
