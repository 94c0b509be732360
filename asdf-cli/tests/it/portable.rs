//! `--portable` on every asdftool command that writes ASDF: a codec python asdf 6.0.0 reads
//! only with a plugin (zstd, lz4f, blsc, bls2) or not at all (bsc2, xz) is refused with one
//! line, exit status 2 and no output file; without the flag the write succeeds and says so
//! once per codec on standard error.

use crate::common;
use crate::tool;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tool::{asdftool, stderr};

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("asdftool-portable-{name}"))
}

fn example() -> PathBuf {
    common::repo_root().join("examples/data/observation.asdf")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The lines of standard error that are warnings.
/// The example file rewritten with `zstd` blocks (no flag: a plugin-only codec, kept), in `dir`.
fn zstd_copy(dir: &Path) -> PathBuf {
    let zstd = dir.join("zstd.asdf");
    let o = asdftool(&[
        "defragment",
        s(&example()),
        "-o",
        s(&zstd),
        "-c",
        "zstd",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    zstd
}

fn warnings(o: &std::process::Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.starts_with("asdftool: warning: "))
        .map(str::to_string)
        .collect()
}

/// The compression label of each block of the file at `p` (`""` for none).
fn labels(p: &Path) -> Vec<String> {
    let a = asdf_core::AsdfFile::open(p).unwrap();
    a.blocks()
        .iter()
        .map(|h| {
            h.compression_label()
                .map(|l| {
                    String::from_utf8_lossy(&l)
                        .trim_end_matches('\0')
                        .to_string()
                })
                .unwrap_or_default()
        })
        .collect()
}

/// A refusal: exit status 2, one line on standard error naming the codec and `--portable`,
/// no output written.
fn assert_refused(o: &std::process::Output, codec: &str, out: &Path) {
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(o));
    let err = stderr(o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("reads {codec} blocks only with")) && err.contains("--portable"),
        "{err}"
    );
    assert!(!out.exists(), "{} was written", out.display());
}

#[test]
fn defragment_and_convert_refuse_or_warn_once() {
    let dir = scratch("defrag");
    for codec in ["zstd", "xz"] {
        // the example has five arrays: five blocks, one warning
        let out = dir.join(format!("{codec}.asdf"));
        let o = asdftool(&["defragment", s(&example()), "-o", s(&out), "-c", codec]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let w = warnings(&o);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("blocks 0, 1, 2, 3, 4")
                && w[0].contains(&format!("reads {codec} blocks only with")),
            "{w:?}"
        );
        assert_eq!(labels(&out), vec![codec; 5]);

        let refused = dir.join(format!("{codec}-portable.asdf"));
        let o = asdftool(&[
            "defragment",
            s(&example()),
            "-o",
            s(&refused),
            "-c",
            codec,
            "--portable",
        ]);
        assert_refused(&o, codec, &refused);
        let o = asdftool(&[
            "convert",
            s(&example()),
            s(&refused),
            "-c",
            codec,
            "--portable",
        ]);
        assert_refused(&o, codec, &refused);
    }
    // a codec python asdf reads: no warning, and --portable writes it
    let out = dir.join("zlib.asdf");
    let o = asdftool(&[
        "convert",
        s(&example()),
        s(&out),
        "-c",
        "zlib",
        "--portable",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(warnings(&o).is_empty(), "{}", stderr(&o));
    assert!(out.exists());
}

#[test]
fn explode_implode_to_yaml_and_extract_keep_the_input_codecs_under_the_flag() {
    let dir = scratch("keep");
    let zstd = zstd_copy(&dir);
    // explode keeps each block's codec: refused with the flag, one warning without
    let refused = dir.join("ex-portable.asdf");
    let o = asdftool(&["explode", s(&zstd), "-o", s(&refused), "--portable"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("external file"), "{}", stderr(&o));
    assert!(!refused.exists());
    let exploded = dir.join("ex.asdf");
    let o = asdftool(&["explode", s(&zstd), "-o", s(&exploded)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(warnings(&o).len(), 1, "{}", stderr(&o));
    // implode keeps each block's codec too (an external block's, as an internal one's:
    // it wrote them decoded before): refused with the flag, one warning without
    let imploded = dir.join("im.asdf");
    let o = asdftool(&["implode", s(&exploded), "-o", s(&imploded), "--portable"]);
    assert_refused(&o, "zstd", &imploded);
    let o = asdftool(&["implode", s(&exploded), "-o", s(&imploded)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(warnings(&o).len(), 1, "{}", stderr(&o));
    assert_eq!(labels(&imploded), vec!["zstd"; 5]);
    // every array inline: no block, nothing to refuse
    let yaml = dir.join("inline.asdf");
    let o = asdftool(&["to-yaml", s(&zstd), "-o", s(&yaml), "--portable"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(warnings(&o).is_empty(), "{}", stderr(&o));
    // extract, whole and by region, writes the array with its block's codec
    let one = dir.join("sci.asdf");
    let o = asdftool(&["extract", s(&zstd), "/sci", "-o", s(&one), "--portable"]);
    assert_refused(&o, "zstd", &one);
    let o = asdftool(&[
        "extract",
        s(&zstd),
        "/sci",
        "-o",
        s(&one),
        "--slice",
        "0:2",
        "--portable",
    ]);
    assert_refused(&o, "zstd", &one);
    let o = asdftool(&["extract", s(&zstd), "/sci", "-o", s(&one)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w = warnings(&o);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("block 0: python asdf 6.0.0 reads zstd"),
        "{w:?}"
    );
    // to .npy there is no ASDF block: the flag is a usage error
    let o = asdftool(&[
        "extract",
        s(&zstd),
        "/sci",
        "-o",
        s(&dir.join("sci.npy")),
        "--portable",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--portable applies only"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn blosc2_and_hdf5_conversions() {
    let dir = scratch("formats");
    // Blosc2 to ASDF writes bsc2 by default, which no python plugin reads
    let b2 = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../asdf-blosc2/tests/data/frames/zstd_shuffle.b2nd");
    let out = dir.join("b2.asdf");
    let o = asdftool(&["convert", s(&b2), s(&out), "--portable"]);
    assert_refused(&o, "bsc2", &out);
    let o = asdftool(&["convert", s(&b2), s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w = warnings(&o);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("reads bsc2 blocks only with a plugin"),
        "{w:?}"
    );
    let o = asdftool(&[
        "convert",
        s(&b2),
        s(&dir.join("z.asdf")),
        "-c",
        "zlib",
        "--portable",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // HDF5 to ASDF: every array takes -c
    if cfg!(feature = "hdf5") {
        let h5 =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../asdf-hdf5/tests/data/chunked.h5");
        let out = dir.join("h5.asdf");
        let o = asdftool(&["convert", s(&h5), s(&out), "-c", "xz", "--portable"]);
        assert_refused(&o, "xz", &out);
        // said of every array (they all take -c), not of one block
        assert!(
            stderr(&o).contains("every array's block (-c xz)"),
            "{}",
            stderr(&o)
        );
        let o = asdftool(&["convert", s(&h5), s(&out), "-c", "xz"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(warnings(&o).len(), 1, "{}", stderr(&o));
        let got = labels(&out);
        assert!(!got.is_empty() && got.iter().all(|l| l == "xz"), "{got:?}");
        let o = asdftool(&["convert", s(&h5), s(&dir.join("d.asdf")), "--portable"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(warnings(&o).is_empty(), "{}", stderr(&o));
    }
    // to another format the flag means nothing
    let o = asdftool(&[
        "convert",
        s(&example()),
        s(&dir.join("x.b2nd")),
        "--array",
        "/sci",
        "--portable",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--portable applies only"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn edit_with_the_flag_ends_at_once_on_a_file_of_zstd_blocks_and_warns_without_it() {
    let dir = scratch("edit");
    let zstd = zstd_copy(&dir);
    let before = std::fs::read(&zstd).unwrap();
    let editor = dir.join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nset -e\necho x >> \"$(dirname \"$0\")/count\"\nsed -i 's/F200W/F444W/' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_asdftool"))
            .arg("edit")
            .arg(&zstd)
            .args(extra)
            .env_remove("VISUAL")
            .env("EDITOR", &editor)
            .env("TMPDIR", &*dir)
            .output()
            .unwrap()
    };
    let o = run(&["--portable"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("reads zstd blocks only with"), "{err}");
    // the editor ran once: the refusal is not shown to it again
    let count = std::fs::read_to_string(dir.join("count")).unwrap();
    assert_eq!(count.lines().count(), 1);
    assert_eq!(std::fs::read(&zstd).unwrap(), before, "the file changed");
    // without the flag: written, with one warning line for the codec, as the other
    // writing commands say it (the example's five arrays, five zstd blocks kept)
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w = warnings(&o);
    assert_eq!(w.len(), 1, "{}", stderr(&o));
    assert!(
        w[0].contains(&format!("{}: blocks 0, 1, 2, 3, 4", zstd.display()))
            && w[0].contains("reads zstd blocks only with"),
        "{w:?}"
    );
    assert_eq!(labels(&zstd), vec!["zstd"; 5]);
    let a = asdf_core::AsdfFile::open(&zstd).unwrap();
    assert_eq!(
        a.get("/meta/instrument/filter").and_then(|n| n.as_str()),
        Some("F444W")
    );
}
