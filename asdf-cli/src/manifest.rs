//! `asdftool manifest FILE [PATH] [--json] [--slab-bytes N]`: the independently readable
//! pieces of every array (or of PATH's), from [`asdf_core::AsdfFile::manifest`]: each
//! piece's file, byte range, codec, the decoded bytes of its block it yields and the region
//! of the array it holds. A table by default, JSON with `--json`.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::Path;

use asdf_core::{Manifest, ManifestOptions, PieceSource};
use serde_json::{json, Value as Json};

use crate::tree::array_paths;

/// The manifests of the arrays of `input` (or of the one at `at`), as a table or JSON.
pub fn run(
    access: &crate::Access,
    input: &Path,
    at: Option<&str>,
    json: bool,
    slab_bytes: Option<u64>,
) -> Result<String, String> {
    let file = access.open(input)?;
    let mut opts = ManifestOptions::default();
    if let Some(n) = slab_bytes {
        if n == 0 {
            return Err("--slab-bytes must be at least 1".to_string());
        }
        opts = opts.slab_bytes(n);
    }
    let manifests = array_paths(&file, input, at)?
        .iter()
        .map(|p| file.manifest(p, &opts))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {}", input.display(), crate::chain(&e)))?;
    let out = if json {
        let doc = json!({
            "file": input.display().to_string(),
            "arrays": manifests.iter().map(manifest_json).collect::<Vec<_>>(),
        });
        serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n"
    } else {
        manifests.iter().map(table).collect()
    };
    crate::exit_soon(file);
    Ok(out)
}

/// The file a piece lies in, for the table.
fn source_text(s: &PieceSource) -> String {
    match s {
        PieceSource::File => "file".to_string(),
        PieceSource::External(uri) => uri.clone(),
        PieceSource::Inline => "inline".to_string(),
        PieceSource::Repeat(p) => format!("repeat {}", hex(p)),
        _ => "?".to_string(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `[0:8, 0:32]`, numpy's slice text of a region.
fn region_text(region: &Option<Vec<Range<usize>>>) -> String {
    match region {
        None => "-".to_string(),
        Some(r) => {
            let axes: Vec<String> = r.iter().map(|a| format!("{}:{}", a.start, a.end)).collect();
            format!("[{}]", axes.join(", "))
        }
    }
}

fn shape_text(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    format!("({})", dims.join(", "))
}

/// One array's manifest as a table: a heading line, then one row per piece.
fn table(m: &Manifest) -> String {
    let mut out = String::new();
    let chunks = match m.zarr_chunks() {
        Some(c) => format!("regular chunks {}", shape_text(&c)),
        None => "no regular chunks".to_string(),
    };
    let _ = writeln!(
        out,
        "{} {} {} {}, {} piece{}, {chunks}",
        m.path,
        m.dtype.name(),
        m.dtype.to_numpy_str(),
        shape_text(&m.shape),
        m.pieces.len(),
        if m.pieces.len() == 1 { "" } else { "s" },
    );
    let rows: Vec<[String; 7]> = m
        .pieces
        .iter()
        .enumerate()
        .map(|(i, p)| {
            [
                i.to_string(),
                source_text(&p.source),
                p.offset.to_string(),
                p.length.to_string(),
                p.codec.name().to_string(),
                format!("{}..{}", p.decoded.start, p.decoded.end),
                region_text(&p.region),
            ]
        })
        .collect();
    let head = [
        "piece", "file", "offset", "length", "codec", "decoded", "region",
    ];
    let mut widths = head.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: [&str; 7]| {
        let mut l = String::from(" ");
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            // numbers right-aligned, text left-aligned; no padding after the last column
            match i {
                0 | 2 | 3 => {
                    let _ = write!(l, " {c:>w$}");
                }
                6 => {
                    let _ = write!(l, " {c}");
                }
                _ => {
                    let _ = write!(l, " {c:<w$}");
                }
            }
        }
        l + "\n"
    };
    out.push_str(&line(head));
    for r in &rows {
        out.push_str(&line([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5], &r[6]]));
    }
    out
}

/// One array's manifest as JSON.
fn manifest_json(m: &Manifest) -> Json {
    let pieces: Vec<Json> = m
        .pieces
        .iter()
        .map(|p| {
            let mut o = json!({
                "source": match &p.source {
                    PieceSource::File => "file",
                    PieceSource::External(_) => "external",
                    PieceSource::Inline => "inline",
                    PieceSource::Repeat(_) => "repeat",
                    _ => "other",
                },
                "offset": p.offset,
                "length": p.length,
                "codec": p.codec.name(),
                "decoded": [p.decoded.start, p.decoded.end],
                "region": p.region.as_ref().map(|r| {
                    r.iter().map(|a| json!([a.start, a.end])).collect::<Vec<_>>()
                }),
            });
            match &p.source {
                PieceSource::External(uri) => o["uri"] = json!(uri),
                PieceSource::Repeat(pattern) => o["pattern"] = json!(hex(pattern)),
                _ => {}
            }
            o
        })
        .collect();
    json!({
        "path": m.path,
        "datatype": m.dtype.name(),
        "numpy_dtype": m.dtype.to_numpy_str(),
        "shape": m.shape,
        "zarr_chunks": m.zarr_chunks(),
        "pieces": pieces,
    })
}
