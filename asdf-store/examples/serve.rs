//! Serves local files over HTTP on loopback with the tests' server (single byte ranges, ETag),
//! for the side-by-side with python asdf + fsspec (`benches/compare_fsspec.py`):
//! `cargo run --release -p asdfrs-store --example serve -- FILE...` prints one URL per file
//! and serves until killed; at the end of each line on stdin it prints the bytes sent so far.

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::BufRead;
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = support::Server::start();
    for path in std::env::args().skip(1) {
        let file = std::fs::File::open(&path)?;
        let name = std::path::Path::new(&path)
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or("a file name")?
            .to_string();
        server.put(&name, Arc::new(file));
        println!("{}", server.url(&name));
    }
    for line in std::io::stdin().lock().lines() {
        line?;
        println!("sent {} bytes in {} GETs", server.sent(), server.gets());
    }
    // Stdin closed: keep serving until killed.
    loop {
        std::thread::park();
    }
}
