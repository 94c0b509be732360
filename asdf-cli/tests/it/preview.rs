//! `asdftool preview FILE [PATH] -o OUT.png|OUT.svg`: the renderer's bytes (asdf-preview,
//! itself checked against astropy in its own tests) written for ASDF and ASDF-in-FITS files,
//! with the options passed through; PNG sizes read back from the file; what cannot be drawn
//! refused in one line with exit status 2.

use crate::common;
use crate::tool;

use std::path::{Path, PathBuf};

use asdf_core::AsdfFile;
use asdf_preview::{render_array, Colormap, Format, Interval, PreviewOptions, Stretch};
use common::Scratch;
use tool::{asdftool, ok, stderr};

fn images() -> PathBuf {
    common::repo_root().join("asdf-preview/tests/data/images.asdf")
}

/// A PNG file's width and height (its IHDR chunk).
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    (be(16), be(20))
}

fn run(args: &[&str]) -> std::process::Output {
    asdftool(args)
}

/// The same bytes (without printing them all when not).
fn same(got: &[u8], want: &[u8]) {
    assert!(
        got == want,
        "{} bytes written, the renderer gives {}",
        got.len(),
        want.len()
    );
}

fn library(file: &Path, path: &str, opts: &PreviewOptions, format: Format) -> Vec<u8> {
    render_array(&AsdfFile::open(file).unwrap(), path, opts, format).unwrap()
}

#[test]
fn an_image_is_written_as_the_renderer_draws_it() {
    let dir = Scratch::new("preview-image");
    let out = dir.join("sources.png");
    let input = images();
    let text = ok(&run(&[
        "preview",
        input.to_str().unwrap(),
        "sources",
        "-o",
        out.to_str().unwrap(),
    ]));
    assert!(text.starts_with("wrote "), "{text}");
    assert!(text.contains("PNG of /sources"), "{text}");
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(png_size(&bytes), (200, 300));
    same(
        &bytes,
        &library(&input, "/sources", &PreviewOptions::default(), Format::Png),
    );
}

#[test]
fn options_reach_the_renderer() {
    let dir = Scratch::new("preview-options");
    let input = images();
    let out = dir.join("a.png");
    ok(&run(&[
        "preview",
        input.to_str().unwrap(),
        "/sources",
        "-o",
        out.to_str().unwrap(),
        "--percent",
        "99",
        "--stretch",
        "asinh",
        "--cmap",
        "viridis",
        "--max-size",
        "100",
    ]));
    let mut o = PreviewOptions::default();
    o.interval = Interval::Percent(99.0);
    o.stretch = Stretch::Asinh;
    o.colormap = Colormap::Viridis;
    o.max_size = 100;
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(png_size(&bytes), (67, 100));
    same(&bytes, &library(&input, "/sources", &o, Format::Png));
    // plane 2 of the cube, min/max, log
    ok(&run(&[
        "preview",
        input.to_str().unwrap(),
        "cube",
        "-o",
        out.to_str().unwrap(),
        "--slice",
        "2",
        "--interval",
        "minmax",
        "--stretch",
        "log",
    ]));
    let mut o = PreviewOptions::default();
    o.slice = vec![2];
    o.interval = Interval::MinMax;
    o.stretch = Stretch::Log;
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(png_size(&bytes), (80, 64));
    same(&bytes, &library(&input, "/cube", &o, Format::Png));
    assert!(bytes != library(&input, "/cube", &PreviewOptions::default(), Format::Png));
}

#[test]
fn without_a_path_the_first_image_is_drawn() {
    let dir = Scratch::new("preview-default");
    let input = images();
    let out = dir.join("first.png");
    ok(&run(&[
        "preview",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]));
    // python asdf wrote the keys sorted: `constant` (40 x 50) is the first 2-D array
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(png_size(&bytes), (50, 40));
    same(
        &bytes,
        &library(&input, "/constant", &PreviewOptions::default(), Format::Png),
    );
}

#[test]
fn plots_as_svg_and_tables_by_column() {
    let dir = Scratch::new("preview-svg");
    let input = images();
    let out = dir.join("spectrum.svg");
    ok(&run(&[
        "preview",
        input.to_str().unwrap(),
        "spectrum",
        "-o",
        out.to_str().unwrap(),
    ]));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.contains(">/spectrum/value</text>"));
    let out = dir.join("table.svg");
    ok(&run(&[
        "preview",
        input.to_str().unwrap(),
        "table",
        "--x",
        "wavelength",
        "--y",
        "flux",
        "-o",
        out.to_str().unwrap(),
    ]));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.contains(">flux (float32)</text>"), "{svg}");
    assert!(svg.contains(">wavelength (float64)</text>"), "{svg}");
}

#[test]
fn asdf_in_fits_arrays_preview() {
    let dir = Scratch::new("preview-fits");
    let input = common::data_dir("asdf-in-fits").join("image.fits");
    let out = dir.join("fits.png");
    ok(&run(&[
        "preview",
        input.to_str().unwrap(),
        "data",
        "-o",
        out.to_str().unwrap(),
    ]));
    let bytes = std::fs::read(&out).unwrap();
    // data: 6 rows of 7 (big-endian float32 in a FITS HDU)
    assert_eq!(png_size(&bytes), (7, 6));
    same(
        &bytes,
        &library(&input, "/data", &PreviewOptions::default(), Format::Png),
    );
}

#[test]
fn what_cannot_be_drawn_exits_2_in_one_line() {
    let dir = Scratch::new("preview-errors");
    let input = images();
    let inp = input.to_str().unwrap();
    let png = dir.join("x.png");
    let out = png.to_str().unwrap();
    let jpg = dir.join("x.jpg");
    for (args, says) in [
        (
            vec!["preview", inp, "names", "-o", out],
            "/names: cannot draw an array of",
        ),
        (
            vec!["preview", inp, "nothing", "-o", out],
            "no node at /nothing",
        ),
        (
            vec!["preview", inp, "asdf_library", "-o", out],
            "not an array",
        ),
        (
            vec!["preview", inp, "sources", "-o", jpg.to_str().unwrap()],
            "choose an output ending in .png or .svg",
        ),
        (
            vec!["preview", inp, "sources", "-o", out, "--cmap", "nope"],
            "not a colour map",
        ),
        (
            vec!["preview", inp, "cube", "-o", out, "--slice", "5"],
            "--slice index 5 is beyond axis 0 of length 3",
        ),
        (
            vec!["preview", inp, "cube", "-o", out, "--slice", "x"],
            "leading indices",
        ),
        (
            vec!["preview", inp, "sources", "-o", out, "--percent", "0"],
            "--percent 0",
        ),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    assert!(!png.exists() && !jpg.exists(), "nothing written");
}
