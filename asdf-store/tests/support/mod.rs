//! A small HTTP/1.1 server on loopback for the tests: GET and HEAD with single byte ranges,
//! ETag / Last-Modified / If-Match, a count of the body bytes it sends, and injected faults;
//! and ([`moto`]) the `moto_server` of the `s3://` and `gs://` tests.

#![allow(dead_code)]

pub mod moto;

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use asdf_core::file::ReadAt;

/// A fault applied to one GET request (taken in order, one per request).
#[derive(Clone)]
pub enum Fault {
    /// Answer 500.
    Status500,
    /// Close the connection without an answer.
    Reset,
    /// Send the headers of the full answer but only this many body bytes, then close.
    Truncate(usize),
    /// Before answering, replace the object with these bytes (a new ETag and date).
    Replace(Arc<dyn ReadAt>),
    /// Answer normally but ignore If-Match and send the new bytes (a server that does not
    /// honour conditional requests): replaces the object, keeps answering.
    ReplaceIgnoringIfMatch(Arc<dyn ReadAt>),
}

struct Object {
    data: Arc<dyn ReadAt>,
    etag: String,
    modified: String,
}

#[derive(Default)]
struct State {
    objects: HashMap<String, Object>,
    faults: VecDeque<Fault>,
    ignore_if_match: bool,
    version: u64,
}

/// The server; stops when dropped.
pub struct Server {
    pub port: u16,
    state: Arc<Mutex<State>>,
    sent: Arc<AtomicU64>,
    gets: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

fn http_date(version: u64) -> String {
    // Distinct, valid dates per version (seconds differ).
    format!("Wed, 21 Oct 2015 07:28:{:02} GMT", version % 60)
}

impl Server {
    pub fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("local addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let state = Arc::new(Mutex::new(State::default()));
        let sent = Arc::new(AtomicU64::new(0));
        let gets = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, se, ge, sp) = (state.clone(), sent.clone(), gets.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !sp.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (st, se, ge, sp) = (st.clone(), se.clone(), ge.clone(), sp.clone());
                        std::thread::spawn(move || serve(conn, &st, &se, &ge, &sp));
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(2)),
                }
            }
        });
        Server {
            port,
            state,
            sent,
            gets,
            stop,
            thread: Some(thread),
        }
    }

    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.port)
    }

    pub fn put(&self, name: &str, data: Arc<dyn ReadAt>) {
        let mut s = self.state.lock().unwrap();
        s.version += 1;
        let v = s.version;
        s.objects.insert(
            format!("/{name}"),
            Object {
                data,
                etag: format!("\"v{v}\""),
                modified: http_date(v),
            },
        );
    }

    pub fn fault(&self, f: Fault) {
        self.state.lock().unwrap().faults.push_back(f);
    }

    /// Body bytes sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }

    /// Body bytes sent, once they reach `want` (the bytes the client counted as received) or
    /// after 2 s: the server counts a chunk after writing it, so the client may have it
    /// before the count does.
    pub fn sent_settled(&self, want: u64) -> u64 {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while self.sent() < want && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        self.sent()
    }

    /// GET requests answered so far.
    pub fn gets(&self) -> u64 {
        self.gets.load(Ordering::SeqCst)
    }

    pub fn reset_counts(&self) {
        self.sent.store(0, Ordering::SeqCst);
        self.gets.store(0, Ordering::SeqCst);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(
    conn: TcpStream,
    state: &Mutex<State>,
    sent: &AtomicU64,
    gets: &AtomicU64,
    stop: &AtomicBool,
) {
    let _ = conn.set_nonblocking(false);
    // The head and the body are two writes: without this, a small body waits for the
    // client's delayed ACK of the head (Nagle's algorithm), 40 ms per small request.
    let _ = conn.set_nodelay(true);
    let _ = conn.set_read_timeout(Some(std::time::Duration::from_millis(200)));
    let mut reader = BufReader::new(conn.try_clone().expect("clone"));
    let mut out = conn;
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(_) => return,
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let target = parts.next().unwrap_or("").to_string();
        let mut headers = HashMap::new();
        loop {
            let mut h = String::new();
            match reader.read_line(&mut h) {
                Ok(0) => return,
                Ok(_) => {}
                Err(_) => return,
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        if !answer(&mut out, &method, &target, &headers, state, sent, gets) {
            let _ = out.shutdown(Shutdown::Both);
            return;
        }
    }
}

/// Answers one request; `false` closes the connection.
fn answer(
    out: &mut TcpStream,
    method: &str,
    target: &str,
    headers: &HashMap<String, String>,
    state: &Mutex<State>,
    sent: &AtomicU64,
    gets: &AtomicU64,
) -> bool {
    let path = target.split('?').next().unwrap_or("");
    let fault = if method == "GET" {
        gets.fetch_add(1, Ordering::SeqCst);
        let mut s = state.lock().unwrap();
        let f = s.faults.pop_front();
        match &f {
            Some(Fault::Replace(data)) | Some(Fault::ReplaceIgnoringIfMatch(data)) => {
                let ignore = matches!(f, Some(Fault::ReplaceIgnoringIfMatch(_)));
                s.version += 1;
                let v = s.version;
                s.ignore_if_match |= ignore;
                if let Some(o) = s.objects.get_mut(path) {
                    o.data = data.clone();
                    o.etag = format!("\"v{v}\"");
                    o.modified = http_date(v);
                }
                None
            }
            _ => f,
        }
    } else {
        None
    };
    let (data, etag, modified, ignore) = {
        let s = state.lock().unwrap();
        match s.objects.get(path) {
            Some(o) => (
                o.data.clone(),
                o.etag.clone(),
                o.modified.clone(),
                s.ignore_if_match,
            ),
            None => {
                let _ = out.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
                return true;
            }
        }
    };
    match fault {
        Some(Fault::Status500) => {
            let _ =
                out.write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n");
            return true;
        }
        Some(Fault::Reset) => return false,
        _ => {}
    }
    if !ignore {
        if let Some(m) = headers.get("if-match") {
            if m != &etag && m != "*" {
                let _ =
                    out.write_all(b"HTTP/1.1 412 Precondition Failed\r\ncontent-length: 0\r\n\r\n");
                return true;
            }
        }
    }
    let size = data.len();
    let range = headers.get("range").and_then(|r| {
        let r = r.strip_prefix("bytes=")?;
        let (a, b) = r.split_once('-')?;
        let a: u64 = a.parse().ok()?;
        let b: u64 = if b.is_empty() {
            size - 1
        } else {
            b.parse().ok()?
        };
        Some((a, b.min(size.saturating_sub(1))))
    });
    let (status, start, end) = match range {
        Some((a, b)) if a <= b && a < size => ("206 Partial Content", a, b + 1),
        Some(_) => {
            let _ = write!(
                out,
                "HTTP/1.1 416 Range Not Satisfiable\r\ncontent-range: bytes */{size}\r\ncontent-length: 0\r\n\r\n"
            );
            return true;
        }
        None => ("200 OK", 0, size),
    };
    let len = end - start;
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-length: {len}\r\netag: {etag}\r\nlast-modified: {modified}\r\naccept-ranges: bytes\r\n"
    );
    if range.is_some() {
        head.push_str(&format!(
            "content-range: bytes {start}-{}/{size}\r\n",
            end - 1
        ));
    }
    head.push_str("\r\n");
    if out.write_all(head.as_bytes()).is_err() {
        return false;
    }
    if method == "HEAD" {
        return true;
    }
    let limit = match fault {
        Some(Fault::Truncate(n)) => (n as u64).min(len),
        _ => len,
    };
    let mut pos = start;
    let mut buf = vec![0u8; 1 << 20];
    while pos < start + limit {
        let n = usize::try_from((start + limit - pos).min(buf.len() as u64)).unwrap();
        let chunk = &mut buf[..n];
        if data.read_exact_at(chunk, pos).is_err() || out.write_all(chunk).is_err() {
            return false;
        }
        sent.fetch_add(n as u64, Ordering::SeqCst);
        pos += n as u64;
    }
    limit == len
}

/// A file whose array `/a` lives in the external file `source`.
pub fn referring(source: &str) -> Vec<u8> {
    format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
         a: !core/ndarray-1.0.0 {{source: {source}, datatype: float64, byteorder: little, shape: [3]}}\n...\n"
    )
    .into_bytes()
}
