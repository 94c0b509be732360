//! `view`'s requests and answers. Every request is checked before anything is read: method
//! (GET, HEAD), host (a loopback name when bound to loopback), route, query parameters; a
//! file is named only relative to the served folder ([`Served::resolve`]). Errors are an
//! HTTP status and one line of text; a panic while answering is a 500, not a dead thread.
//!
//! | route | answer |
//! |---|---|
//! | `/`, `/app.js`, `/app.css` | the page |
//! | `/api/files` | `{title, single, files: [{path, format, size}], truncated}` |
//! | `/api/tree?file=F` | `{file, format, asdf_version, standard_version, tree, hdus}`: the tree as `info --json` gives it, `hdus` a FITS file's HDUs (or null) |
//! | `/api/stats?file=F&path=P` | `{path, count, finite, nan, min, max, mean}` of the array at the JSON pointer P |
//! | `/api/preview?file=F&path=P[&interval=zscale\|minmax\|percent&percent=X][&stretch=S][&cmap=C][&slice=I,J]` | a PNG image or plot of the array (asdf-preview) |

use std::io::Cursor;
use std::panic::AssertUnwindSafe;

use serde::Serialize;
use serde_json::json;

use super::files::Served;
use super::http::{pointer, HttpError, Params, Reply};
use crate::tree_json::JsonTree;

/// The page: static files, compiled in.
const INDEX_HTML: &str = include_str!("page/index.html");
const APP_JS: &str = include_str!("page/app.js");
const APP_CSS: &str = include_str!("page/app.css");

/// Longest request target accepted (path and query).
const MAX_URL: usize = 4096;

/// What the request threads share.
pub struct State {
    pub served: Served,
    /// The port served (for the Host check).
    pub port: u16,
    /// Bound to a loopback address: requests must name a loopback host.
    pub loopback_only: bool,
}

/// Answers one request (a closed connection is not an error worth reporting).
pub fn answer(state: &State, request: tiny_http::Request) {
    let method = request.method().clone();
    let host = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Host"))
        .map(|h| h.value.as_str().to_string());
    let url = request.url().to_string();
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
        reply(state, &method, host.as_deref(), &url)
    }))
    .unwrap_or_else(|_| Err(HttpError::new(500, "internal error while answering")));
    let (status, content_type, body) = match result {
        Ok(r) => (200, r.content_type, r.body),
        Err(e) => {
            let line = e.message.replace(['\n', '\r'], " ");
            (
                e.status,
                "text/plain; charset=utf-8",
                (line + "\n").into_bytes(),
            )
        }
    };
    let len = body.len();
    let mut response = tiny_http::Response::new(
        tiny_http::StatusCode(status),
        Vec::new(),
        Cursor::new(body),
        Some(len),
        None,
    );
    for (name, value) in [
        ("Content-Type", content_type),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        (
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
        ),
    ] {
        if let Ok(h) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            response.add_header(h);
        }
    }
    let _ = request.respond(response);
}

/// The answer to `method url` (with its Host header), before any byte is sent.
pub fn reply(
    state: &State,
    method: &tiny_http::Method,
    host: Option<&str>,
    url: &str,
) -> Result<Reply, HttpError> {
    if !matches!(method, tiny_http::Method::Get | tiny_http::Method::Head) {
        return Err(HttpError::new(
            405,
            format!("{method} is not served: the page is read-only (GET, HEAD)"),
        ));
    }
    if state.loopback_only && !loopback_host(host, state.port) {
        return Err(HttpError::forbidden(format!(
            "host {:?} refused: this server answers only to 127.0.0.1, localhost or [::1]",
            host.unwrap_or("")
        )));
    }
    if url.len() > MAX_URL {
        return Err(HttpError::new(414, "request target too long"));
    }
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let params = Params::parse(query)?;
    match path {
        "/" | "/index.html" => Ok(Reply {
            content_type: "text/html; charset=utf-8",
            body: INDEX_HTML.as_bytes().to_vec(),
        }),
        "/app.js" => Ok(Reply {
            content_type: "text/javascript; charset=utf-8",
            body: APP_JS.as_bytes().to_vec(),
        }),
        "/app.css" => Ok(Reply {
            content_type: "text/css; charset=utf-8",
            body: APP_CSS.as_bytes().to_vec(),
        }),
        "/api/files" => files(state),
        "/api/tree" => tree(state, &params),
        "/api/stats" => stats(state, &params),
        "/api/preview" => super::preview::preview(&state.served, &params),
        _ => Err(HttpError::not_found(format!("no such page: {path}"))),
    }
}

/// Whether the Host header names a loopback host at our port (or no port).
fn loopback_host(host: Option<&str>, port: u16) -> bool {
    let Some(host) = host else { return false };
    let (name, p) = match host.rsplit_once(':') {
        Some((n, p)) if !n.ends_with(':') && (n.starts_with('[') == n.ends_with(']')) => {
            (n, Some(p))
        }
        _ => (host, None),
    };
    if let Some(p) = p {
        if p.parse::<u16>().ok() != Some(port) {
            return false;
        }
    }
    matches!(name, "127.0.0.1" | "localhost" | "[::1]")
}

fn files(state: &State) -> Result<Reply, HttpError> {
    let (listed, truncated) = state.served.list();
    let files: Vec<_> = listed
        .iter()
        .map(|f| json!({"path": f.rel, "format": f.kind.name(), "size": f.size}))
        .collect();
    Reply::json(&json!({
        "title": state.served.title(),
        "single": state.served.is_single(),
        "files": files,
        "truncated": truncated,
    }))
}

fn tree(state: &State, params: &Params) -> Result<Reply, HttpError> {
    let rel = params.need("file")?;
    let opened = state.served.open(rel)?;
    let file = &opened.file;
    let h = file.header();
    let hdus = file.fits_hdus().map(|hdus| {
        hdus.iter()
            .map(|h| {
                json!({
                    "index": h.index,
                    "name": h.name,
                    "ver": h.ver,
                    "kind": h.kind.to_string(),
                    "shape": h.shape(),
                    "bitpix": h.bitpix,
                    "header_offset": h.header_offset,
                    "data_len": h.data_len,
                })
            })
            .collect::<Vec<_>>()
    });
    struct Doc<'a> {
        file: &'a str,
        format: &'static str,
        asdf_version: Option<&'a str>,
        standard_version: Option<&'a str>,
        tree: JsonTree<'a>,
        hdus: Option<Vec<serde_json::Value>>,
    }
    impl Serialize for Doc<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(Some(6))?;
            m.serialize_entry("file", self.file)?;
            m.serialize_entry("format", self.format)?;
            m.serialize_entry("asdf_version", &self.asdf_version)?;
            m.serialize_entry("standard_version", &self.standard_version)?;
            m.serialize_entry("tree", &self.tree)?;
            m.serialize_entry("hdus", &self.hdus)?;
            m.end()
        }
    }
    Reply::json(&Doc {
        file: rel,
        format: opened.kind.name(),
        asdf_version: h.asdf_version.as_deref(),
        standard_version: h.standard_version.as_deref(),
        tree: JsonTree::root(file),
        hdus,
    })
}

fn stats(state: &State, params: &Params) -> Result<Reply, HttpError> {
    let rel = params.need("file")?;
    let path = pointer(params)?;
    let opened = state.served.open(rel)?;
    let s = super::stats::of_array(&opened.file, path)?;
    Reply::json(&s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        assert!(loopback_host(Some("127.0.0.1:8080"), 8080));
        assert!(loopback_host(Some("localhost:8080"), 8080));
        assert!(loopback_host(Some("[::1]:8080"), 8080));
        assert!(loopback_host(Some("localhost"), 8080));
        assert!(!loopback_host(Some("localhost:8081"), 8080));
        assert!(!loopback_host(Some("evil.example:8080"), 8080));
        assert!(!loopback_host(Some("127.0.0.1.evil.example:8080"), 8080));
        assert!(!loopback_host(None, 8080));
    }
}
