//! ASDF in FITS (JWST products) in `asdftool`: `info` lists the HDUs; `convert x.fits y.asdf`
//! goes through the ASDF writer like `defragment` (see `convert.rs`).

use std::fmt::Write;

use asdf_core::file::Hdu;

/// The HDUs of a FITS file, one line each: number, name and version, kind, shape and
/// `BITPIX`, as `asdftool info` prints them after the tree.
pub fn hdu_table(hdus: &[Hdu]) -> String {
    let mut out = format!("\nFITS HDUs: {}\n", hdus.len());
    for h in hdus {
        let shape: Vec<String> = h.shape().iter().map(u64::to_string).collect();
        let _ = write!(
            out,
            "  {:>3}  {:<12} {:>3}  {:<13}",
            h.index,
            h.name,
            h.ver,
            h.kind.to_string()
        );
        if h.axes.is_empty() {
            out.push_str("  no data");
        } else {
            let _ = write!(out, "  ({})  BITPIX {}", shape.join(", "), h.bitpix);
        }
        let _ = writeln!(out, "  at byte {}", h.header_offset);
    }
    out
}
