//! `asdftool codegen SCHEMA_DIR_OR_FILE... -o OUT.rs`: Rust types with `#[derive(AsdfType)]`
//! for ASDF schemas (asdf-codegen). Each warning (a schema or property not mapped
//! faithfully) is one line on standard error; the exit status stays 0.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use asdf_codegen::{collect_sources, generate, Options};

/// Generates the types of the schemas under `inputs` into `out`; `Ok` carries the summary.
pub fn run(
    inputs: &[PathBuf],
    out: &Path,
    all_versions: bool,
    lazy_arrays: bool,
) -> Result<String, crate::Failure> {
    let sources = collect_sources(inputs).map_err(|e| asdf_core::display_chain(&e))?;
    let opts = Options {
        all_versions,
        lazy_arrays,
    };
    let generated = generate(&sources, &opts).map_err(|e| asdf_core::display_chain(&e))?;
    asdf_core::unstable::write_atomically(out, |w| w.write_all(generated.code.as_bytes()))
        .map_err(|e| format!("{}: cannot write: {e}", out.display()))?;
    for w in &generated.warnings {
        eprintln!("warning: {w}");
    }
    Ok(format!(
        "wrote {}: {} schema{} ({} manifest{} read), {} warning{}\n",
        out.display(),
        generated.schemas,
        if generated.schemas == 1 { "" } else { "s" },
        generated.manifests,
        if generated.manifests == 1 { "" } else { "s" },
        generated.warnings.len(),
        if generated.warnings.len() == 1 {
            ""
        } else {
            "s"
        },
    ))
}
