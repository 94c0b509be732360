//! Blosc2 in pure Rust: chunks (the Blosc2 chunk format with its codecs and filters) and
//! contiguous frames (`.b2frame`, and `.b2nd` arrays, which are frames with a `b2nd`
//! metalayer), as C-Blosc2 and python-blosc2 write them; and the Blosc1 chunks they grew
//! from, as C-Blosc 1.x and python-blosc write them ([`blosc1`]).
//!
//! Chunks with variable-length blocks (C-Blosc2 3.x's `vlblocks`, written by
//! `blosc2_vlcompress` and python-blosc2's `BatchArray`) read whole ([`Frame::chunk`],
//! [`chunk::decode`]: the blocks one after the other) or one buffer per block
//! ([`Frame::vl_blocks`], [`chunk::decode_vl_blocks`]), as python-blosc2 4.14.1 gives them.
//! Plugin codecs and filters (NDLZ, ZFP, J2K, NDCELL, NDMEAN, INT_TRUNC, ...) are not read:
//! the error names the plugin and its id ([`Error::UnsupportedCodec`],
//! [`Error::UnsupportedFilter`]).
//!
//! This crate knows bytes only; binding frames to ASDF arrays lives in `asdf-core` (block
//! codecs `bsc2` and `bls2`) and `asdftool convert`.
//!
//! Every length, offset and count read from the input is checked before use, and no buffer
//! is sized by a field that was not checked against the input's length or a limit the
//! caller gives: malformed input is an [`Error`] naming the offset, never a panic.

pub mod blosc1;
mod blosclz;
pub mod chunk;
pub mod encode;
mod error;
mod filters;
pub mod frame;
mod lz4hc;
mod progress;
mod shuffle;

pub use encode::{
    b2nd_frame, b2nd_frame_with_progress, encode_chunk, CParams, Codec, Filter, FrameWriter,
};
pub use error::Error;
pub use frame::{B2nd, Frame, Meta};
pub use progress::Progress;
