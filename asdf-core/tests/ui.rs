//! Compile-fail tests of `#[derive(AsdfType)]`: each `ui/*.rs` must fail to build with exactly
//! the diagnostics in its `.stderr` (regenerate with `ASDF_UI=overwrite`, then read them).
//!
//! The cases are checked by `cargo check` on a scratch package (under `CARGO_TARGET_TMPDIR`)
//! that depends on this asdf-core with its default features, in this build's own target
//! folder and profiles, with no flags of its own. The third-party crates' check builds are
//! then the ones the lints and the publishing check already made (`.ci/run`), where trybuild,
//! with its own target folder and `--cfg trybuild` in every crate's flags, checked all of
//! asdf-core's dependencies again (131 to 174 s of a fresh CI run).
//!
//! What is compared: the `rendered` text of each error and warning rustc gives for a case
//! (cargo's JSON messages), without the "aborting due to" and "For more information" notes,
//! line ends trimmed, and a count of other implementations (`and 12 others`) shown as
//! `and $N others`, so that the files do not change with each new impl in the crate.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn derive_misuse_is_a_compile_error() {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases_dir = manifest_dir.join("tests/ui");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&cases_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 9, "the ui cases are missing: {cases:?}");

    let scratch = scratch_package(manifest_dir, &cases);
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is target/tmp")
        .to_path_buf();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&scratch)
        .args(["check", "--bins", "--keep-going"])
        .arg("--message-format=json")
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("running cargo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "every ui case must fail to compile, yet cargo check passed:\n{stderr}"
    );

    let rendered = diagnostics_by_case(&String::from_utf8_lossy(&out.stdout));
    let overwrite = std::env::var("ASDF_UI").is_ok_and(|v| v == "overwrite");
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_stem().unwrap().to_str().unwrap();
        let got = normalize(rendered.get(name).map(String::as_str).unwrap_or(""));
        let expected_path = case.with_extension("stderr");
        if got.is_empty() {
            failures.push(format!(
                "{name}: compiled without an error (cargo's stderr:\n{stderr})"
            ));
            continue;
        }
        if overwrite {
            std::fs::write(&expected_path, &got).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path)
            .map(|s| normalize(&s))
            .unwrap_or_default();
        if got != expected {
            failures.push(format!(
                "{name}: the diagnostics differ from {}\n--- expected\n{expected}\n--- got\n{got}",
                expected_path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Writes the scratch package: one binary per case (copied to `tests/ui/NAME.rs`, so the
/// paths in the diagnostics read as they do from this crate), asdf-core by path with its
/// default features, this workspace's lock file and profiles.
fn scratch_package(manifest_dir: &Path, cases: &[PathBuf]) -> PathBuf {
    let workspace = manifest_dir.parent().unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("asdf-core-ui");
    let ui = dir.join("tests/ui");
    let _ = std::fs::remove_dir_all(&ui);
    std::fs::create_dir_all(&ui).unwrap();
    let root_manifest = std::fs::read_to_string(workspace.join("Cargo.toml")).unwrap();
    let mut toml = format!(
        "# written by asdf-core/tests/ui.rs\n\
         [package]\nname = \"asdf-core-ui\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\nautobins = false\n\n\
         [dependencies]\nasdf-core = {{ package = \"asdfrs-core\", path = {:?} }}\n\n\
         [workspace]\n\n",
        manifest_dir.to_str().unwrap()
    );
    for case in cases {
        let name = case.file_stem().unwrap().to_str().unwrap();
        std::fs::copy(case, ui.join(format!("{name}.rs"))).unwrap();
        toml.push_str(&format!(
            "[[bin]]\nname = {name:?}\npath = \"tests/ui/{name}.rs\"\n\n"
        ));
    }
    toml.push_str(&profiles(&root_manifest));
    std::fs::write(dir.join("Cargo.toml"), toml).unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    dir
}

/// The `[profile.*]` tables of the workspace manifest, so that the scratch build shares the
/// workspace's artifacts (a package's profile is its workspace root's).
fn profiles(manifest: &str) -> String {
    let mut out = String::new();
    let mut keep = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            keep = line.starts_with("[profile.");
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Each binary's errors and warnings, as rustc rendered them, in the order given.
fn diagnostics_by_case(stdout: &str) -> BTreeMap<String, String> {
    let mut by_case: BTreeMap<String, String> = BTreeMap::new();
    for line in stdout.lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-message" {
            continue;
        }
        let kinds = &msg["target"]["kind"];
        if !kinds
            .as_array()
            .is_some_and(|k| k.iter().any(|k| k == "bin"))
        {
            continue;
        }
        let level = msg["message"]["level"].as_str().unwrap_or("");
        let text = msg["message"]["message"].as_str().unwrap_or("");
        if !matches!(level, "error" | "warning") || text.starts_with("aborting due to") {
            continue;
        }
        let name = msg["target"]["name"].as_str().unwrap_or("").to_string();
        let rendered = msg["message"]["rendered"].as_str().unwrap_or("");
        let entry = by_case.entry(name).or_default();
        if !entry.is_empty() {
            entry.push_str("\n\n");
        }
        entry.push_str(rendered.trim_end());
    }
    by_case
}

/// Trailing blanks and blank lines off, `and N others` as `and $N others`, "For more
/// information" notes dropped.
fn normalize(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("For more information about") {
            continue;
        }
        let line = line.trim_end();
        let line = match line.trim_start().strip_prefix("and ") {
            Some(rest)
                if rest.ends_with(" others")
                    && rest[..rest.len() - " others".len()]
                        .chars()
                        .all(|c| c.is_ascii_digit()) =>
            {
                let indent = line.len() - line.trim_start().len();
                format!("{}and $N others", &line[..indent])
            }
            _ => line.to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out.trim_start_matches('\n').to_string()
}
