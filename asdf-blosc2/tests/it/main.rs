//! asdf-blosc2's integration tests, one module per area, in one test program (4 programs
//! before, each linked alone). Run one area with a filter, e.g. `cargo test -p asdfrs-blosc2
//! --test it vl_blocks::`.

mod blosc1_chunks;
mod progress;
mod python_frames;
mod vl_blocks;
