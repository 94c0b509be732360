//! asdftool reads URLs (the `remote` feature, on by default): every command that reads a
//! file prints for an `http://` URL what it prints for the same file on disk (the name
//! aside), external array sources are fetched from beside the URL, and `gs://` reaches a
//! Google Cloud Storage endpoint given by the environment (`moto_server` speaking the XML
//! API, as in asdf-store's tests).
//!
//! The servers are asdf-store's test helpers: a loopback HTTP server with range requests
//! (`asdf-store/tests/support/mod.rs`) and `moto_server` from the oracle venv
//! (`support/moto.rs`; `bash .ci/run` installs it, `ASDF_MOTO_SERVER` names another).

use crate::common;
use crate::tool;

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use common::Scratch;
use tool::{asdftool, ok, stdout};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/fixtures")
        .join(name)
}

/// A server holding the fixtures `names`.
fn serve(names: &[&str]) -> support::Server {
    let server = support::Server::start();
    for name in names {
        let bytes = std::fs::read(fixture(name)).unwrap();
        server.put(name, Arc::new(bytes));
    }
    server
}

/// The same command on the local fixture and on its URL: both succeed (exit status 0), with
/// the same output once each one's name for the file is replaced by `FILE`.
fn same_output(url: &str, name: &str, args: &[&str]) -> String {
    let local = fixture(name);
    let local = local.to_str().unwrap();
    let run = |file: &str| {
        let argv: Vec<&str> = args
            .iter()
            .map(|a| if *a == "FILE" { file } else { a })
            .collect();
        let o = asdftool(&argv);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{argv:?}: exit status; stderr: {}",
            tool::stderr(&o)
        );
        stdout(&o).replace(file, "FILE")
    };
    let local_out = run(local);
    let url_out = run(url);
    assert_eq!(url_out, local_out, "{args:?}: output, URL against file");
    assert!(!url_out.is_empty(), "{args:?}: no output");
    url_out
}

#[test]
fn reading_commands_print_the_same_for_a_url_as_for_the_file() {
    let server = serve(&["codec_mixed.asdf"]);
    let url = server.url("codec_mixed.asdf");
    let info = same_output(&url, "codec_mixed.asdf", &["info", "FILE"]);
    assert!(info.contains("compression zstd"), "{info}");
    same_output(
        &url,
        "codec_mixed.asdf",
        &["info", "--json", "--blocks", "FILE"],
    );
    let valid = same_output(&url, "codec_mixed.asdf", &["validate", "FILE"]);
    assert_eq!(
        valid,
        "FILE: valid (ASDF Standard 1.6.0, 7 block checksums verified)\n"
    );
    // canonical decodes every array (seven codecs) and hashes it
    let canonical = same_output(&url, "codec_mixed.asdf", &["canonical", "FILE"]);
    assert!(canonical.contains("sha256"), "{canonical}");
    same_output(&url, "codec_mixed.asdf", &["tags", "FILE"]);
    let found = same_output(
        &url,
        "codec_mixed.asdf",
        &["search", "FILE", "--type", "ndarray"],
    );
    assert_eq!(found.lines().count(), 7, "{found}");
    same_output(
        &url,
        "codec_mixed.asdf",
        &["search", "FILE", "--value", "asdf"],
    );
    // a URL against the same file on disk: no differences
    let local = fixture("codec_mixed.asdf");
    ok(&asdftool(&["diff", &url, local.to_str().unwrap()]));
}

#[test]
fn extract_and_convert_read_their_input_from_a_url() {
    let server = serve(&["codec_mixed.asdf"]);
    let url = server.url("codec_mixed.asdf");
    let local = fixture("codec_mixed.asdf");
    let dir = Scratch::new("cli-remote-extract");
    for (input, tag) in [(url.as_str(), "url"), (local.to_str().unwrap(), "file")] {
        ok(&asdftool(&[
            "extract",
            input,
            "/zstd",
            "-o",
            dir.join(format!("{tag}.npy")).to_str().unwrap(),
        ]));
        ok(&asdftool(&[
            "extract",
            input,
            "/lz4",
            "-o",
            dir.join(format!("{tag}.asdf")).to_str().unwrap(),
        ]));
        ok(&asdftool(&[
            "convert",
            input,
            dir.join(format!("{tag}-conv.asdf")).to_str().unwrap(),
            "-c",
            "zlib",
        ]));
    }
    let read = |n: &str| std::fs::read(dir.join(n)).unwrap();
    assert_eq!(
        read("url.npy"),
        read("file.npy"),
        ".npy from URL and from file"
    );
    // the files written carry no trace of where their input came from
    for (a, b) in [
        ("url.asdf", "file.asdf"),
        ("url-conv.asdf", "file-conv.asdf"),
    ] {
        let canon = |n: &str| ok(&asdftool(&["canonical", dir.join(n).to_str().unwrap()]));
        assert_eq!(canon(a), canon(b), "{a} against {b}");
    }
}

#[test]
fn external_sources_are_fetched_beside_the_url_and_not_elsewhere() {
    let server = serve(&["external.asdf", "external0000.asdf", "external0001.asdf"]);
    let url = server.url("external.asdf");
    let canonical = same_output(&url, "external.asdf", &["canonical", "FILE"]);
    assert!(canonical.contains("sha256"), "{canonical}");
    // --external none: the array sources beside the URL are not read (the refusal, not
    // another failure: exit status 2 naming the source refused)
    let o = asdftool(&["--external", "none", "canonical", &url]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = tool::stderr(&o);
    assert!(
        err.contains("refused to open \"external0000.asdf\"")
            && err.contains("ExternalPolicy::None"),
        "{err}"
    );
}

/// Uploads `bytes` to moto at `/bucket/key` (moto checks no signature).
fn moto_put(port: u16, path: &str, bytes: &[u8]) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "PUT {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nauthorization: Bearer test\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        bytes.len()
    )
    .unwrap();
    s.write_all(bytes).unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "PUT {path}: {answer}");
}

fn asdftool_env(args: &[&str], env: &[(&str, String)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_asdftool"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run asdftool")
}

#[test]
fn gs_urls_reach_the_endpoint_the_environment_names() {
    let moto = support::moto::start_moto();
    assert_eq!(support::moto::raw(moto.port, "PUT", "/bkt"), 200, "bucket");
    let bytes = std::fs::read(fixture("codec_mixed.asdf")).unwrap();
    moto_put(moto.port, "/bkt/dir/codec_mixed.asdf", &bytes);
    let env = [
        ("GOOGLE_BASE_URL", format!("http://127.0.0.1:{}", moto.port)),
        ("GOOGLE_BEARER_TOKEN", "test".to_string()),
    ];
    let url = "gs://bkt/dir/codec_mixed.asdf";
    let local = fixture("codec_mixed.asdf");
    let local = local.to_str().unwrap();
    for args in [["info", "FILE"], ["canonical", "FILE"]] {
        let with = |file: &str| -> Vec<String> {
            args.iter()
                .map(|a| if *a == "FILE" { file } else { a }.to_string())
                .collect()
        };
        let remote_args = with(url);
        let remote_args: Vec<&str> = remote_args.iter().map(String::as_str).collect();
        let remote = ok(&asdftool_env(&remote_args, &env)).replace(url, "FILE");
        let local_args = with(local);
        let local_args: Vec<&str> = local_args.iter().map(String::as_str).collect();
        let on_disk = ok(&asdftool(&local_args)).replace(local, "FILE");
        assert_eq!(remote, on_disk, "{args:?}");
    }
    // a missing object is an error naming the URL, exit status 2
    let o = asdftool_env(&["info", "gs://bkt/dir/missing.asdf"], &env);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        tool::stderr(&o).contains("gs://bkt/dir/missing.asdf"),
        "{}",
        tool::stderr(&o)
    );
}
