//! Memory for large decoded data: the one zeroed allocation of asdf-rs
//! (`asdf_common::mem`, shared with asdf-blosc2), which fails softly and asks for transparent
//! huge pages for large buffers. `crate::mem::zeroed_bytes` is its name in this crate.

pub(crate) use asdf_common::mem::zeroed_bytes;
