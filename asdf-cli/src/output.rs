//! What the commands that write a file share: the codec named by `-c`, whether the output
//! is the input, writing bytes with progress reports, and what `--portable` refuses or a
//! write warns of. A shared module: it imports no command module.

use std::path::Path;

use asdf_core::write::Compression;
use asdf_core::write::CompressionChoice;
use asdf_core::write::{WriteError, WriteWarning};

/// The compression named by `-c NAME`: a codec label, or `none`.
pub fn compression(name: &str) -> Result<CompressionChoice, String> {
    if name == "none" {
        return Ok(CompressionChoice::None);
    }
    name.parse::<Compression>()
        .map(CompressionChoice::Codec)
        .map_err(|_| {
            format!(
                "unknown compression {name:?} (choose zlib, bzp2, lz4, zstd, lz4f, blsc, bsc2, bls2, xz or none)"
            )
        })
}

/// Whether two paths name the same existing file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Bytes written between two progress reports.
const REPORT_EVERY: usize = 8 << 20;

/// Writes `parts` one after the other to `w`, telling `progress` the bytes written of
/// `total` every [`REPORT_EVERY`] bytes and at the end.
pub fn write_reporting(
    w: &mut impl std::io::Write,
    parts: &[&[u8]],
    total: u64,
    progress: Option<&asdf_core::Progress>,
) -> std::io::Result<()> {
    let mut done = 0u64;
    for part in parts {
        for piece in part.chunks(REPORT_EVERY) {
            w.write_all(piece)?;
            done += piece.len() as u64;
            if let Some(p) = progress {
                p.report(done, total);
            }
        }
    }
    Ok(())
}

/// The one line of a failed ASDF write to `output`: a `--portable` refusal says which block
/// and codec and what to do; other errors with their causes.
pub fn write_error(output: &Path, e: &WriteError) -> String {
    match e {
        WriteError::NotPortable {
            block,
            codec,
            needs,
        } => format!(
            "{}: {block}: python asdf 6.0.0 reads {codec} blocks only with {needs}; \
             --portable refuses it (choose -c zlib, bzp2 or lz4, or write without --portable)",
            output.display()
        ),
        _ => format!("{}: {}", output.display(), crate::chain(e)),
    }
}

/// Says on standard error, one line each, what a write to `output` did that python asdf may
/// not follow (shown with `--quiet` too: it is not a progress report).
pub fn warn(output: &Path, warnings: &[WriteWarning]) {
    for w in warnings {
        eprintln!("asdftool: warning: {}: {w}", output.display());
    }
}
