//! `asdftool edit FILE`: the tree in `$VISUAL` or `$EDITOR`; on save it is parsed and
//! validated and written back through asdf-core's `update_with` (in place and journaled when
//! the blocks stay and the tree fits, else the whole file rewritten atomically). A bad edit is
//! shown again with the error at the top; quitting without saving abandons the edit. The
//! file is never written before an edit parses and validates, and every write keeps the old
//! file whole until the new one is.

use std::path::{Path, PathBuf};
use std::process::Command;

use asdf_core::write::{self, CompressionChoice, StandardVersion, UpdateKind, UpdateMode};
use asdf_core::yaml::{self, YamlLimits};

use crate::Failure;

/// The first line of each error note put at the top of a rejected edit.
const NOTE: &str = "# asdftool edit: ";

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi` (split at spaces, so
/// `EDITOR="code --wait"` works).
fn editor() -> Vec<String> {
    for var in ["VISUAL", "EDITOR"] {
        if let Some(v) = std::env::var_os(var) {
            let words: Vec<String> = v
                .to_string_lossy()
                .split_whitespace()
                .map(str::to_string)
                .collect();
            if !words.is_empty() {
                return words;
            }
        }
    }
    vec!["vi".to_string()]
}

/// The text without the error notes of a previous round.
fn strip_notes(text: &str) -> &str {
    let mut rest = text;
    while rest.starts_with(NOTE) {
        rest = rest.split_once('\n').map_or("", |(_, r)| r);
    }
    rest
}

/// Creates the temporary file the tree is edited in (in the system's temporary folder, a
/// new file: never one that already exists, nor a link planted there), holding `text`.
fn create_scratch(file: &Path, text: &str) -> Result<PathBuf, String> {
    use std::io::Write;
    let stem = file
        .file_stem()
        .map_or_else(|| "tree".into(), |s| s.to_string_lossy().into_owned());
    let dir = std::env::temp_dir();
    for n in 0..100 {
        let p = dir.join(format!(
            "asdftool-edit-{}-{n}-{stem}.yaml",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
        {
            Ok(mut f) => {
                return f
                    .write_all(text.as_bytes())
                    .map(|()| p.clone())
                    .map_err(|e| format!("{}: cannot write: {e}", p.display()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("{}: cannot create: {e}", p.display())),
        }
    }
    Err(format!(
        "cannot create a temporary file in {}",
        dir.display()
    ))
}

/// Edits the tree of `path`; with `flags.portable` the write is refused (ending the edit,
/// the text kept) when the file's blocks use a codec python asdf reads only with a plugin.
pub fn run(
    access: &crate::Access,
    path: &Path,
    flags: crate::WriteFlags,
) -> Result<String, Failure> {
    let name = path.display().to_string();
    // an interrupted in-place update of this file is finished (undone) first
    write::recover(path).map_err(|e| format!("{name}: {}", crate::chain(&e)))?;
    let file = access.open(path)?;
    if file.fits_hdus().is_some() {
        return Err(format!("{name}: ASDF in FITS is read only").into());
    }
    let standard = file.standard_version();
    let text = match file.layout().tree {
        Some((start, end)) => {
            let bytes = std::fs::read(path).map_err(|e| format!("{name}: {e}"))?;
            let tree = usize::try_from(start)
                .ok()
                .zip(usize::try_from(end).ok())
                .and_then(|(s, e)| bytes.get(s..e))
                .ok_or_else(|| format!("{name}: the tree's range is outside the file"))?;
            String::from_utf8_lossy(tree).into_owned()
        }
        None => yaml::emit(file.tree(), &yaml::EmitOptions::default())
            .map_err(|e| format!("{name}: {}", crate::chain(&e)))?,
    };
    drop(file);
    let keep_note = |scratch: &Path| format!("your text is kept in {}", scratch.display());
    let mut shown = text.clone();
    let scratch = create_scratch(path, &shown)?;
    let cmd = editor();
    let mut round = 0usize;
    loop {
        round += 1;
        let status = Command::new(&cmd[0])
            .args(&cmd[1..])
            .arg(&scratch)
            .status()
            .map_err(|e| format!("cannot run the editor {:?}: {e}; {name} untouched", cmd[0]))?;
        if !status.success() {
            return Err(format!(
                "the editor {:?} failed ({status}); {name} untouched, {}",
                cmd[0],
                keep_note(&scratch)
            )
            .into());
        }
        let edited = std::fs::read_to_string(&scratch)
            .map_err(|e| format!("{}: cannot read: {e}; {name} untouched", scratch.display()))?;
        if edited == shown {
            let _ = std::fs::remove_file(&scratch);
            let what = if round == 1 {
                "no changes"
            } else {
                "edit abandoned"
            };
            return Err(Failure::Problems {
                text: format!("{name}: {what}; file untouched"),
                to_stdout: false,
            });
        }
        let body = strip_notes(&edited);
        match check_and_write(path, body, &standard, flags.portable) {
            Err(Rejected::Final(msg)) => {
                return Err(format!("{msg}; {name} untouched, {}", keep_note(&scratch)).into());
            }
            Ok(kind) => {
                let _ = std::fs::remove_file(&scratch);
                return Ok(match kind {
                    UpdateKind::InPlace => format!("{name}: tree updated in place\n"),
                    _ => format!("{name}: file rewritten with the new tree\n"),
                });
            }
            Err(Rejected::Again(problem)) => {
                eprintln!("asdftool: {name}: {problem}");
                let mut again = String::new();
                for line in problem.lines() {
                    again.push_str(NOTE);
                    again.push_str(line);
                    again.push('\n');
                }
                again.push_str(NOTE);
                again.push_str(
                    "fix the tree and save, or quit without saving to abandon the edit\n",
                );
                again.push_str(body);
                shown = again;
                std::fs::write(&scratch, &shown)
                    .map_err(|e| format!("{}: cannot write: {e}", scratch.display()))?;
            }
        }
    }
}

/// Why an edited tree was not written.
enum Rejected {
    /// A problem of the edit: shown to the editor again.
    Again(String),
    /// A problem no edit of the tree can fix (`--portable` and the file's codecs): the end.
    Final(String),
}

/// Parses, validates and writes the edited tree; the error as text otherwise.
fn check_and_write(
    path: &Path,
    text: &str,
    standard: &StandardVersion,
    portable: bool,
) -> Result<UpdateKind, Rejected> {
    let doc = yaml::parse(text.as_bytes(), &YamlLimits::default()).map_err(|e| {
        Rejected::Again(format!(
            "the edited tree does not parse: {}",
            crate::chain(&e)
        ))
    })?;
    if doc.root.as_map().is_none() {
        return Err(Rejected::Again("the edited tree is not a mapping".into()));
    }
    if let Err(errors) = asdf_core::schema::validate_tree(&doc.root, standard.as_str()) {
        let lines = errors.lines();
        return Err(Rejected::Again(format!(
            "the edited tree is not valid ({} problem{}):\n{}",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" },
            lines.join("\n")
        )));
    }
    let (_p, feed) = crate::progress::Progress::fed(
        crate::progress::largest(&[path]),
        format!("writing {}", path.display()),
    );
    let mut opts = write::WriteOptions::default()
        .compression(CompressionChoice::Input)
        // a version this library cannot write (a later standard) is written as the default
        .standard(
            Some(standard.clone())
                .filter(StandardVersion::known)
                .unwrap_or_default(),
        )
        .portable(portable);
    if let Some(f) = feed {
        opts = opts.progress(f);
    }
    // without --portable the file's codecs are kept as they are, with one warning line per
    // codec python asdf reads only with a plugin, as the other writing commands print them
    let (kind, warnings) = write::update_reporting(path, &doc.root, opts, UpdateMode::InPlace)
        .map_err(|e| match e {
            write::WriteError::NotPortable { .. } => {
                Rejected::Final(crate::output::write_error(path, &e))
            }
            e => Rejected::Again(format!(
                "cannot write the edited tree: {}",
                crate::chain(&e)
            )),
        })?;
    crate::output::warn(path, &warnings);
    Ok(kind)
}

#[cfg(test)]
mod tests {
    #[test]
    fn notes_are_stripped() {
        let t = "# asdftool edit: bad\n# asdftool edit: fix\n%YAML 1.1\n--- {}\n";
        assert_eq!(super::strip_notes(t), "%YAML 1.1\n--- {}\n");
        assert_eq!(super::strip_notes("a: 1\n"), "a: 1\n");
    }
}
