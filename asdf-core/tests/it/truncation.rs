//! No silent truncation: every small fixture, cut at every byte offset, either fails with an
//! error or reads back exactly the content of the whole file (the cut removed only padding or
//! the optional block index).
//!
//! Two cuts cannot be told from a whole file, and are checked for what they do read:
//! - a cut at or before the start of the tree leaves header and comment lines only, which is a
//!   valid tree-less file (python asdf reads it as an empty tree); it must read as one, with no
//!   blocks, never as part of the tree;
//! - streamed blocks run to the end of the file by definition, so their files are left out.
//!
//! Files without an `#ASDF` header are plain YAML documents, whose `...` marker is optional;
//! they are left out too.

use std::path::{Path, PathBuf};

use asdf_core::{unstable::canonical, AsdfFile, Error, OpenOptions};

/// Fixtures at most this large are cut at every offset.
const MAX_LEN: u64 = 2048;

/// The files checked: small fixtures and layouts with a header and no streamed block.
fn files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in [asdf_test_data::FIXTURES, asdf_test_data::LAYOUTS] {
        let Some(dir) = asdf_test_data::require_dir(dir) else {
            continue;
        };
        for f in asdf_test_data::files_with_suffix(&dir, &[".asdf"]) {
            if std::fs::metadata(&f).unwrap().len() > MAX_LEN {
                continue;
            }
            let bytes = std::fs::read(&f).unwrap();
            if !bytes.starts_with(b"#ASDF ") {
                continue;
            }
            let file = open(&bytes, f.parent().unwrap());
            if let Ok(file) = file {
                if file.blocks().iter().any(|b| b.is_streamed()) {
                    continue;
                }
            }
            out.push(f);
        }
    }
    out
}

fn open(bytes: &[u8], dir: &Path) -> Result<AsdfFile, Error> {
    OpenOptions::new()
        .verify_checksums(true)
        .open_bytes(bytes.to_vec(), dir)
}

/// Open, then read everything (every block, array, mask, reference) into the canonical form.
fn read_all(bytes: &[u8], dir: &Path) -> Result<(String, AsdfFile), Error> {
    let f = open(bytes, dir)?;
    Ok((canonical::to_json(&f)?, f))
}

#[test]
fn every_cut_fails_or_reads_the_same_content() {
    let files = files();
    // The fixtures and layouts of at most 2 KiB with a header and no streamed block; a
    // changed count means the corpus changed: look at what this test now covers.
    assert_eq!(files.len(), 70, "files cut");
    let mut failures = Vec::new();
    let (mut cuts, mut errors, mut same, mut treeless) = (0usize, 0usize, 0usize, 0usize);
    let mut damaged = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let dir = path.parent().unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        let (whole, file) = match read_all(&bytes, dir) {
            Ok(x) => x,
            Err(_) => {
                // Damaged on purpose (wrong checksums): every cut of it must fail as well.
                damaged.push(name.to_string());
                for k in 0..bytes.len() {
                    cuts += 1;
                    match read_all(&bytes[..k], dir) {
                        Err(_) => errors += 1,
                        Ok((json, f)) if k as u64 <= tree_start(&file_layout(&bytes, dir)) => {
                            check_treeless(&json, &f, &name, k, &mut failures);
                            treeless += 1;
                        }
                        Ok(_) => failures.push(format!("{name} cut at {k}: a damaged file read")),
                    }
                }
                continue;
            }
        };
        let start = file
            .layout()
            .tree
            .map_or(bytes.len() as u64, |(start, _)| start);
        for k in 0..bytes.len() {
            cuts += 1;
            match read_all(&bytes[..k], dir) {
                Err(_) => errors += 1,
                Ok((json, _)) if json == whole => same += 1,
                Ok((json, f)) if k as u64 <= start => {
                    check_treeless(&json, &f, &name, k, &mut failures);
                    treeless += 1;
                }
                Ok((json, _)) => failures.push(format!(
                    "{name} ({} bytes) cut at {k}: read different content:\n{}",
                    bytes.len(),
                    first_difference(&whole, &json)
                )),
            }
        }
    }
    println!(
        "{} files, {cuts} cuts: {errors} errors, {same} same content, {treeless} tree-less; \
         damaged on purpose: {damaged:?}",
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} silent truncations:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The two damaged layouts (wrong checksums) are known.
    assert_eq!(damaged, ["checksum_wrong.asdf", "checksum_wrong_zlib.asdf"]);
    // Most cuts must be errors: the check above would pass vacuously if reading failed always,
    // so the whole files above were read; and some cuts (padding, index) keep the content.
    assert!(errors > cuts / 2, "{errors} errors of {cuts} cuts");
    assert!(same > 0 && treeless > 0);
}

/// The layout of a file that may not read in full.
fn file_layout(bytes: &[u8], dir: &Path) -> Option<asdf_core::file::Layout> {
    open(bytes, dir).ok().map(|f| f.layout().clone())
}

fn tree_start(layout: &Option<asdf_core::file::Layout>) -> u64 {
    layout
        .as_ref()
        .and_then(|l| l.tree)
        .map_or(0, |(start, _)| start)
}

/// A cut before the tree must read as a tree-less file: no blocks, and the empty root python
/// asdf makes up (a null one for a cut inside the `#ASDF` line).
fn check_treeless(json: &str, f: &AsdfFile, name: &str, k: usize, failures: &mut Vec<String>) {
    let empty_root = f.tree().is_null() || f.tree().as_map().is_some_and(|m| m.is_empty());
    if !f.blocks().is_empty() || f.layout().tree.is_some() || !empty_root {
        failures.push(format!(
            "{name} cut at {k} (before the tree) read as more than a tree-less file:\n{json}"
        ));
    }
}

fn first_difference(a: &str, b: &str) -> String {
    let line = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or_else(|| a.lines().count().min(b.lines().count()));
    format!(
        "  whole: {}\n  cut:   {}",
        a.lines().nth(line).unwrap_or("<end>"),
        b.lines().nth(line).unwrap_or("<end>")
    )
}

#[test]
fn a_cut_external_file_fails_the_array_that_reads_it() {
    // external.asdf keeps `a` in external0000.asdf and `b` in external0001.asdf.
    let Some(main) = asdf_test_data::require("fixtures/external.asdf") else {
        return;
    };
    let fixtures = main.parent().unwrap();
    let bytes = std::fs::read(&main).unwrap();
    let (whole, _) = read_all(&bytes, fixtures).unwrap();
    let ext = std::fs::read(fixtures.join("external0000.asdf")).unwrap();
    let dir = std::env::temp_dir().join(format!("asdf-truncation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        fixtures.join("external0001.asdf"),
        dir.join("external0001.asdf"),
    )
    .unwrap();
    let (mut errors, mut same) = (0, 0);
    let mut failures = Vec::new();
    for k in 0..ext.len() {
        std::fs::write(dir.join("external0000.asdf"), &ext[..k]).unwrap();
        match read_all(&bytes, &dir) {
            Err(_) => errors += 1,
            Ok((json, _)) if json == whole => same += 1,
            Ok(_) => failures.push(k),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "cuts of external0000.asdf read differently: {failures:?}"
    );
    // Only a cut inside the trailing padding or block index may keep the content.
    assert!(errors > ext.len() * 3 / 4, "{errors} errors, {same} same");
}
