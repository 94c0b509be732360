//! `asdftool edit` with `$EDITOR` set to small shell scripts: a good edit is written back
//! (arrays kept), a bad one reopens with its error, quitting leaves the file untouched.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("asdftool-edit-{name}"))
}

/// A copy of the shipped example in `dir`.
fn example_in(dir: &Path) -> PathBuf {
    let f = dir.join("obs.asdf");
    std::fs::copy(
        common::repo_root().join("examples/data/observation.asdf"),
        &f,
    )
    .unwrap();
    f
}

/// An executable shell script `body` (its first argument is the file to edit); a counter
/// file beside it tells each call its number (`$n`, from 1).
fn editor(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("editor.sh");
    let script = format!(
        "#!/bin/sh\nset -e\nc=\"$(dirname \"$0\")/count\"\nn=$(( $(cat \"$c\" 2>/dev/null || echo 0) + 1 ))\necho $n > \"$c\"\n{body}\n"
    );
    std::fs::write(&p, script).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// Runs `asdftool edit` with `editor`; its temporary file (kept when an edit fails, for the
/// user) goes to the folder of `file`, the test's scratch folder, not the system's.
fn edit(file: &Path, editor: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .args(["edit", file.to_str().unwrap()])
        .env_remove("VISUAL")
        .env("EDITOR", editor)
        .env("TMPDIR", file.parent().unwrap())
        .output()
        .expect("run asdftool")
}

fn calls(dir: &Path) -> u32 {
    std::fs::read_to_string(dir.join("count"))
        .map(|s| s.trim().parse().unwrap())
        .unwrap_or(0)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn filter_of(f: &Path) -> String {
    let a = asdf_core::AsdfFile::open(f).unwrap();
    a.get("/meta/instrument/filter")
        .and_then(|n| n.as_str())
        .unwrap()
        .to_string()
}

#[test]
fn a_good_edit_is_written_back_with_the_arrays_kept() {
    let dir = scratch("good");
    let f = example_in(&dir);
    let before = asdf_core::AsdfFile::open(&f).unwrap();
    let arrays: Vec<_> = ["/sci", "/err", "/dq", "/sources", "/wavelengths_um"]
        .iter()
        .map(|p| before.dyn_array(p).unwrap())
        .collect();
    drop(before);
    let ed = editor(&dir, "sed -i 's/F200W/F150W/' \"$1\"");
    let out = edit(&f, &ed);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // python wrote the file with no room after its tree; ours is written anew
    assert!(
        text(&out.stdout).contains("obs.asdf: file rewritten"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(calls(&dir), 1);
    assert_eq!(filter_of(&f), "F150W");
    // an edit that fits is written in place
    let len = std::fs::metadata(&f).unwrap().len();
    let ed = editor(&dir, "sed -i 's/F150W/F140W/' \"$1\"");
    let out = edit(&f, &ed);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("obs.asdf: tree updated in place"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(std::fs::metadata(&f).unwrap().len(), len);
    assert_eq!(filter_of(&f), "F140W");
    let after = asdf_core::AsdfFile::open(&f).unwrap();
    after.verify_checksums().unwrap();
    for (p, a) in ["/sci", "/err", "/dq", "/sources", "/wavelengths_um"]
        .iter()
        .zip(&arrays)
    {
        assert_eq!(&after.dyn_array(p).unwrap(), a, "{p}");
    }
    // a tree too long for its place rewrites the whole file
    let long = "x".repeat(20_000);
    let ed = editor(&dir, &format!("sed -i 's/F140W/{long}/' \"$1\""));
    let out = edit(&f, &ed);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("file rewritten"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(filter_of(&f), long);
    let after = asdf_core::AsdfFile::open(&f).unwrap();
    assert_eq!(after.dyn_array("/sci").unwrap(), arrays[0]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn no_change_or_a_failing_editor_leaves_the_file_untouched() {
    let dir = scratch("none");
    let f = example_in(&dir);
    let bytes = std::fs::read(&f).unwrap();
    let out = edit(&f, &editor(&dir, "true"));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no changes; file untouched"),
        "{}",
        text(&out.stderr)
    );
    let out = edit(&f, &editor(&dir, "sed -i 's/F200W/XXX/' \"$1\"\nexit 3"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("untouched"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(&f).unwrap(), bytes);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_bad_edit_reopens_with_its_error_then_a_good_one_is_written() {
    let dir = scratch("retry");
    let f = example_in(&dir);
    // 1: broken YAML; 2: must see the error note, then makes a schema-invalid edit;
    // 3: must see the validation error, restores the text and makes a good edit
    let ed = editor(
        &dir,
        r#"case $n in
1) cp "$1" "$(dirname "$0")/orig.yaml"; printf 'meta: [unclosed\n' >> "$1" ;;
2) grep -q '^# asdftool edit: the edited tree does not parse' "$1"
   sed 's/byteorder: little/byteorder: middle/' "$(dirname "$0")/orig.yaml" > "$1" ;;
3) grep -q '^# asdftool edit: the edited tree is not valid' "$1"
   grep -q 'middle' "$1"
   sed 's/F200W/F090W/' "$(dirname "$0")/orig.yaml" > "$1" ;;
*) exit 9 ;;
esac"#,
    );
    let out = edit(&f, &ed);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(calls(&dir), 3, "{err}");
    assert!(err.contains("does not parse"), "{err}");
    assert!(err.contains("is not valid"), "{err}");
    assert_eq!(filter_of(&f), "F090W");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn quitting_after_a_bad_edit_abandons_it() {
    let dir = scratch("quit");
    let f = example_in(&dir);
    let bytes = std::fs::read(&f).unwrap();
    let ed = editor(
        &dir,
        r#"if [ $n = 1 ]; then printf 'meta: [unclosed\n' >> "$1"; fi"#,
    );
    let out = edit(&f, &ed);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(calls(&dir), 2);
    assert!(text(&out.stderr).contains("edit abandoned; file untouched"));
    assert_eq!(std::fs::read(&f).unwrap(), bytes);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn visual_comes_before_editor() {
    let dir = scratch("visual");
    let f = example_in(&dir);
    let visual = editor(&dir, "sed -i 's/F200W/F444W/' \"$1\"");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .args(["edit", f.to_str().unwrap()])
        .env("VISUAL", &visual)
        .env("TMPDIR", &*dir)
        .env("EDITOR", "false")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(filter_of(&f), "F444W");
    let _ = std::fs::remove_dir_all(dir);
}
