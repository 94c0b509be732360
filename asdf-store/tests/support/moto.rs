//! `moto_server` (python `moto[server]`, pinned in tests/oracle-requirements.txt and installed
//! by `.ci/run` into `.venv-oracle`) on a free loopback port, stopped when dropped; a server
//! that cannot start fails the test. `ASDF_MOTO_SERVER` names another `moto_server` program.
//! It speaks the S3 path-style API and checks no signature: the `s3://` tests reach it as S3,
//! the `gs://` tests through the XML API of Google Cloud Storage (see gcs.rs).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `moto_server`; killed when dropped.
pub struct Moto {
    child: Child,
    pub port: u16,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn moto_program() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("ASDF_MOTO_SERVER") {
        return p.into();
    }
    // The oracle venv at the workspace root (this crate's parent folder).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf();
    root.join(".venv-oracle").join("bin").join("moto_server")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Starts `moto_server` and waits (at most 60 s) until it listens; panics if it cannot.
pub fn start_moto() -> Moto {
    let program = moto_program();
    let port = free_port();
    let child = Command::new(&program)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start {} ({e}); `bash .ci/run` installs it into .venv-oracle \
                 (tests/oracle-requirements.txt), or set ASDF_MOTO_SERVER",
                program.display()
            )
        });
    let moto = Moto { child, port };
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "moto_server did not listen within 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    moto
}

/// A raw unsigned request without a body (moto does not check signatures): the status code.
pub fn raw(port: u16, method: &str, path: &str) -> u16 {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// A raw unsigned GET (moto does not check signatures): the whole answer, headers and body.
pub fn raw_body(port: u16, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}
