//! `asdftool view` over HTTP: the server started on a free port (read from its first line),
//! its answers checked against the files' own content (the oracle's sidecars) and first
//! principles, and every way out of the served folder refused.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// A running `asdftool view`, stopped when dropped.
struct View {
    child: Child,
    port: u16,
}

impl View {
    fn start(target: &Path) -> View {
        let mut child = Command::new(env!("CARGO_BIN_EXE_asdftool"))
            .args(["view", "--port", "0"])
            .arg(target)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start asdftool view");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // serving PATH at http://127.0.0.1:PORT/ (...)
        let port = line
            .split("http://127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        View { child, port }
    }

    /// `METHOD target` with `Host: host`: status, headers (lower-cased names), body.
    fn request(
        &self,
        method: &str,
        target: &str,
        host: &str,
    ) -> (u16, Vec<(String, String)>, Vec<u8>) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        write!(
            s,
            "{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        )
        .unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("end of headers");
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        (status, headers, raw[split + 4..].to_vec())
    }

    fn get(&self, target: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
        self.request("GET", target, &format!("127.0.0.1:{}", self.port))
    }

    /// The status and body text of a GET.
    fn text(&self, target: &str) -> (u16, String) {
        let (status, _, body) = self.get(target);
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// The JSON of a GET that must succeed.
    fn json(&self, target: &str) -> Value {
        let (status, body) = self.text(target);
        assert_eq!(status, 200, "{target}: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{target}: {e}: {body}"))
    }
}

impl Drop for View {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn observation() -> std::path::PathBuf {
    common::repo_root().join("examples/data/observation.asdf")
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

/// numpy's dtype string (the oracle's) as asdf's datatype name.
fn datatype_of(numpy: &str) -> &str {
    match numpy.trim_start_matches(['<', '>', '|', '=']) {
        "f4" => "float32",
        "f8" => "float64",
        "u2" => "uint16",
        "i4" => "int32",
        "u4" => "uint32",
        other => panic!("no datatype name for {other} in this test"),
    }
}

/// Compares the view's tree node (`info --json`'s form) with the oracle's canonical JSON of
/// the same node, by path; returns the differences.
fn compare(ours: &Value, oracle: &Value, path: &str, out: &mut Vec<String>) {
    let kind = ours["kind"].as_str().unwrap_or("?");
    if let Some(tagged) = oracle.get("$tag") {
        if ours["tag"] != *tagged {
            out.push(format!("{path}: tag {} vs {tagged}", ours["tag"]));
        }
        return compare_untagged(ours, &oracle["value"], path, out);
    }
    if let Some(nd) = oracle.get("$ndarray") {
        if kind != "ndarray" {
            out.push(format!("{path}: {kind}, the oracle has an ndarray"));
            return;
        }
        if ours["shape"] != nd["shape"] {
            out.push(format!(
                "{path}: shape {} vs {}",
                ours["shape"], nd["shape"]
            ));
        }
        match &nd["dtype"] {
            Value::String(d) => {
                if ours["datatype"] != datatype_of(d) {
                    out.push(format!("{path}: datatype {} vs {d}", ours["datatype"]));
                }
            }
            // records: the field names, in order
            Value::Array(fields) => {
                let names: Vec<&str> = fields.iter().map(|f| f[0].as_str().unwrap()).collect();
                let text = ours["datatype"].as_str().unwrap_or("");
                let mut at = 0;
                for n in names {
                    match text[at..].find(n) {
                        Some(i) => at += i + n.len(),
                        None => out.push(format!("{path}: field {n} not in {text}")),
                    }
                }
            }
            other => out.push(format!("{path}: oracle dtype {other}")),
        }
        return;
    }
    compare_untagged(ours, oracle, path, out)
}

fn compare_untagged(ours: &Value, oracle: &Value, path: &str, out: &mut Vec<String>) {
    let kind = ours["kind"].as_str().unwrap_or("?");
    match oracle {
        Value::Object(m) if m.contains_key("$timestamp") => {
            let ts = m["$timestamp"].as_str().unwrap().trim_end_matches('Z');
            if kind != "timestamp"
                || ours["value"].as_str().map(|v| v.replace(' ', "T")) != Some(ts.into())
            {
                out.push(format!("{path}: {ours} vs timestamp {ts}"));
            }
        }
        Value::Object(m) => {
            let Some(children) = ours["children"].as_object() else {
                out.push(format!("{path}: {kind}, the oracle has a mapping"));
                return;
            };
            let mut a: Vec<&String> = children.keys().collect();
            let mut b: Vec<&String> = m.keys().collect();
            a.sort();
            b.sort();
            if a != b {
                out.push(format!("{path}: keys {a:?} vs {b:?}"));
                return;
            }
            for (k, v) in m {
                compare(&children[k], v, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(items) => {
            let Some(ours_items) = ours["items"].as_array() else {
                out.push(format!("{path}: {kind}, the oracle has a sequence"));
                return;
            };
            if ours_items.len() != items.len() {
                out.push(format!(
                    "{path}: {} items vs {}",
                    ours_items.len(),
                    items.len()
                ));
                return;
            }
            for (i, (x, y)) in ours_items.iter().zip(items).enumerate() {
                compare(x, y, &format!("{path}/{i}"), out);
            }
        }
        scalar => {
            let same = match (&ours["value"], scalar) {
                (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
                (x, y) => x == y,
            };
            if !same {
                out.push(format!("{path}: {} vs {scalar}", ours["value"]));
            }
        }
    }
}

#[test]
fn tree_equals_the_oracle_tree() {
    let view = View::start(&observation());
    let files = view.json("/api/files");
    assert_eq!(files["single"], true);
    assert_eq!(files["files"][0]["path"], "observation.asdf");
    assert_eq!(
        files["files"][0]["size"],
        std::fs::metadata(observation()).unwrap().len()
    );
    let doc = view.json("/api/tree?file=observation.asdf");
    assert_eq!(doc["format"], "asdf");
    assert_eq!(doc["asdf_version"], "1.0.0");
    assert_eq!(doc["standard_version"], "1.6.0");
    assert_eq!(doc["hdus"], Value::Null);
    let oracle: Value = serde_json::from_str(
        &std::fs::read_to_string(common::repo_root().join("examples/data/observation.expect.json"))
            .unwrap(),
    )
    .unwrap();
    let mut diffs = Vec::new();
    compare(&doc["tree"], &oracle["tree"], "", &mut diffs);
    assert!(diffs.is_empty(), "{diffs:#?}");
    // the summary the page shows: storage and codec (the generator chose them)
    let sci = &doc["tree"]["children"]["sci"];
    assert_eq!(sci["storage"], "internal");
    assert_eq!(sci["compression"], "zlib");
    assert_eq!(doc["tree"]["children"]["err"]["compression"], "lz4");
    assert_eq!(
        doc["tree"]["children"]["wavelengths_um"]["storage"],
        "inline"
    );
}

#[test]
fn the_page_is_served_with_its_scripts_and_a_strict_policy() {
    let view = View::start(&observation());
    let (status, headers, body) = view.get("/");
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = String::from_utf8(body).unwrap();
    assert!(
        html.contains(r#"<script src="/app.js" defer></script>"#),
        "{html}"
    );
    let csp = header(&headers, "content-security-policy").unwrap();
    assert!(csp.contains("default-src 'self'"), "{csp}");
    assert_eq!(header(&headers, "x-content-type-options"), Some("nosniff"));
    let (status, headers, js) = view.get("/app.js");
    assert_eq!(status, 200);
    assert!(header(&headers, "content-type")
        .unwrap()
        .starts_with("text/javascript"));
    assert!(String::from_utf8(js).unwrap().contains("/api/tree"));
    assert_eq!(view.get("/app.css").0, 200);
    // HEAD: the same headers, no body
    let (status, headers, body) = view.request("HEAD", "/", &format!("127.0.0.1:{}", view.port));
    assert_eq!(status, 200);
    assert!(header(&headers, "content-type").is_some());
    assert!(body.is_empty());
}

#[test]
fn statistics_on_demand() {
    let view = View::start(&observation());
    // dq: zeros with dq[10:12, 20:40] = 4 (examples/data/make_example.py)
    let dq = view.json("/api/stats?file=observation.asdf&path=%2Fdq");
    assert_eq!(dq["count"], 4096);
    assert_eq!(dq["finite"], 4096);
    assert_eq!(dq["nan"], 0);
    assert_eq!(dq["min"], 0.0);
    assert_eq!(dq["max"], 4.0);
    assert_eq!(dq["mean"], 4.0 * 40.0 / 4096.0);
    // wavelengths: np.linspace(1.5, 2.5, 11), inline
    let w = view.json("/api/stats?file=observation.asdf&path=/wavelengths_um");
    assert_eq!(
        (w["min"].as_f64(), w["max"].as_f64()),
        (Some(1.5), Some(2.5))
    );
    assert!((w["mean"].as_f64().unwrap() - 2.0).abs() < 1e-12);
    // a record array and a mapping have none; a missing node is a 404
    assert_eq!(
        view.text("/api/stats?file=observation.asdf&path=/sources")
            .0,
        422
    );
    assert_eq!(
        view.text("/api/stats?file=observation.asdf&path=/meta").0,
        422
    );
    assert_eq!(
        view.text("/api/stats?file=observation.asdf&path=/nothing")
            .0,
        404
    );
}

#[test]
fn a_folder_lists_its_files_and_opens_fits_and_hdf5() {
    let dir = common::Scratch::new("view-folder");
    let fits = common::repo_root().join("tests/data/asdf-in-fits/image.fits");
    let h5 = common::repo_root().join("asdf-hdf5/tests/data/numeric.h5");
    copy(&observation(), &dir.join("sub/observation.asdf"));
    copy(&fits, &dir.join("image.fits"));
    copy(&h5, &dir.join("numeric.h5"));
    let frames = common::repo_root().join("asdf-blosc2/tests/data/frames");
    copy(&frames.join("shape_3d.b2nd"), &dir.join("cube.b2nd"));
    std::fs::write(dir.join("notes.txt"), "not listed").unwrap();
    std::fs::write(dir.join(".hidden.asdf"), "not listed").unwrap();
    let view = View::start(&dir);
    let files = view.json("/api/files");
    assert_eq!(files["single"], false);
    let listed: Vec<(&str, &str)> = files["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["format"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [
            ("cube.b2nd", "blosc2"),
            ("image.fits", "fits"),
            ("numeric.h5", "hdf5"),
            ("sub/observation.asdf", "asdf")
        ]
    );
    // FITS: the HDUs stdatamodels wrote (tests/data/asdf-in-fits/generate.py: an ImageModel
    // of 6 x 7 pixels, data[0, 0] NaN)
    let doc = view.json("/api/tree?file=image.fits");
    assert_eq!(doc["format"], "fits");
    let hdus = doc["hdus"].as_array().unwrap();
    let names: Vec<&str> = hdus.iter().map(|h| h["name"].as_str().unwrap()).collect();
    assert_eq!(names[0], "PRIMARY");
    assert_eq!(names.last(), Some(&"ASDF"));
    for want in ["SCI", "DQ", "ERR"] {
        let h = hdus
            .iter()
            .find(|h| h["name"] == want)
            .unwrap_or_else(|| panic!("{want}: {names:?}"));
        assert_eq!(h["shape"], serde_json::json!([6, 7]), "{want}");
    }
    let data = view.json("/api/stats?file=image.fits&path=/data");
    assert_eq!(
        (data["count"].as_u64(), data["nan"].as_u64()),
        (Some(42), Some(1))
    );
    // HDF5, converted (asdftool without its hdf5 feature says it cannot: 422)
    #[cfg(not(feature = "hdf5"))]
    assert_eq!(view.text("/api/tree?file=numeric.h5").0, 422);
    #[cfg(feature = "hdf5")]
    {
        // HDF5, converted: every dataset h5py lists (numeric.expect.json) is an array of its shape
        let doc = view.json("/api/tree?file=numeric.h5");
        let oracle: Value = serde_json::from_str(
            &std::fs::read_to_string(
                common::repo_root().join("asdf-hdf5/tests/data/numeric.expect.json"),
            )
            .unwrap(),
        )
        .unwrap();
        let datasets = oracle["datasets"].as_object().unwrap();
        assert!(!datasets.is_empty());
        for (path, d) in datasets {
            let mut node = &doc["tree"];
            for seg in path.split('/').skip(1) {
                node = &node["children"][seg];
            }
            assert_eq!(node["kind"], "ndarray", "{path}: {node}");
            assert_eq!(node["shape"], d["shape"], "{path}");
        }
        // the converted file's data is read after its temporary file is gone
        let f8 = view.json("/api/stats?file=numeric.h5&path=/little/f8");
        let count: u64 = datasets["/little/f8"]["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .product();
        assert_eq!(f8["count"], count);
        let prefix = format!("asdftool-view-{}-", view.child.id());
        let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
    }
    // Blosc2, converted: one array of the shape python-blosc2 wrote (frames/manifest.json)
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(frames.join("manifest.json")).unwrap())
            .unwrap();
    let case = manifest
        .as_array()
        .or_else(|| manifest["cases"].as_array())
        .unwrap()
        .iter()
        .find(|c| c["name"] == "shape_3d")
        .unwrap();
    let doc = view.json("/api/tree?file=cube.b2nd");
    assert_eq!(doc["format"], "blosc2");
    let arrays: Vec<&Value> = doc["tree"]["children"]
        .as_object()
        .unwrap()
        .values()
        .filter(|n| n["kind"] == "ndarray")
        .collect();
    assert_eq!(arrays.len(), 1, "{}", doc["tree"]);
    assert_eq!(arrays[0]["shape"], case["shape"]);
    // a file in a subfolder
    assert_eq!(
        view.json("/api/tree?file=sub%2Fobservation.asdf")["format"],
        "asdf"
    );
}

#[test]
fn nothing_outside_the_folder_is_served() {
    let dir = common::Scratch::new("view-confined");
    let served = dir.join("served");
    copy(&observation(), &served.join("in.asdf"));
    copy(&observation(), &dir.join("secret.asdf"));
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.join("secret.asdf"), served.join("link.asdf")).unwrap();
    let view = View::start(&served);
    let secret = dir.join("secret.asdf");
    let absolute = secret.to_str().unwrap();
    for (target, want) in [
        ("/api/tree?file=in.asdf", 200),
        ("/api/tree?file=../secret.asdf", 403),
        ("/api/tree?file=..%2Fsecret.asdf", 403),
        ("/api/tree?file=sub%2F..%2F..%2Fsecret.asdf", 403),
        (&format!("/api/tree?file={absolute}"), 403),
        ("/api/tree?file=missing.asdf", 404),
        ("/api/stats?file=../secret.asdf&path=/dq", 403),
        ("/api/preview?file=../secret.asdf&path=/sci", 403),
        ("/api/tree", 400),
        ("/api/tree?file=in.asdf&evil=1", 400),
        ("/api/tree?file=in.asdf&file=in.asdf", 400),
        ("/api/stats?file=in.asdf&path=dq", 400),
        ("/api/tree?file=%00", 400),
        ("/../secret.asdf", 404),
        ("/secret.asdf", 404),
        ("/in.asdf", 404),
    ] {
        let (status, body) = view.text(target);
        assert_eq!(status, want, "{target}: {body}");
        if want != 200 {
            // one line of text
            assert_eq!(body.lines().count(), 1, "{target}: {body:?}");
            assert!(!body.contains("EXAMPLE"), "{target}: {body}");
        }
    }
    #[cfg(unix)]
    assert_eq!(view.text("/api/tree?file=link.asdf").0, 403);
    // the folder's listing leaves the link out
    let files = view.json("/api/files");
    assert_eq!(files["files"].as_array().unwrap().len(), 1, "{files}");
    // read-only, and only for this machine's names (a DNS-rebinding page names its own host)
    let host = format!("127.0.0.1:{}", view.port);
    assert_eq!(view.request("POST", "/api/tree?file=in.asdf", &host).0, 405);
    assert_eq!(view.request("PUT", "/in.asdf", &host).0, 405);
    let (status, _, _) = view.request("GET", "/api/files", &format!("evil.example:{}", view.port));
    assert_eq!(status, 403);
    assert_eq!(
        view.request("GET", "/api/files", &format!("localhost:{}", view.port))
            .0,
        200
    );
    // serving one file: no other file of its folder
    let one = View::start(&served.join("in.asdf"));
    assert_eq!(one.text("/api/tree?file=in.asdf").0, 200);
    assert_eq!(one.text("/api/tree?file=link.asdf").0, 404);
    assert_eq!(one.text("/api/tree?file=../secret.asdf").0, 404);
}

#[test]
fn previews_are_png_images() {
    let view = View::start(&observation());
    let (status, headers, png) = view.get("/api/preview?file=observation.asdf&path=/sci");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&png));
    assert_eq!(header(&headers, "content-type"), Some("image/png"));
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR: a 64 x 64 array is drawn at its own size
    assert_eq!(&png[12..16], b"IHDR");
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((width, height), (64, 64));
    // a 1-D array is a plot
    let (status, _, plot) = view.get("/api/preview?file=observation.asdf&path=/wavelengths_um");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&plot));
    assert_eq!(&plot[..4], b"\x89PNG");
    // options checked
    for (target, want) in [
        (
            "/api/preview?file=observation.asdf&path=/sci&stretch=cubic",
            400,
        ),
        (
            "/api/preview?file=observation.asdf&path=/sci&interval=percent&percent=0",
            400,
        ),
        (
            "/api/preview?file=observation.asdf&path=/sci&max_size=99999999",
            400,
        ),
        ("/api/preview?file=observation.asdf&path=/sci&slice=x", 400),
        (
            "/api/preview?file=observation.asdf&path=/sci&cmap=rainbow",
            400,
        ),
        ("/api/preview?file=observation.asdf&path=/meta", 422),
        ("/api/preview?file=observation.asdf&path=/nothing", 404),
    ] {
        let (status, body) = view.text(target);
        assert_eq!(status, want, "{target}: {body}");
    }
}

#[test]
fn statistics_of_a_huge_array_are_refused_before_reading() {
    let dir = common::Scratch::new("view-huge");
    // 8 TB declared, no block: refused from the descriptor (413), not read (which would be a
    // 422 for the missing block)
    let text = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
                --- !core/asdf-1.1.0\nhuge: !core/ndarray-1.1.0\n  source: 0\n  datatype: float64\n  \
                byteorder: little\n  shape: [100000, 100000, 100]\n...\n";
    std::fs::write(dir.join("huge.asdf"), text).unwrap();
    let view = View::start(&dir);
    let doc = view.json("/api/tree?file=huge.asdf");
    assert_eq!(
        doc["tree"]["children"]["huge"]["shape"],
        serde_json::json!([100000, 100000, 100])
    );
    let (status, body) = view.text("/api/stats?file=huge.asdf&path=/huge");
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("8000000000000 bytes"), "{body}");
}
