//! `asdftool view FILE|DIR`: a local, read-only web page of a file (or of the files of a
//! folder): the tree as a collapsible outline with search, each array's summary, its
//! statistics on demand, image previews and plots (asdf-preview's renderer), the HDUs of FITS
//! files. Served by `tiny_http` on a few threads; the page is three static files compiled in
//! (`page/`), no build step.
//!
//! Untrusted input both ways: a request names a file only as a path relative to the served
//! folder, admitted by asdf-core's confinement of external files
//! ([`asdf_core::unstable::confined_path`]: `..` and symbolic links resolved, nothing outside
//! the folder); serving one FILE admits that file alone. Only GET and HEAD; every error is an
//! HTTP status and one line of text. Bound to 127.0.0.1 unless `--bind` says otherwise, and
//! then requests must name a loopback host (a DNS-rebinding page cannot read the files).
//!
//! Like `convert`, this command reads HDF5 and Blosc2 through the format modules (converted to
//! a temporary ASDF file when opened).

mod files;
mod http;
mod preview;
mod routes;
mod stats;

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use crate::Failure;

/// Threads answering requests (previews of large arrays take a while; the page asks for a
/// few things at once).
const WORKERS: usize = 4;

/// Serves `target` until the process is stopped. Prints `serving http://ADDR:PORT/` (the port
/// chosen when `port` is 0) on its own line first.
pub fn run(
    access: &crate::Access,
    target: &Path,
    port: u16,
    bind: IpAddr,
) -> Result<String, Failure> {
    let served = files::Served::new(access.clone(), target)?;
    let server = tiny_http::Server::http(SocketAddr::new(bind, port))
        .map_err(|e| format!("cannot listen on {bind}:{port}: {e}"))?;
    let addr = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| "the server has no IP address".to_string())?;
    let shown = match addr.ip() {
        IpAddr::V6(ip) => format!("[{ip}]:{}", addr.port()),
        IpAddr::V4(ip) => format!("{ip}:{}", addr.port()),
    };
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "serving {} at http://{shown}/ (read-only; Ctrl-C stops)",
            target.display()
        );
        let _ = out.flush();
    }
    let state = Arc::new(routes::State {
        served,
        port: addr.port(),
        loopback_only: bind.is_loopback(),
    });
    let server = Arc::new(server);
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let server = Arc::clone(&server);
            let state = Arc::clone(&state);
            std::thread::spawn(move || {
                while let Ok(request) = server.recv() {
                    routes::answer(&state, request);
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    Ok(String::new())
}
