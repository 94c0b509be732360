//! `asdftool check-schemas DIR`: every YAML schema under a folder parses, satisfies its
//! metaschema, resolves its `$ref`s, and every example in its `examples` list validates
//! (see `asdf_core::schema::check_schemas`).

use std::path::Path;

/// Checks the schemas under `dir`; `Ok` carries the summary line, `Err` the report (a
/// heading, then one line per problem: file, example, tree path, what is wrong; exit status
/// 1) or an unreadable folder (exit status 2).
pub fn run(dir: &Path) -> Result<String, crate::Failure> {
    let report = asdf_core::schema::check_schemas(dir).map_err(|e| e.to_string())?;
    let files = report.files.len();
    let summary = format!(
        "{} schema file{}, {} example{}",
        files,
        if files == 1 { "" } else { "s" },
        report.examples,
        if report.examples == 1 { "" } else { "s" }
    );
    if files == 0 {
        return Err(format!("{}: no schema files (.yaml, .yml)", dir.display()).into());
    }
    if report.is_ok() {
        return Ok(format!("{}: ok ({summary})\n", dir.display()));
    }
    let n = report.problems.len();
    Err(crate::Failure::Problems {
        text: format!(
            "{}: {n} problem{} found ({summary})\n{report}",
            dir.display(),
            if n == 1 { "" } else { "s" }
        ),
        to_stdout: false,
    })
}
