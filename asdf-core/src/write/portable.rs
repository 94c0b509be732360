//! Which block codecs python asdf 6.0.0 reads by itself, and what a write does with the
//! others: a [`WriteWarning`] per codec in the [`WriteSummary`](super::WriteSummary), or,
//! with [`WriteOptions::portable`](super::WriteOptions::portable), a refusal before any byte
//! is written.
//!
//! Python asdf 6.0.0 (`asdf/_compression.py`) reads `zlib`, `bzp2` and `lz4` (its own chunk
//! framing, which is the one this library writes) and nothing else; every other label needs
//! a plugin that registers a `Compressor` for it.

use super::jobs::BlockJob;
use super::{Compression, WriteError};

/// What python asdf 6.0.0 needs to read blocks of `c`: `None` when it reads them itself.
pub(crate) fn python_needs(c: Compression) -> Option<&'static str> {
    match c {
        Compression::Zlib | Compression::Bzp2 | Compression::Lz4 => None,
        Compression::Zstd | Compression::Lz4f | Compression::Blsc => {
            Some("the asdf-compression plugin (0.1.0 registers zstd, lz4f and blsc)")
        }
        Compression::Bls2 => Some("asdf-compression after 0.1.0 (its development version)"),
        Compression::Bsc2 => Some("a plugin, and none registering bsc2 is known"),
        Compression::Xz => Some("a plugin, and none registering xz is known (ASDF.jl writes it)"),
    }
}

/// Something a write did that a reader may not follow; the write itself succeeded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteWarning {
    /// Blocks of a codec python asdf 6.0.0 does not read without a plugin (one warning per
    /// codec and write). [`WriteOptions::portable`](super::WriteOptions::portable) refuses
    /// such a write instead.
    #[error(
        "{}: python asdf 6.0.0 reads {codec} blocks only with {needs}",
        describe_blocks(blocks, external_files)
    )]
    NotPortable {
        /// The codec.
        codec: Compression,
        /// The main file's blocks of that codec, by index.
        blocks: Vec<usize>,
        /// External block files (`NAME0000.asdf`, ...) whose block has that codec.
        external_files: Vec<String>,
        /// What python asdf needs to read them.
        needs: &'static str,
    },
}

fn describe_blocks(blocks: &[usize], external: &[String]) -> String {
    let mut parts = Vec::new();
    if !blocks.is_empty() {
        let list: Vec<String> = blocks.iter().map(usize::to_string).collect();
        let noun = if blocks.len() == 1 { "block" } else { "blocks" };
        parts.push(format!("{noun} {}", list.join(", ")));
    }
    if !external.is_empty() {
        parts.push(format!("external {}", external.join(", ")));
    }
    parts.join(" and ")
}

/// The warnings for the blocks of a plan, one per codec in the order first met; with
/// `portable`, the refusal naming the first block python asdf cannot read by itself.
pub(crate) fn check(
    portable: bool,
    blocks: &[BlockJob<'_>],
    externals: &[(String, BlockJob<'_>)],
) -> Result<Vec<WriteWarning>, WriteError> {
    let main = blocks.iter().enumerate().map(|(i, b)| (Ok(i), b));
    let ext = externals.iter().map(|(n, b)| (Err(n), b));
    let mut warnings: Vec<WriteWarning> = Vec::new();
    for (at, job) in main.chain(ext) {
        let Some(c) = job.compression else { continue };
        let Some(needs) = python_needs(c) else {
            continue;
        };
        if portable {
            return Err(WriteError::NotPortable {
                block: match at {
                    Ok(i) => format!("block {i}"),
                    Err(name) => format!("the block of external file {name}"),
                },
                codec: c,
                needs,
            });
        }
        let i = match warnings
            .iter()
            .position(|w| matches!(w, WriteWarning::NotPortable { codec, .. } if *codec == c))
        {
            Some(i) => i,
            None => {
                warnings.push(WriteWarning::NotPortable {
                    codec: c,
                    blocks: Vec::new(),
                    external_files: Vec::new(),
                    needs,
                });
                warnings.len() - 1
            }
        };
        let WriteWarning::NotPortable {
            blocks,
            external_files,
            ..
        } = &mut warnings[i];
        match at {
            Ok(i) => blocks.push(i),
            Err(name) => external_files.push(name.clone()),
        }
    }
    Ok(warnings)
}
