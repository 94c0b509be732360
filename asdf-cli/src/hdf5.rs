//! `asdftool convert` between HDF5 (`.h5`, `.hdf5`, `.he5`, `.nc`) and ASDF, through the
//! `asdf-hdf5` crate (`docs/hdf5.md` gives the mapping).

use std::path::Path;

/// `x.h5` → `y.asdf`: groups as mappings, datasets as arrays at their key paths, attributes,
/// chunk shapes and filters under `_hdf5`. `-c` compresses every array (default: `zlib` for
/// the datasets that were deflated).
pub fn to_asdf(input: &Path, output: &Path, codec: Option<&str>) -> Result<String, String> {
    use std::io::{IsTerminal, Write};
    let compression = codec.map(crate::convert::compression).transpose()?;
    // on a terminal, one line rewritten as datasets are read
    let tty = std::io::stderr().is_terminal();
    let progress: Option<std::sync::Arc<dyn Fn(asdf_hdf5::Progress) + Send + Sync>> =
        tty.then(|| {
            std::sync::Arc::new(|p: asdf_hdf5::Progress| {
                let mut e = std::io::stderr().lock();
                let _ = write!(
                    e,
                    "\rread {} datasets, {:.1} MiB",
                    p.datasets,
                    p.bytes as f64 / (1u64 << 20) as f64
                );
                let _ = e.flush();
            }) as std::sync::Arc<dyn Fn(asdf_hdf5::Progress) + Send + Sync>
        });
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

/// `y.asdf` → `z.h5`.
pub fn from_asdf(
    _access: &crate::Access,
    input: &Path,
    output: &Path,
    _codec: Option<&str>,
) -> Result<String, String> {
    let s = asdf_hdf5::from_asdf(input, output).map_err(|e| format!("{}: {e}", input.display()))?;
    Ok(format!("wrote {} ({} bytes)\n", output.display(), s.len))
}
