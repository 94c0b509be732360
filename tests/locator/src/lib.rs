//! The one place that knows where the asdf-rs test data lives.
//!
//! Every Rust test, bench and tool of the repository finds its data through this crate, and the
//! python scripts through its twin `tests/testdata.py`, which follows the same rules:
//!
//! * The data root is `$ASDF_TEST_DATA` when that variable is set, else the repository's own
//!   `tests/data` folder.
//! * [`require`] and [`require_dir`] return the path of a file or folder under the root. When it
//!   is absent, the test fails with a message saying what is missing and how to get it, unless
//!   `ASDF_TEST_DATA_SKIP_MISSING=1` is set: then the caller gets `None`, the skip is printed,
//!   and the test returns. CI never sets that variable (`.ci/run` clears it).
//!
//! Everything under `tests/data` ships with the repository (see `tests/data/README.md` for the
//! origin of each folder), so the default needs no set-up step.
//!
//! ```no_run
//! let Some(dir) = asdf_test_data::require_dir(asdf_test_data::REFERENCE_FILES) else {
//!     return; // skipped, and said so
//! };
//! assert!(dir.join("1.6.0/basic.asdf").is_file());
//! ```

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

/// Environment variable naming another data root (a folder laid out like `tests/data`).
pub const ROOT_VAR: &str = "ASDF_TEST_DATA";

/// Environment variable that, when `1`, turns a missing-data failure into a printed skip.
pub const SKIP_VAR: &str = "ASDF_TEST_DATA_SKIP_MISSING";

/// The official ASDF reference files (asdf-standard), one folder per standard version.
pub const REFERENCE_FILES: &str = "reference-files";

/// Files written by python asdf 6.0.0 (`tests/data/generate.py`).
pub const FIXTURES: &str = "fixtures";

/// Hand-assembled layouts (`tests/data/make_layouts.py`).
pub const LAYOUTS: &str = "layouts";

/// The test files of libasdf, the C implementation (`tests/data/libasdf/README.md`).
pub const LIBASDF: &str = "libasdf";

/// Number of `.asdf` and `.yaml` files in [`REFERENCE_FILES`] (asdf-standard 1.4.0, versions
/// 1.0.0 to 1.6.0). Tests that walk the folder check they saw exactly this many.
pub const REFERENCE_FILE_COUNT: usize = 217;

/// Environment variable naming the folder where tests leave the files asdf-rs wrote, for the
/// python checks of `.ci/run` (`tests/oracle/check_written.py` and the format checkers).
pub const WRITE_OUT_VAR: &str = "ASDF_WRITE_OUT";

/// The folder of [`WRITE_OUT_VAR`], created, when the variable is set.
pub fn write_out_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os(WRITE_OUT_VAR)?);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {WRITE_OUT_VAR} {}: {e}", dir.display()));
    Some(dir)
}

/// With [`WRITE_OUT_VAR`] set, leaves the ASDF file `file` there as `NAME.asdf` with our own
/// canonical reading of it beside it as `NAME.rust.json` (`canonical` reads `file`: the
/// locator knows no ASDF), for `tests/oracle/check_written.py`, which has python asdf open the
/// file with validation and compares its reading with ours. Does nothing without the variable.
pub fn leave_for_oracle(name: &str, file: &Path, canonical: impl FnOnce(&Path) -> String) {
    let Some(dir) = write_out_dir() else {
        return;
    };
    // tests running at once may leave the same name: each file appears whole (rename)
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let put = |to: PathBuf, write: &dyn Fn(&Path) -> std::io::Result<()>| {
        let tmp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
        write(&tmp)
            .and_then(|()| std::fs::rename(&tmp, &to))
            .unwrap_or_else(|e| panic!("cannot leave {}: {e}", to.display()));
    };
    let json = canonical(file);
    put(dir.join(format!("{name}.asdf")), &|tmp| {
        std::fs::copy(file, tmp).map(|_| ())
    });
    put(dir.join(format!("{name}.rust.json")), &|tmp| {
        std::fs::write(tmp, &json)
    });
}

/// The data root: `$ASDF_TEST_DATA`, else `tests/data` of this repository.
pub fn root() -> PathBuf {
    match std::env::var_os(ROOT_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => repository_dir().join("tests").join("data"),
    }
}

/// The repository (workspace) folder.
pub fn repository_dir() -> PathBuf {
    // this crate lives in tests/locator
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..");
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

/// `root()/rel`, whether or not it exists.
pub fn path(rel: &str) -> PathBuf {
    root().join(rel)
}

/// The file `root()/rel`; see the crate docs for what happens when it is absent.
#[track_caller]
pub fn require(rel: &str) -> Option<PathBuf> {
    let p = path(rel);
    if p.is_file() {
        Some(p)
    } else {
        missing(rel, &p)
    }
}

/// The folder `root()/rel`; see the crate docs for what happens when it is absent.
#[track_caller]
pub fn require_dir(rel: &str) -> Option<PathBuf> {
    let p = path(rel);
    if p.is_dir() {
        Some(p)
    } else {
        missing(rel, &p)
    }
}

/// Whether missing data is to be skipped rather than failed.
pub fn skip_missing() -> bool {
    std::env::var(SKIP_VAR).is_ok_and(|v| v == "1")
}

#[track_caller]
fn missing(rel: &str, p: &Path) -> Option<PathBuf> {
    missing_with(skip_missing(), rel, p)
}

#[track_caller]
fn missing_with(skip: bool, rel: &str, p: &Path) -> Option<PathBuf> {
    let caller = std::panic::Location::caller();
    if skip {
        eprintln!(
            "SKIPPED (test data missing, {SKIP_VAR}=1): {caller} needs {}",
            p.display()
        );
        return None;
    }
    panic!("{}", missing_message(rel, p));
}

/// The message of a missing-data failure: what is missing and how to get it.
pub fn missing_message(rel: &str, p: &Path) -> String {
    let top = rel.split(['/', '\\']).next().unwrap_or(rel);
    let how = match top {
        REFERENCE_FILES => {
            "the reference files ship in tests/data/reference-files; restore them with \
             `git checkout -- tests/data/reference-files` or re-vendor them from the pinned \
             asdf-standard source distribution with `bash tests/data/reference-files/vendor.sh`"
        }
        FIXTURES => {
            "the fixtures ship in tests/data/fixtures; restore them with `git checkout -- \
             tests/data/fixtures` or regenerate them with `.venv-oracle/bin/python \
             tests/data/generate.py`"
        }
        LAYOUTS => {
            "the layouts ship in tests/data/layouts; restore them with `git checkout -- \
             tests/data/layouts` or regenerate them with `python3 tests/data/make_layouts.py`"
        }
        _ => "it ships with the repository under tests/data; restore it with `git checkout -- tests/data`",
    };
    let root_note = match std::env::var_os(ROOT_VAR) {
        Some(r) if !r.is_empty() => format!(" ({ROOT_VAR} is set to {})", Path::new(&r).display()),
        _ => String::new(),
    };
    format!(
        "test data missing: {}{root_note}\n{how}.\nTo skip the tests that need absent data, set \
         {SKIP_VAR}=1 (each skip is printed; CI never sets it).",
        p.display()
    )
}

/// Every file under `dir` (recursively), sorted, whose name ends with one of `suffixes`.
pub fn files_with_suffix(dir: &Path, suffixes: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d)
            .unwrap_or_else(|e| panic!("cannot list test data folder {}: {e}", d.display()));
        for entry in entries {
            let p = entry
                .unwrap_or_else(|e| panic!("cannot list test data folder {}: {e}", d.display()))
                .path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(name) = p.file_name().and_then(|n| n.to_str()) {
                if suffixes.iter().any(|s| name.ends_with(s)) {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

/// The `.asdf` and `.yaml` files of the reference suite, checked to be all
/// [`REFERENCE_FILE_COUNT`] of them; `None` only when skipped (see [`require_dir`]).
#[track_caller]
pub fn reference_files() -> Option<Vec<PathBuf>> {
    let dir = require_dir(REFERENCE_FILES)?;
    let files = files_with_suffix(&dir, &[".asdf", ".yaml"]);
    assert_eq!(
        files.len(),
        REFERENCE_FILE_COUNT,
        "{} holds {} reference files, expected {REFERENCE_FILE_COUNT}",
        dir.display(),
        files.len()
    );
    Some(files)
}

/// The sidecar of a corpus file: `NAME.expect.json` for `NAME.asdf`,
/// `NAME.yaml.expect.json` for `NAME.yaml`.
pub fn sidecar_of(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let side = if let Some(stem) = name.strip_suffix(".asdf") {
        format!("{stem}.expect.json")
    } else if name.ends_with(".yaml") {
        format!("{name}.expect.json")
    } else {
        return None;
    };
    Some(path.with_file_name(side))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_root_is_the_repository_data_folder() {
        if std::env::var_os(ROOT_VAR).is_some() {
            return; // pointed elsewhere on purpose
        }
        let root = root();
        assert!(root.ends_with("tests/data"), "{}", root.display());
        assert!(root.join("README.md").is_file(), "{}", root.display());
    }

    #[test]
    fn missing_message_says_how_to_get_the_data() {
        let m = missing_message(
            "reference-files/9.9.9",
            Path::new("x/reference-files/9.9.9"),
        );
        assert!(m.contains("x/reference-files/9.9.9"), "{m}");
        assert!(m.contains("vendor.sh"), "{m}");
        assert!(m.contains(SKIP_VAR), "{m}");
        let m = missing_message("fixtures/a.asdf", Path::new("a"));
        assert!(m.contains("generate.py"), "{m}");
    }

    #[test]
    #[should_panic(expected = "test data missing")]
    fn absent_data_fails_without_the_opt_out() {
        missing_with(
            false,
            "no-such-folder/x.asdf",
            Path::new("no-such-folder/x.asdf"),
        );
    }

    #[test]
    fn absent_data_is_skipped_with_the_opt_out() {
        assert_eq!(
            missing_with(true, "no-such/x.asdf", Path::new("no-such/x.asdf")),
            None
        );
    }

    #[test]
    fn sidecar_names() {
        assert_eq!(
            sidecar_of(Path::new("d/basic.asdf")),
            Some(PathBuf::from("d/basic.expect.json"))
        );
        assert_eq!(
            sidecar_of(Path::new("d/basic.yaml")),
            Some(PathBuf::from("d/basic.yaml.expect.json"))
        );
        assert_eq!(sidecar_of(Path::new("d/basic.json")), None);
    }

    #[test]
    fn the_reference_suite_is_whole() {
        let files = reference_files().expect("CI never skips");
        assert!(files.iter().any(|f| f.ends_with("1.6.0/basic.asdf")));
        assert!(files.iter().any(|f| f.ends_with("1.0.0/stream.yaml")));
    }
}
