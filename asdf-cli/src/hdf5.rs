//! `asdftool convert` between HDF5 (`.h5`, `.hdf5`, `.he5`, `.nc`) and ASDF, through the
//! `asdf-hdf5` crate (`docs/hdf5.md` gives the mapping).

use std::path::Path;

/// `x.h5` → `y.asdf`: groups as mappings, datasets as arrays at their key paths, attributes,
/// chunk shapes and filters under `_hdf5`. `-c` compresses every array (default: `zlib` for
/// the datasets that were deflated). A dataset or attribute with no ASDF form yet is left
/// out and added to `left_out` as a line (`IN: PATH left out: why`); with `strict` it is the
/// error.
pub fn to_asdf(
    input: &Path,
    output: &Path,
    codec: Option<&str>,
    strict: bool,
    standard: Option<asdf_core::StandardVersion>,
    flags: crate::WriteFlags,
    left_out: &mut Vec<String>,
) -> Result<String, String> {
    let compression = codec.map(crate::output::compression).transpose()?;
    // every array takes -c's codec: the writer's rule about it, said of them all
    let every = |codec: asdf_core::write::Compression, needs: &str| {
        format!(
            "{}: every array's block (-c {codec}): python asdf 6.0.0 reads {codec} blocks only with {needs}",
            output.display()
        )
    };
    let warnings: Vec<String> = match compression {
        Some(c) => match portability(c, flags.portable) {
            Ok(warnings) => warnings
                .iter()
                .map(|w| match w {
                    asdf_core::write::WriteWarning::NotPortable { codec, needs, .. } => {
                        every(*codec, needs)
                    }
                    other => format!("{}: {other}", output.display()),
                })
                .collect(),
            Err(asdf_core::write::WriteError::NotPortable { codec, needs, .. }) => {
                return Err(format!(
                    "{}; --portable refuses it (choose -c zlib, bzp2 or lz4, or write without --portable)",
                    every(codec, needs)
                ))
            }
            Err(e) => return Err(crate::output::write_error(output, &e)),
        },
        None => Vec::new(),
    };
    let (_bar, progress) = progress_bar(input);
    let opts = asdf_hdf5::ToAsdfOptions {
        compression,
        progress,
        strict,
        standard,
        ..asdf_hdf5::ToAsdfOptions::default()
    };
    let result = asdf_hdf5::to_asdf(input, output, &opts);
    let s = result.map_err(|e| format!("{}: {e}", input.display()))?;
    for w in &warnings {
        eprintln!("asdftool: warning: {w}");
    }
    left_out.extend(
        s.left_out
            .iter()
            .map(|(path, why)| format!("{}: {path} left out: {why}", input.display())),
    );
    Ok(format!(
        "wrote {} ({} bytes: {} groups, {} datasets, {} attributes)\n",
        output.display(),
        s.len,
        s.groups,
        s.datasets,
        s.attributes
    ))
}

/// What the writer says of blocks compressed with `c` (`-c`, which every array of an HDF5
/// conversion takes; without it they are zlib or uncompressed, which python asdf reads): its
/// `--portable` refusal, or its warnings. asdf-hdf5's options have no `portable`, so the
/// writer's own rule is asked here, by writing one byte with `c` to memory, before the
/// conversion writes anything; the block it names is the first array's.
fn portability(
    c: asdf_core::write::CompressionChoice,
    portable: bool,
) -> Result<Vec<asdf_core::write::WriteWarning>, asdf_core::write::WriteError> {
    use asdf_core::array::{ArrayOptions, ByteOrder, DType, ScalarType};
    use asdf_core::write::{WriteArray, WriteOptions, Writer};
    let mut w = Writer::new(WriteOptions::new().portable(portable));
    // one uint8 item in one byte: always an array
    let Some(one) = WriteArray::from_bytes(
        DType::scalar(ScalarType::UInt8, ByteOrder::Little),
        vec![1],
        vec![0u8].into(),
    ) else {
        return Ok(Vec::new());
    };
    let node = w.add_array_with(
        one,
        ArrayOptions {
            compression: Some(c),
            ..Default::default()
        },
    );
    let tree = asdf_core::Node::map([("probe".to_string(), node)]);
    let summary = w.write_to(&tree, std::io::Cursor::new(Vec::new()))?;
    Ok(summary.warnings)
}

/// The bar of a conversion (bytes of array data read, out of those of the datasets met so
/// far), drawn by asdftool's one display (`progress.rs`: files of 256 MiB or more, on a
/// terminal, without `--quiet`) from asdf-hdf5's reports (`asdf_core::Progress`); the
/// display, and the callback to hand to asdf-hdf5 (`None` when nothing is shown).
fn progress_bar(input: &Path) -> (crate::progress::Progress, Option<asdf_hdf5::Progress>) {
    crate::progress::Progress::fed(
        crate::progress::largest(&[input]),
        format!("converting {}", input.display()),
    )
}

/// `y.asdf` → `z.h5`; with `verify_checksums`, every block's MD5 is checked as it is read
/// (a mismatch fails the conversion, naming the block, and leaves no output). What has no
/// HDF5 form yet (arrays inside records or lists) is left out and added to `left_out` as a
/// line (`IN: PATH left out: why`); with `strict` it is the error.
pub fn from_asdf(
    _access: &crate::Access,
    input: &Path,
    output: &Path,
    verify_checksums: bool,
    strict: bool,
    left_out: &mut Vec<String>,
) -> Result<String, String> {
    let (_bar, progress) = progress_bar(input);
    let opts = asdf_hdf5::FromAsdfOptions {
        progress,
        verify_checksums,
        strict,
        ..asdf_hdf5::FromAsdfOptions::default()
    };
    let result = asdf_hdf5::from_asdf_with(input, output, &opts);
    let s = result.map_err(|e| format!("{}: {e}", input.display()))?;
    left_out.extend(
        s.left_out
            .iter()
            .map(|(path, why)| format!("{}: {path} left out: {why}", input.display())),
    );
    Ok(format!("wrote {} ({} bytes)\n", output.display(), s.len))
}
