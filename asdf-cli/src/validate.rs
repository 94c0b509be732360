//! `asdftool validate FILE [--schema URI_OR_PATH] [--no-checksums]`: validate a file's tree
//! against its schemas (and optionally one more schema for the root), and verify block
//! checksums.

use std::path::Path;

use asdf_core::schema::{self, ValidationErrors};

use crate::chain;

/// Validates `file`; `Ok` carries the OK line, `Err` the report (one problem per line, exit
/// status 1) or an error reading the file or the schema (exit status 2).
pub fn run(
    access: &crate::Access,
    file: &Path,
    extra_schema: Option<&str>,
    checksums: bool,
) -> Result<String, crate::Failure> {
    let name = file.display();
    // The schema given on the command line: a file path, else a registered or bundled URI.
    let extra = match extra_schema {
        None => None,
        Some(s) if Path::new(s).is_file() => {
            Some(schema::register_schema_file(s).map_err(|e| format!("--schema {s}: {e}"))?)
        }
        Some(s) => {
            schema::check_schema(s).map_err(|e| format!("--schema {s}: {e}"))?;
            Some(s.to_string())
        }
    };
    let af = access.open(file)?;
    let mut problems: Vec<String> = Vec::new();
    let mut add = |r: Result<(), ValidationErrors>| {
        if let Err(e) = r {
            problems.extend(e.lines());
        }
    };
    add(af.validate());
    if let Some(uri) = &extra {
        add(schema::validate_against(uri, af.tree()));
    }
    if checksums {
        let (_p, feed) = crate::progress::Progress::fed(
            crate::progress::largest(&[file]),
            format!("verifying the block checksums of {name}"),
        );
        let verified = match &feed {
            Some(f) => af.verify_checksums_with_progress(f),
            None => af.verify_checksums(),
        };
        if let Err(e) = verified {
            problems.push(format!("checksum: {}", chain(&e)));
        }
    }
    if problems.is_empty() {
        let mut what = format!("valid (ASDF Standard {}", af.standard_version());
        if let Some(uri) = &extra {
            what.push_str(&format!(", schema {uri}"));
        }
        if checksums && !af.blocks().is_empty() {
            what.push_str(&format!(", {} block checksums verified", af.blocks().len()));
        }
        Ok(format!("{name}: {what})\n"))
    } else {
        let n = problems.len();
        let mut report = format!(
            "{name}: {n} problem{} found\n",
            if n == 1 { "" } else { "s" }
        );
        for p in problems {
            report.push_str(&p);
            report.push('\n');
        }
        Err(crate::Failure::Problems {
            text: report,
            to_stdout: false,
        })
    }
}
