//! `moto_server` (python `moto[server]`, pinned in tests/oracle-requirements.txt and installed
//! by `.ci/run` into `.venv-oracle`) on a free loopback port, stopped when dropped; a server
//! that cannot start fails the test. `ASDF_MOTO_SERVER` names another `moto_server` program.
//! It speaks the S3 path-style API and checks no signature: the `s3://` tests reach it as S3,
//! the `gs://` tests through the XML API of Google Cloud Storage (see gcs.rs).

use std::io::{BufRead, BufReader, Read, Write};
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

/// Starts `moto_server` on a port the system picks (`-p 0`, read back from the line it
/// prints, so no two servers can race for one port), waits (at most 60 s) until it answers an
/// HTTP request, and panics if it cannot.
pub fn start_moto() -> Moto {
    let program = moto_program();
    let mut child = Command::new(&program)
        .args(["-H", "127.0.0.1", "-p", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start {} ({e}); `bash .ci/run` installs it into .venv-oracle \
                 (tests/oracle-requirements.txt), or set ASDF_MOTO_SERVER",
                program.display()
            )
        });
    // Werkzeug prints ` * Running on http://127.0.0.1:PORT` on stderr, then a line per
    // request: a thread reads the port, then keeps draining so the pipe never fills.
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.split("Running on http://127.0.0.1:").nth(1) {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let (Some(tx), Ok(port)) = (tx.take(), digits.parse::<u16>()) {
                    let _ = tx.send(port);
                }
            }
        }
    });
    let mut moto = Moto { child, port: 0 };
    moto.port = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{} printed no port within 60 s", program.display()));
    let deadline = Instant::now() + Duration::from_secs(60);
    while raw_once(moto.port, "GET", "/") != 200 {
        assert!(
            Instant::now() < deadline,
            "moto_server on port {} did not answer within 60 s",
            moto.port
        );
        if let Ok(Some(status)) = moto.child.try_wait() {
            panic!("moto_server exited ({status}) before answering");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    moto
}

/// One raw unsigned request without a body: the status code, 0 if the server gave no answer.
fn raw_once(port: u16, method: &str, path: &str) -> u16 {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return 0;
    };
    let sent = write!(
        s,
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    );
    if sent.is_err() {
        return 0;
    }
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// A raw unsigned request without a body (moto does not check signatures): the status code.
/// A connection that gives no answer at all (reset under load) is tried again, twice.
pub fn raw(port: u16, method: &str, path: &str) -> u16 {
    let mut status = raw_once(port, method, path);
    for _ in 0..2 {
        if status != 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
        status = raw_once(port, method, path);
    }
    status
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
