//! Shell completions, manual pages, the exit statuses in `--help`, and `--quiet`.

use crate::common;
use crate::tool;

use tool::{asdftool, ok};

/// Every command, as `--help` lists them.
const COMMANDS: &[&str] = &[
    "info",
    "canonical",
    "defragment",
    "explode",
    "implode",
    "to-yaml",
    "convert",
    "validate",
    "check-schemas",
    "codegen",
    "diff",
    "search",
    "extract",
    "manifest",
    "references",
    "preview",
    "edit",
    "tags",
    "completions",
    "man",
    "schema",
    "view",
];

#[test]
fn completions_for_each_shell_know_every_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let text = ok(&asdftool(&["completions", shell]));
        for cmd in COMMANDS {
            assert!(text.contains(cmd), "{shell}: no {cmd}");
        }
        assert!(text.contains("ignore"), "{shell}: no diff --ignore");
    }
    let bad = asdftool(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn man_pages_come_from_the_definitions() {
    let page = ok(&asdftool(&["man"]));
    assert!(page.contains(".TH asdftool 1"), "{page}");
    assert!(page.contains("Exit status:"));
    for cmd in COMMANDS {
        // the page lists each command as `asdftool-CMD(1)`, hyphens escaped
        let listed = format!("asdftool\\-{}(1)", cmd.replace('-', "\\-"));
        assert!(page.contains(&listed), "{cmd}");
    }
    let dir = std::env::temp_dir().join(format!("asdftool-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = ok(&asdftool(&["man", "--dir", dir.to_str().unwrap()]));
    assert_eq!(out.lines().count(), COMMANDS.len() + 1, "{out}");
    for cmd in COMMANDS {
        let p = std::fs::read_to_string(dir.join(format!("asdftool-{cmd}.1"))).unwrap();
        let title = format!(
            ".TH asdftool-{cmd} 1  \"asdftool-{cmd} {}\"",
            env!("CARGO_PKG_VERSION")
        );
        assert!(p.contains(&title), "{cmd}: {p}");
    }
    let diff = std::fs::read_to_string(dir.join("asdftool-diff.1")).unwrap();
    assert!(diff.contains("\\-\\-rtol"), "{diff}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_documents_the_exit_statuses_and_usage_errors_exit_2() {
    let help = ok(&asdftool(&["--help"]));
    assert!(help.contains("Exit status:"), "{help}");
    for line in [
        "  0  success",
        "  1  problems found",
        "  2  usage error, I/O error",
    ] {
        assert!(help.contains(line), "{line}: {help}");
    }
    for cmd in COMMANDS {
        assert!(help.contains(&format!("  {cmd} ")), "{cmd} not in --help");
    }
    assert_eq!(asdftool(&["no-such-command"]).status.code(), Some(2));
    assert_eq!(asdftool(&["info"]).status.code(), Some(2));
    assert_eq!(
        asdftool(&["diff", "a", "b", "--rtol", "x"]).status.code(),
        Some(2)
    );
}

#[test]
fn quiet_silences_the_wrote_messages_only() {
    let src = common::repo_root().join("examples/data/observation.asdf");
    let dir = std::env::temp_dir().join(format!("asdftool-quiet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("o.asdf");
    let (s, o) = (src.to_str().unwrap(), out.to_str().unwrap());
    let loud = ok(&asdftool(&["defragment", s, "-o", o]));
    assert!(loud.starts_with("wrote "), "{loud}");
    let quiet = asdftool(&["defragment", s, "-o", o, "--quiet"]);
    assert_eq!(ok(&quiet), "");
    assert!(quiet.stderr.is_empty());
    let quiet = asdftool(&[
        "-q",
        "extract",
        s,
        "/sci",
        "-o",
        dir.join("s.npy").to_str().unwrap(),
    ]);
    assert_eq!(ok(&quiet), "");
    // data output stays: info, and diff's lines
    assert!(ok(&asdftool(&["-q", "info", s])).contains("sci"));
    // below 256 MiB, or without a terminal, no progress is drawn on stderr
    let can = asdftool(&["canonical", s]);
    ok(&can);
    assert!(can.stderr.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn problems_exit_1_and_unreadable_files_exit_2() {
    let dir = std::env::temp_dir().join(format!("asdftool-status-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let invalid = dir.join("invalid.asdf");
    std::fs::write(
        &invalid,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
         --- !core/asdf-1.1.0\ndata: !core/ndarray-1.1.0 {data: [1, 2], byteorder: middle}\n...\n",
    )
    .unwrap();
    let garbage = dir.join("garbage.asdf");
    std::fs::write(&garbage, "#ASDF 1.0.0\n%YAML 1.1\n--- {a: [1\n").unwrap();
    let missing = dir.join("missing.asdf");
    let (i, g, m) = (
        invalid.to_str().unwrap(),
        garbage.to_str().unwrap(),
        missing.to_str().unwrap(),
    );
    assert_eq!(asdftool(&["validate", i]).status.code(), Some(1));
    for args in [
        vec!["validate", g],
        vec!["validate", m],
        vec!["info", g],
        vec!["info", "--json", m],
        vec!["canonical", g],
        vec!["tags", m],
        vec!["search", g, "x"],
        vec!["extract", m, "/x", "-o", "x.npy"],
        vec!["edit", m],
        vec!["defragment", g, "-o", "out.asdf"],
    ] {
        let out = asdftool(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("asdftool: ") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
