//! `asdftool convert` between HDF5 (`.h5`, `.hdf5`, `.he5`, `.nc`) and ASDF, through the
//! `asdf-hdf5` crate (`docs/hdf5.md` gives the mapping).

use std::path::Path;

/// `x.h5` → `y.asdf`: groups as mappings, datasets as arrays at their key paths, attributes,
/// chunk shapes and filters under `_hdf5`. `-c` compresses every array (default: `zlib` for
/// the datasets that were deflated).
pub fn to_asdf(input: &Path, output: &Path, codec: Option<&str>) -> Result<String, String> {
    let compression = codec.map(crate::convert::compression).transpose()?;
    let (progress, tty) = progress_bar("read");
    let opts = asdf_hdf5::ToAsdfOptions {
        compression,
        progress,
        ..asdf_hdf5::ToAsdfOptions::default()
    };
    let result = asdf_hdf5::to_asdf(input, output, &opts);
    if tty {
        eprintln!();
    }
    let s = result.map_err(|e| format!("{}: {e}", input.display()))?;
    Ok(format!(
        "wrote {} ({} bytes: {} groups, {} datasets, {} attributes)\n",
        output.display(),
        s.len,
        s.groups,
        s.datasets,
        s.attributes
    ))
}

/// A progress callback that redraws one line on stderr when it is a terminal: a bar of the
/// bytes read (datasets are read, and large ones written, a band at a time), the datasets.
fn progress_bar(verb: &'static str) -> (Option<asdf_hdf5::ProgressFn>, bool) {
    use std::io::{IsTerminal, Write};
    let tty = std::io::stderr().is_terminal();
    let progress = tty.then(|| {
        std::sync::Arc::new(move |p: asdf_hdf5::Progress| {
            const WIDTH: u64 = 30;
            let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
            let done = (p.bytes.saturating_mul(WIDTH))
                .checked_div(p.total)
                .unwrap_or(0)
                .min(WIDTH) as usize;
            let bar = format!("{}{}", "#".repeat(done), "-".repeat(WIDTH as usize - done));
            let mut e = std::io::stderr().lock();
            let _ = write!(
                e,
                "\r[{bar}] {verb} {:.1} of {:.1} MiB, {} datasets",
                mib(p.bytes),
                mib(p.total),
                p.datasets
            );
            let _ = e.flush();
        }) as asdf_hdf5::ProgressFn
    });
    (progress, tty)
}

/// `y.asdf` → `z.h5`; with `verify_checksums`, every block's MD5 is checked as it is read
/// (a mismatch fails the conversion, naming the block, and leaves no output).
pub fn from_asdf(
    _access: &crate::Access,
    input: &Path,
    output: &Path,
    _codec: Option<&str>,
    verify_checksums: bool,
) -> Result<String, String> {
    let (progress, tty) = progress_bar("read");
    let opts = asdf_hdf5::FromAsdfOptions {
        progress,
        verify_checksums,
        ..asdf_hdf5::FromAsdfOptions::default()
    };
    let result = asdf_hdf5::from_asdf_with(input, output, &opts);
    if tty {
        eprintln!();
    }
    let s = result.map_err(|e| format!("{}: {e}", input.display()))?;
    Ok(format!("wrote {} ({} bytes)\n", output.display(), s.len))
}
