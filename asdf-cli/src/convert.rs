//! `asdftool defragment | explode | implode | to-yaml`: rewrite a file through the writer.
//! The input is only read; the output is written atomically (temporary file, fsync, rename).

use std::path::Path;

use asdf_core::write::{CompressionChoice, StandardVersion, Storage, WriteOptions, Writer};

use crate::output::{compression, same_file};

/// What a conversion does to the arrays.
pub enum Mode {
    /// All blocks internal, compact, with this compression (`None`: keep each block's).
    Defragment(Option<String>),
    /// One external file per block beside the output.
    Explode,
    /// External blocks brought back into the file.
    Implode,
    /// Every array inline in the YAML.
    ToYaml,
}

pub fn run(
    access: &crate::Access,
    input: &Path,
    output: &Path,
    mode: Mode,
    standard: Option<&str>,
    flags: crate::WriteFlags,
) -> Result<String, String> {
    if same_file(input, output) {
        return Err(format!(
            "{}: the output would replace the input; choose another output path",
            output.display()
        ));
    }
    let opts = match &mode {
        Mode::Defragment(c) => {
            WriteOptions::new()
                .storage(Storage::Internal)
                .compression(match c {
                    Some(name) => compression(name)?,
                    None => CompressionChoice::Input,
                })
        }
        Mode::Explode => WriteOptions::new()
            .storage(Storage::External)
            .compression(CompressionChoice::Input),
        Mode::Implode => WriteOptions::new()
            .storage(Storage::Internal)
            .compression(CompressionChoice::Input),
        Mode::ToYaml => WriteOptions::new().storage(Storage::Inline),
    };
    let chosen = standard.map(standard_version).transpose()?;
    let file = access.open(input)?;
    let opts = opts
        .standard(standard_to_write(chosen, &file))
        .portable(flags.portable);
    let (_p, feed) = crate::progress::Progress::fed(
        crate::progress::largest(&[input]),
        format!("writing {}", output.display()),
    );
    let opts = match feed {
        Some(f) => opts.progress(f),
        None => opts,
    };
    let writer = Writer::from_file(&file, opts);
    let summary = writer
        .write_to_path(file.tree(), output)
        .map_err(|e| crate::output::write_error(output, &e))?;
    crate::output::warn(output, &summary.warnings);
    let mut msg = format!("wrote {} ({} bytes", output.display(), summary.len);
    if !summary.block_offsets.is_empty() {
        msg.push_str(&format!(", {} blocks", summary.block_offsets.len()));
    }
    msg.push(')');
    for extra in &summary.external_files {
        msg.push_str(&format!("\nwrote {}", extra.display()));
    }
    msg.push('\n');
    Ok(msg)
}

/// A file format `asdftool convert` knows, from a path's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.asdf` (and any extension not listed below).
    Asdf,
    /// `.b2nd` (an n-dimensional Blosc2 array) or `.b2frame` (a Blosc2 super-chunk).
    Blosc2,
    /// `.h5`, `.hdf5`, `.he5`, `.nc` (netCDF-4 is HDF5).
    Hdf5,
    /// `.fits`, `.fit`, `.fts` (ASDF in FITS, as JWST products are).
    Fits,
}

impl Format {
    /// The format a path names by its extension (case-insensitive).
    pub fn of(path: &Path) -> Format {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        match ext.as_str() {
            "b2nd" | "b2frame" => Format::Blosc2,
            "h5" | "hdf5" | "he5" | "nc" => Format::Hdf5,
            "fits" | "fit" | "fts" => Format::Fits,
            _ => Format::Asdf,
        }
    }
}

/// The standard to write a tree read from `file` in: the `--standard` chosen, else the
/// default, but never older than the input's (a 1.7.0 file rewritten as 1.6.0 would lose the
/// input's 1.7.0 history entries' meaning, which python asdf warns of).
pub fn standard_to_write(
    chosen: Option<StandardVersion>,
    file: &asdf_core::AsdfFile,
) -> StandardVersion {
    let input_standard = file.standard_version();
    match chosen {
        Some(v) => v,
        None if input_standard.known() && input_standard > StandardVersion::default() => {
            input_standard
        }
        None => StandardVersion::default(),
    }
}

/// The `--standard` given: a version this library writes (see [`StandardVersion::ALL`]).
pub fn standard_version(v: &str) -> Result<StandardVersion, String> {
    StandardVersion::parse(v)
        .ok()
        .filter(StandardVersion::known)
        .ok_or_else(|| {
            let all: Vec<&str> = StandardVersion::ALL.iter().map(|v| v.as_str()).collect();
            format!(
                "--standard {v}: not an ASDF Standard version asdftool writes ({})",
                all.join(", ")
            )
        })
}

/// `asdftool convert IN OUT [-c CODEC] [--array PATH] [--strict] [--standard V] [--portable]`:
/// formats by extension, one side ASDF. Between HDF5 and ASDF, what was left out (no form
/// yet on the other side) is one line each and exit status 1, the file written; `--strict`
/// refuses such a file instead.
#[allow(clippy::too_many_arguments)]
pub fn convert(
    access: &crate::Access,
    input: &Path,
    output: &Path,
    compress: Option<String>,
    array: Option<&str>,
    verify_checksums: bool,
    strict: bool,
    standard: Option<&str>,
    flags: crate::WriteFlags,
) -> Result<String, crate::Failure> {
    if strict
        && !matches!(
            (Format::of(input), Format::of(output)),
            (Format::Hdf5, Format::Asdf) | (Format::Asdf, Format::Hdf5)
        )
    {
        return Err(
            "--strict applies only when converting between HDF5 and ASDF"
                .to_string()
                .into(),
        );
    }
    let mut left_out = Vec::new();
    let text = convert_formats(
        access,
        input,
        output,
        compress,
        array,
        verify_checksums,
        strict,
        standard,
        flags,
        &mut left_out,
    )?;
    if left_out.is_empty() {
        return Ok(text);
    }
    let mut text = text;
    for line in &left_out {
        text.push_str(line);
        text.push('\n');
    }
    Err(crate::Failure::Problems {
        text,
        to_stdout: false,
    })
}

/// [`convert`], with what an HDF5 conversion left out added to `left_out`.
#[allow(clippy::too_many_arguments)]
// Without the hdf5 feature `left_out` is not pushed to, and clippy would have a slice.
#[cfg_attr(not(feature = "hdf5"), allow(clippy::ptr_arg))]
fn convert_formats(
    access: &crate::Access,
    input: &Path,
    output: &Path,
    compress: Option<String>,
    array: Option<&str>,
    verify_checksums: bool,
    #[cfg_attr(not(feature = "hdf5"), allow(unused_variables))] strict: bool,
    standard: Option<&str>,
    flags: crate::WriteFlags,
    #[cfg_attr(not(feature = "hdf5"), allow(unused_variables))] left_out: &mut Vec<String>,
) -> Result<String, String> {
    if flags.portable && Format::of(output) != Format::Asdf {
        return Err("--portable applies only when the output is ASDF".into());
    }
    if standard.is_some() && Format::of(output) != Format::Asdf {
        return Err("--standard applies only when the output is ASDF".into());
    }
    let chosen = standard.map(standard_version).transpose()?;
    if verify_checksums && (Format::of(input), Format::of(output)) != (Format::Asdf, Format::Hdf5) {
        return Err("--verify-checksums applies only when converting ASDF to HDF5".into());
    }
    if same_file(input, output) {
        return Err(format!(
            "{}: the output would replace the input; choose another output path",
            output.display()
        ));
    }
    let codec = compress.as_deref();
    // each conversion draws its own bar of bytes: ASDF to ASDF (run), Blosc2 (blosc2.rs),
    // HDF5 (hdf5.rs)
    match (Format::of(input), Format::of(output)) {
        (Format::Asdf, Format::Asdf) => {
            if array.is_some() {
                return Err("--array applies only when converting to another format".into());
            }
            run(
                access,
                input,
                output,
                Mode::Defragment(compress),
                standard,
                flags,
            )
        }
        (Format::Blosc2, Format::Asdf) => {
            crate::blosc2::to_asdf(input, output, codec, chosen, flags)
        }
        (Format::Asdf, Format::Blosc2) => {
            crate::blosc2::from_asdf(access, input, output, codec, array)
        }
        #[cfg(feature = "hdf5")]
        (Format::Hdf5, Format::Asdf) => {
            crate::hdf5::to_asdf(input, output, codec, strict, chosen, flags, left_out)
        }
        #[cfg(feature = "hdf5")]
        (Format::Asdf, Format::Hdf5) => {
            crate::hdf5::from_asdf(access, input, output, verify_checksums, strict, left_out)
        }
        #[cfg(not(feature = "hdf5"))]
        (Format::Hdf5, Format::Asdf) | (Format::Asdf, Format::Hdf5) => Err(
            "this asdftool was built without HDF5 support (cargo feature `hdf5`, on by default)"
                .into(),
        ),
        (Format::Fits, Format::Asdf) => {
            // the tree of the ASDF extension; every `fits:` array becomes a block
            if array.is_some() {
                return Err("--array applies only when converting from ASDF".into());
            }
            run(
                access,
                input,
                output,
                Mode::Defragment(compress),
                standard,
                flags,
            )
        }
        (Format::Asdf, Format::Fits) => Err(format!(
            "{}: writing FITS is not supported (ASDF in FITS is read: convert x.fits y.asdf)",
            output.display()
        )),
        (from, to) => Err(format!(
            "cannot convert {from:?} to {to:?}: one side of a conversion must be ASDF \
             (convert through an .asdf file)"
        )),
    }
}
