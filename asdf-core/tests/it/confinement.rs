//! Confinement of external files: an ndarray `source` or a `$ref` naming another file is
//! followed only where the open options' `ExternalPolicy` allows (by default the folder of the
//! file being read and its subfolders, after `..` and symbolic links are resolved).

use std::fs;
use std::path::{Path, PathBuf};

use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{AsdfFile, Error, ExternalPolicy, Node};

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("asdf-confine-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d.canonicalize().unwrap()
}

/// An ASDF file at `path` whose block 0 holds the int64 array `values` (tree path `/x`).
fn write_block_file(path: &Path, values: &[i64]) {
    let arr = ndarray::Array1::from(values.to_vec());
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_array(&arr);
    let root = Node::map([("x", node)]);
    w.write_to_path(&root, path).unwrap();
}

/// An ASDF file at `path` whose `/x` is an external int64 array of 3 elements at `source`
/// and whose `/r` is a `$ref` to `reference`.
fn write_referring_file(path: &Path, source: &str, reference: &str) {
    let text = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
         --- !core/asdf-1.1.0\n\
         x: !core/ndarray-1.0.0 {{source: {source:?}, datatype: int64, byteorder: little, shape: [3]}}\n\
         r: {{$ref: {reference:?}}}\n...\n"
    );
    fs::write(path, text).unwrap();
}

fn read_x(file: &AsdfFile) -> Result<Vec<i64>, Error> {
    Ok(file.array::<i64>("/x")?.iter().copied().collect())
}

fn resolve_r(file: &AsdfFile) -> Result<Node, Error> {
    let node = file.tree().pointer("/r").unwrap().clone();
    Ok(file.resolve_ref(&node, "/r")?.node)
}

/// Asserts `r` is an `ExternalRefused` error for the reference `reference`.
fn assert_refused<T: std::fmt::Debug>(r: Result<T, Error>, reference: &str) {
    match r {
        Err(Error::ExternalRefused {
            reference: got,
            reason,
            ..
        }) => {
            assert_eq!(got, reference);
            assert!(!reason.is_empty());
        }
        other => panic!("expected ExternalRefused for {reference:?}, got {other:?}"),
    }
}

#[test]
fn same_folder_and_subfolders_are_followed_by_default() {
    let d = scratch("inside");
    fs::create_dir(d.join("sub")).unwrap();
    write_block_file(&d.join("sub/data.asdf"), &[1, 2, 3]);
    write_block_file(&d.join("near.asdf"), &[7, 8, 9]);
    write_referring_file(&d.join("main.asdf"), "sub/data.asdf", "near.asdf#/x");
    let f = AsdfFile::open(d.join("main.asdf")).unwrap();
    assert_eq!(read_x(&f).unwrap(), [1, 2, 3]);
    assert!(resolve_r(&f).unwrap().is_ndarray());
    // `..` that stays inside the folder is fine.
    write_referring_file(
        &d.join("main2.asdf"),
        "sub/../near.asdf",
        "./sub/data.asdf#/x",
    );
    let f = AsdfFile::open(d.join("main2.asdf")).unwrap();
    assert_eq!(read_x(&f).unwrap(), [7, 8, 9]);
    assert!(resolve_r(&f).unwrap().is_ndarray());
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn parent_traversal_is_refused() {
    let d = scratch("parent");
    fs::create_dir(d.join("inner")).unwrap();
    write_block_file(&d.join("outside.asdf"), &[1, 2, 3]);
    write_referring_file(
        &d.join("inner/main.asdf"),
        "../outside.asdf",
        "../outside.asdf#/x",
    );
    let f = AsdfFile::open(d.join("inner/main.asdf")).unwrap();
    assert_refused(read_x(&f), "../outside.asdf");
    assert_refused(resolve_r(&f), "../outside.asdf#/x");
    // A missing file beyond the folder is refused too, not reported as missing.
    write_referring_file(
        &d.join("inner/gone.asdf"),
        "../../../nowhere.asdf",
        "sub/../../x.asdf",
    );
    let f = AsdfFile::open(d.join("inner/gone.asdf")).unwrap();
    assert_refused(read_x(&f), "../../../nowhere.asdf");
    assert_refused(resolve_r(&f), "sub/../../x.asdf");
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn absolute_paths_and_urls_are_refused() {
    let d = scratch("absolute");
    let target = d.join("target.asdf");
    write_block_file(&target, &[1, 2, 3]);
    let abs = target.display().to_string();
    // Absolute even though it names a file inside the folder: absolute paths need AnyPath.
    // and one outside the folder (never created: refused before any open)
    let outside = d
        .parent()
        .unwrap()
        .join("outside.asdf")
        .display()
        .to_string();
    write_referring_file(&d.join("abs.asdf"), &abs, &outside);
    let f = AsdfFile::open(d.join("abs.asdf")).unwrap();
    assert_refused(read_x(&f), &abs);
    assert_refused(resolve_r(&f), &outside);

    let file_uri = format!("file://{abs}");
    let outside_uri = format!("file://{outside}#/x");
    write_referring_file(&d.join("uri.asdf"), &file_uri, &outside_uri);
    let f = AsdfFile::open(d.join("uri.asdf")).unwrap();
    assert_refused(read_x(&f), &file_uri);
    assert_refused(resolve_r(&f), &outside_uri);

    for url in [
        "http://example.com/x.asdf",
        "https://example.com/x.asdf",
        "s3://bucket/x.asdf",
    ] {
        write_referring_file(&d.join("url.asdf"), url, &format!("{url}#/x"));
        for policy in [ExternalPolicy::SameFolder, ExternalPolicy::AnyPath] {
            let f = AsdfFile::options()
                .external_policy(policy)
                .open(d.join("url.asdf"))
                .unwrap();
            assert_refused(read_x(&f), url);
            assert_refused(resolve_r(&f), &format!("{url}#/x"));
        }
    }
    let _ = fs::remove_dir_all(&d);
}

#[cfg(unix)]
#[test]
fn symlinks_are_judged_by_where_they_lead() {
    use std::os::unix::fs::symlink;
    let outside = scratch("symlink-outside");
    write_block_file(&outside.join("secret.asdf"), &[4, 5, 6]);
    let d = scratch("symlink");
    write_block_file(&d.join("real.asdf"), &[1, 2, 3]);
    symlink(outside.join("secret.asdf"), d.join("out-link.asdf")).unwrap();
    symlink(&outside, d.join("out-dir")).unwrap();
    symlink(d.join("real.asdf"), d.join("in-link.asdf")).unwrap();

    write_referring_file(&d.join("a.asdf"), "out-link.asdf", "out-dir/secret.asdf#/x");
    let f = AsdfFile::open(d.join("a.asdf")).unwrap();
    assert_refused(read_x(&f), "out-link.asdf");
    assert_refused(resolve_r(&f), "out-dir/secret.asdf#/x");

    write_referring_file(&d.join("b.asdf"), "in-link.asdf", "in-link.asdf#/x");
    let f = AsdfFile::open(d.join("b.asdf")).unwrap();
    assert_eq!(read_x(&f).unwrap(), [1, 2, 3]);
    assert!(resolve_r(&f).unwrap().is_ndarray());

    // With the outside folder among the allowed roots, the links are followed.
    let f = AsdfFile::options()
        .external_policy(ExternalPolicy::Roots(vec![d.clone(), outside.clone()]))
        .open(d.join("a.asdf"))
        .unwrap();
    assert_eq!(read_x(&f).unwrap(), [4, 5, 6]);
    assert!(resolve_r(&f).unwrap().is_ndarray());
    let _ = fs::remove_dir_all(&d);
    let _ = fs::remove_dir_all(&outside);
}

#[test]
fn policies_none_roots_and_any_path() {
    let d = scratch("policies");
    fs::create_dir(d.join("inner")).unwrap();
    write_block_file(&d.join("inner/same.asdf"), &[1, 2, 3]);
    write_block_file(&d.join("up.asdf"), &[4, 5, 6]);
    write_referring_file(&d.join("inner/same-ref.asdf"), "same.asdf", "same.asdf#/x");
    write_referring_file(&d.join("inner/up-ref.asdf"), "../up.asdf", "../up.asdf#/x");

    // None: not even the same folder.
    let none = AsdfFile::options().external_policy(ExternalPolicy::None);
    let f = none.open(d.join("inner/same-ref.asdf")).unwrap();
    assert_refused(read_x(&f), "same.asdf");
    assert_refused(resolve_r(&f), "same.asdf#/x");

    // Roots: the parent folder admitted explicitly.
    let roots = AsdfFile::options().external_policy(ExternalPolicy::Roots(vec![d.clone()]));
    let f = roots.open(d.join("inner/up-ref.asdf")).unwrap();
    assert_eq!(read_x(&f).unwrap(), [4, 5, 6]);
    // Roots that do not hold the file's own folder refuse even its neighbours.
    let elsewhere = scratch("policies-elsewhere");
    let f = AsdfFile::options()
        .external_policy(ExternalPolicy::Roots(vec![elsewhere.clone()]))
        .open(d.join("inner/same-ref.asdf"))
        .unwrap();
    assert_refused(read_x(&f), "same.asdf");

    // AnyPath: parent traversal and absolute paths are followed.
    let any = AsdfFile::options().external_policy(ExternalPolicy::AnyPath);
    let f = any.open(d.join("inner/up-ref.asdf")).unwrap();
    assert_eq!(read_x(&f).unwrap(), [4, 5, 6]);
    assert!(resolve_r(&f).unwrap().is_ndarray());
    let abs = d.join("up.asdf").display().to_string();
    write_referring_file(&d.join("inner/abs-ref.asdf"), &abs, &format!("{abs}#/x"));
    let f = any.open(d.join("inner/abs-ref.asdf")).unwrap();
    assert_eq!(read_x(&f).unwrap(), [4, 5, 6]);
    let _ = fs::remove_dir_all(&d);
    let _ = fs::remove_dir_all(&elsewhere);
}

#[test]
fn a_chain_of_references_stays_in_the_first_files_folder() {
    // main.asdf -> sub/hop.asdf -> ../../outside.asdf: the hop's own folder is d/sub, the
    // target is outside d; refused although each step is "relative".
    let top = scratch("chain");
    let d = top.join("d");
    fs::create_dir_all(d.join("sub")).unwrap();
    write_block_file(&top.join("outside.asdf"), &[9, 9, 9]);
    write_referring_file(
        &d.join("sub/hop.asdf"),
        "../../outside.asdf",
        "../../outside.asdf#/x",
    );
    write_referring_file(&d.join("main.asdf"), "sub/hop.asdf", "sub/hop.asdf#/r");
    let f = AsdfFile::open(d.join("main.asdf")).unwrap();
    match resolve_r(&f) {
        Err(Error::ExternalRefused { reference, .. }) => {
            assert_eq!(reference, "../../outside.asdf#/x")
        }
        other => panic!("expected refusal in the second hop, got {other:?}"),
    }
    // Opened on its own, the hop is confined to its own folder d/sub: refused as well.
    let hop = AsdfFile::open(d.join("sub/hop.asdf")).unwrap();
    assert_refused(read_x(&hop), "../../outside.asdf");
    let _ = fs::remove_dir_all(&top);
}

#[test]
fn files_opened_from_memory_are_confined_to_their_base_dir() {
    let d = scratch("memory");
    fs::create_dir(d.join("base")).unwrap();
    write_block_file(&d.join("base/in.asdf"), &[1, 2, 3]);
    write_block_file(&d.join("out.asdf"), &[4, 5, 6]);
    write_referring_file(&d.join("m.asdf"), "in.asdf", "../out.asdf#/x");
    let bytes = fs::read(d.join("m.asdf")).unwrap();
    let f = AsdfFile::options()
        .open_bytes(bytes, d.join("base"))
        .unwrap();
    assert_eq!(read_x(&f).unwrap(), [1, 2, 3]);
    assert_refused(resolve_r(&f), "../out.asdf#/x");
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn the_refusal_message_names_tree_path_reference_and_reason() {
    let d = scratch("message");
    let outside = d
        .parent()
        .unwrap()
        .join("outside.asdf")
        .display()
        .to_string();
    write_referring_file(&d.join("m.asdf"), &outside, "x.asdf");
    let f = AsdfFile::open(d.join("m.asdf")).unwrap();
    let msg = read_x(&f).unwrap_err().to_string();
    assert!(
        msg.starts_with(&format!("/x: refused to open {outside:?}: ")),
        "{msg}"
    );
    assert!(msg.contains("absolute"), "{msg}");
    let _ = fs::remove_dir_all(&d);
}
