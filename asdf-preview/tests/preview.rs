//! asdf-preview against astropy and as a person would check its pictures: the limits of
//! zscale, min/max and percentile equal astropy's on the images of `tests/data` (made and
//! measured by `tests/data/generate.py` in the FITS oracle venv); PNGs decoded back (size,
//! non-blank, bad pixels where the NaNs and the mask are, row 0 at the bottom); SVG plots
//! parsed back with their labels; errors for what cannot be drawn.

use std::path::PathBuf;

use asdf_core::AsdfFile;
use asdf_preview::{
    image_limits, render_array, Colormap, Format, Interval, PreviewError, PreviewOptions,
};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn images() -> AsdfFile {
    AsdfFile::open(data("images.asdf")).expect("tests/data/images.asdf opens")
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(data("expected.json")).expect("expected.json");
    serde_json::from_str(&text).expect("expected.json parses")
}

fn opts(interval: Interval) -> PreviewOptions {
    let mut o = PreviewOptions::default();
    o.interval = interval;
    o
}

/// Within 1e-6 relative (1e-12 absolute about zero).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1e-6)
}

/// Decoded PNG: (width, height, RGB rows top first); a paletted image's indices expanded to
/// their colours.
fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
    dec.set_transformations(png::Transformations::EXPAND);
    let mut reader = dec.read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a PNG frame");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// A paletted PNG as it is stored: (width, height, palette, indices top row first).
fn indexed(png_bytes: &[u8]) -> (u32, u32, Vec<[u8; 3]>, Vec<u8>) {
    let mut dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
    dec.set_transformations(png::Transformations::IDENTITY);
    let mut reader = dec.read_info().expect("a PNG header");
    let palette: Vec<[u8; 3]> = reader
        .info()
        .palette
        .as_ref()
        .expect("a palette")
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a PNG frame");
    assert_eq!(info.color_type, png::ColorType::Indexed);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    assert_eq!(buf.len(), (info.width * info.height) as usize);
    (info.width, info.height, palette, buf)
}

fn pixel(img: &(u32, u32, Vec<u8>), x: u32, y_from_top: u32) -> [u8; 3] {
    let i = ((y_from_top * img.0 + x) * 3) as usize;
    [img.2[i], img.2[i + 1], img.2[i + 2]]
}

#[test]
fn limits_equal_astropys_on_every_test_image() {
    let file = images();
    let exp = expected();
    let images = exp["images"].as_object().expect("images");
    assert_eq!(images.len(), 9);
    let mut checked = 0;
    for (name, limits) in images {
        // `cube[2]`: plane 2 of /cube
        let (path, plane) = match name.split_once('[') {
            Some((p, rest)) => (
                p,
                vec![rest.trim_end_matches(']').parse::<usize>().unwrap()],
            ),
            None => (name.as_str(), vec![]),
        };
        for (key, interval) in [
            ("zscale", Interval::default()),
            ("minmax", Interval::MinMax),
            ("percent99.5", Interval::Percent(99.5)),
        ] {
            let mut o = opts(interval);
            o.slice = plane.clone();
            let got = image_limits(&file, &format!("/{path}"), &o)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .unwrap_or_else(|| panic!("{name}: no limits"));
            let want = (
                limits[key][0].as_f64().unwrap(),
                limits[key][1].as_f64().unwrap(),
            );
            assert!(
                close(got.0, want.0) && close(got.1, want.1),
                "{name} {key}: ours {got:?}, astropy's {want:?}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 27);
}

#[test]
fn the_zscale_of_the_sources_image_is_not_its_range() {
    // the test must be able to fail: zscale clips the stars and hot pixels
    let file = images();
    let z = image_limits(&file, "/sources", &PreviewOptions::default())
        .unwrap()
        .unwrap();
    let m = image_limits(&file, "/sources", &opts(Interval::MinMax))
        .unwrap()
        .unwrap();
    assert!(z.1 < m.1 / 100.0, "zscale {z:?} against min/max {m:?}");
}

#[test]
fn png_of_an_image_has_its_size_and_is_not_blank() {
    let file = images();
    let png = render_array(&file, "/sources", &PreviewOptions::default(), Format::Png).unwrap();
    let img = decode(&png);
    // 300 rows of 200
    assert_eq!((img.0, img.1), (200, 300));
    let mut levels: Vec<u8> = img.2.chunks(3).map(|p| p[0]).collect();
    levels.sort_unstable();
    levels.dedup();
    assert!(levels.len() > 100, "only {} grey levels", levels.len());
    // grey: every pixel has r == g == b (no bad pixel in this image)
    assert!(img.2.chunks(3).all(|p| p[0] == p[1] && p[1] == p[2]));
}

#[test]
fn nan_and_infinite_pixels_are_in_the_bad_colour_where_they_are() {
    let file = images();
    let png = render_array(&file, "/nans", &PreviewOptions::default(), Format::Png).unwrap();
    let img = decode(&png);
    assert_eq!((img.0, img.1), (170, 150));
    let red = Colormap::Grey.bad();
    // array row r is image row 149 - r (origin lower left)
    let at = |row: u32, col: u32| pixel(&img, col, 149 - row);
    for col in [0, 50, 169] {
        for row in 10..14 {
            assert_eq!(at(row, col), red, "NaN row {row} col {col}");
        }
    }
    assert_eq!(at(90, 45), red, "the NaN blob");
    assert_eq!(at(5, 5), red, "+inf");
    assert_eq!(at(140, 160), red, "-inf");
    // everything else is grey
    let bad = img.2.chunks(3).filter(|p| *p == red).count();
    assert_eq!(bad, 4 * 170 + 20 * 30 + 2);
    assert_ne!(at(50, 100), red);
}

#[test]
fn masked_pixels_are_bad_and_do_not_move_the_limits() {
    let file = images();
    let img =
        decode(&render_array(&file, "/masked", &PreviewOptions::default(), Format::Png).unwrap());
    let red = Colormap::Grey.bad();
    // mask[40:60, 20:80]
    assert_eq!(pixel(&img, 20, 99 - 40), red);
    assert_eq!(pixel(&img, 79, 99 - 59), red);
    assert_ne!(pixel(&img, 19, 99 - 40), red);
    assert_eq!(img.2.chunks(3).filter(|p| *p == red).count(), 20 * 60);
}

#[test]
fn origin_is_lower_left() {
    // tiny = [[1, 2], [3, 40]]: min/max and grey put 1 (row 0, col 0) black at the bottom
    // left and 40 (row 1, col 1) white at the top right
    let file = images();
    let img = decode(&render_array(&file, "/tiny", &opts(Interval::MinMax), Format::Png).unwrap());
    assert_eq!((img.0, img.1), (2, 2));
    assert_eq!(pixel(&img, 0, 1), [0, 0, 0]);
    assert_eq!(pixel(&img, 1, 0), [255, 255, 255]);
}

#[test]
fn large_images_are_reduced_to_max_size() {
    let file = images();
    let mut o = PreviewOptions::default();
    o.max_size = 100;
    let img = decode(&render_array(&file, "/sources", &o, Format::Png).unwrap());
    // 300 x 200 by blocks of 3: 100 x 67
    assert_eq!((img.0, img.1), (67, 100));
}

#[test]
fn planes_of_a_cube_and_slices_that_do_not_fit() {
    let file = images();
    let exp = expected();
    let mut o = PreviewOptions::default();
    o.slice = vec![2];
    let z = image_limits(&file, "/cube", &o).unwrap().unwrap();
    assert!(close(
        z.0,
        exp["images"]["cube[2]"]["zscale"][0].as_f64().unwrap()
    ));
    // the default is plane 0
    let z0 = image_limits(&file, "/cube", &PreviewOptions::default())
        .unwrap()
        .unwrap();
    assert!(close(
        z0.1,
        exp["images"]["cube[0]"]["zscale"][1].as_f64().unwrap()
    ));
    o.slice = vec![3];
    let e = render_array(&file, "/cube", &o, Format::Png).unwrap_err();
    assert!(matches!(e, PreviewError::BadOption { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "/cube: --slice index 3 is beyond axis 0 of length 3"
    );
    o.slice = vec![0, 0];
    let e = render_array(&file, "/cube", &o, Format::Png).unwrap_err();
    assert!(e.to_string().contains("at most 1 indices"), "{e}");
    o.slice = vec![0];
    let e = render_array(&file, "/sources", &o, Format::Png).unwrap_err();
    assert!(e.to_string().contains("3 or more dimensions"), "{e}");
}

/// The texts of an SVG document's `<text>` elements, parsed as XML.
fn svg_texts(svg: &[u8]) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(svg);
    let mut texts = Vec::new();
    let mut in_text = false;
    let mut root = None;
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                root.get_or_insert(name.clone());
                in_text = name == "text";
            }
            Event::Text(t) if in_text => {
                texts.push(t.decode().unwrap().into_owned());
            }
            Event::GeneralRef(r) if in_text => {
                let s = match r.as_ref() {
                    b"amp" => "&",
                    b"lt" => "<",
                    b"gt" => ">",
                    _ => "?",
                };
                if let Some(last) = texts.last_mut() {
                    last.push_str(s);
                }
            }
            Event::End(_) => in_text = false,
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(root.as_deref(), Some("svg"));
    texts
}

#[test]
fn svg_plot_of_a_spectrum_has_its_labels_and_unit() {
    let file = images();
    let unit = expected()["spectrum_unit"].as_str().unwrap().to_string();
    let svg = render_array(&file, "/spectrum", &PreviewOptions::default(), Format::Svg).unwrap();
    let texts = svg_texts(&svg);
    assert!(texts.contains(&"/spectrum/value".to_string()), "{texts:?}");
    assert!(texts.contains(&"index".to_string()), "{texts:?}");
    assert!(texts.contains(&format!("float64 ({unit})")), "{texts:?}");
    // 500 points: tick labels up to 500 on the index axis
    assert!(texts.contains(&"500".to_string()), "{texts:?}");
    let text = String::from_utf8(svg).unwrap();
    assert_eq!(text.matches("<polyline").count(), 1);
}

#[test]
fn png_plot_of_a_spectrum_draws_its_line() {
    let file = images();
    let img =
        decode(&render_array(&file, "/spectrum", &PreviewOptions::default(), Format::Png).unwrap());
    assert_eq!((img.0, img.1), (640, 400));
    let line = img.2.chunks(3).filter(|p| *p == [31, 119, 180]).count();
    assert!(line > 500, "{line} pixels of the line");
    let black = img.2.chunks(3).filter(|p| *p == [0, 0, 0]).count();
    assert!(black > 1000, "{black} black pixels (axes and labels)");
}

#[test]
fn table_columns_plot_against_each_other() {
    let file = images();
    let mut o = PreviewOptions::default();
    o.x = Some("wavelength".into());
    o.y = Some("flux".into());
    let texts = svg_texts(&render_array(&file, "/table", &o, Format::Svg).unwrap());
    assert!(
        texts.contains(&"wavelength (float64)".to_string()),
        "{texts:?}"
    );
    assert!(texts.contains(&"flux (float32)".to_string()), "{texts:?}");
    o.y = Some("name".into());
    let e = render_array(&file, "/table", &o, Format::Svg).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/table: no numeric column \"name\" (numeric columns: wavelength, flux)"
    );
    // an image of a table is refused
    assert!(matches!(
        image_limits(&file, "/table", &PreviewOptions::default()),
        Err(PreviewError::NotDrawable { .. })
    ));
}

#[test]
fn what_cannot_be_drawn_is_one_line_naming_it() {
    let file = images();
    let o = PreviewOptions::default();
    let e = render_array(&file, "/names", &o, Format::Png).unwrap_err();
    assert!(matches!(e, PreviewError::NotDrawable { .. }), "{e}");
    assert!(
        e.to_string().starts_with("/names: cannot draw an array of"),
        "{e}"
    );
    let e = render_array(&file, "/nothing", &o, Format::Png).unwrap_err();
    assert_eq!(e.to_string(), "no node at /nothing");
    let e = render_array(&file, "/asdf_library", &o, Format::Png).unwrap_err();
    assert!(matches!(e, PreviewError::NotAnArray { .. }), "{e}");
    for e in [
        render_array(&file, "/names", &o, Format::Svg).unwrap_err(),
        render_array(&file, "", &o, Format::Png).unwrap_err(),
    ] {
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}

#[test]
fn svg_of_an_image_embeds_the_png() {
    let file = images();
    let svg = render_array(&file, "tiny", &opts(Interval::MinMax), Format::Svg).unwrap();
    let text = String::from_utf8(svg.clone()).unwrap();
    assert!(text.contains("data:image/png;base64,"));
    assert!(svg_texts(&svg).is_empty());
}

#[test]
fn planes_over_the_stride_threshold_are_read_strided() {
    // sources is 300 x 200 float32 (240 000 bytes): above a threshold of 100 000 bytes and
    // at most 100 pixels a side, every 3rd row and column is read, not averaged
    let file = images();
    let whole = file.array::<f32>("/sources").unwrap();
    let strided: Vec<f64> = whole
        .outer_iter()
        .step_by(3)
        .flat_map(|row| {
            row.iter()
                .step_by(3)
                .map(|v| f64::from(*v))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(strided.len(), 100 * 67);
    let mut o = opts(Interval::MinMax);
    o.max_size = 100;
    o.stride_above_bytes = 100_000;
    let lo = strided.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = strided.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(image_limits(&file, "/sources", &o).unwrap(), Some((lo, hi)));
    // zscale of the strided values, as the image is drawn with
    o.interval = Interval::default();
    assert_eq!(
        image_limits(&file, "/sources", &o).unwrap(),
        Interval::default().limits(&strided)
    );
    let img = decode(&render_array(&file, "/sources", &o, Format::Png).unwrap());
    assert_eq!((img.0, img.1), (67, 100));
    // block averaging (the default threshold) gives other limits
    o.stride_above_bytes = PreviewOptions::default().stride_above_bytes;
    o.interval = Interval::MinMax;
    assert_ne!(image_limits(&file, "/sources", &o).unwrap(), Some((lo, hi)));
}

#[test]
fn images_are_paletted_pngs_with_the_bad_colour_only_when_needed() {
    let file = images();
    // no bad pixel: 256 grey levels, index k is grey k, and no red
    let png = render_array(&file, "/sources", &PreviewOptions::default(), Format::Png).unwrap();
    let (w, h, palette, idx) = indexed(&png);
    assert_eq!((w, h), (200, 300));
    assert_eq!(palette.len(), 256);
    for (k, c) in palette.iter().enumerate() {
        assert_eq!(*c, [k as u8; 3]);
    }
    let mut used = idx.clone();
    used.sort_unstable();
    used.dedup();
    assert!(used.len() > 100, "{} levels used", used.len());
    // the expanded image is the palette looked up
    let rgb = decode(&png);
    for (i, k) in idx.iter().enumerate() {
        assert_eq!(&rgb.2[i * 3..i * 3 + 3], &palette[*k as usize]);
    }
    // NaN and infinities: 255 levels and the bad colour last, exactly where they are
    let png = render_array(&file, "/nans", &PreviewOptions::default(), Format::Png).unwrap();
    let (w, h, palette, idx) = indexed(&png);
    assert_eq!((w, h), (170, 150));
    assert_eq!(palette.len(), 256);
    assert_eq!(palette[255], Colormap::Grey.bad());
    assert_eq!(palette[254], [255, 255, 255]);
    assert!(palette[..255].iter().all(|c| *c != Colormap::Grey.bad()));
    let bad = |row: usize, col: usize| {
        (10..14).contains(&row)
            || ((80..100).contains(&row) && (30..60).contains(&col))
            || (row, col) == (5, 5)
            || (row, col) == (140, 160)
    };
    for (i, k) in idx.iter().enumerate() {
        // image row y is array row 149 - y
        let (row, col) = (149 - i / 170, i % 170);
        assert_eq!(*k == 255, bad(row, col), "row {row} col {col}: index {k}");
    }
    // other colour maps: their own bad colour last
    let mut o = PreviewOptions::default();
    o.colormap = Colormap::Inferno;
    let (_, _, palette, idx) = indexed(&render_array(&file, "/nans", &o, Format::Png).unwrap());
    assert_eq!(palette[255], Colormap::Inferno.bad());
    assert_eq!(palette[0], Colormap::Inferno.color(0.0));
    assert_eq!(idx[(149 - 12) * 170], 255);
}

#[test]
fn the_limits_of_a_reduced_image_are_those_of_the_whole_plane() {
    // astropy takes the limits of the whole image; a preview reduced by block averaging
    // draws with the same ones
    let file = images();
    let exp = expected();
    for (key, interval) in [
        ("zscale", Interval::default()),
        ("minmax", Interval::MinMax),
        ("percent99.5", Interval::Percent(99.5)),
    ] {
        for name in ["sources", "nans", "masked"] {
            let mut o = opts(interval);
            o.max_size = 30;
            let got = image_limits(&file, &format!("/{name}"), &o)
                .unwrap()
                .unwrap();
            let want = &exp["images"][name][key];
            let want = (want[0].as_f64().unwrap(), want[1].as_f64().unwrap());
            assert!(
                close(got.0, want.0) && close(got.1, want.1),
                "{name} {key} at 30 px: ours {got:?}, astropy's {want:?}"
            );
        }
    }
}

/// A file in memory holding `sci`: `rows` x `cols` float32 values in big-endian order,
/// compressed with zlib when asked.
fn big_file(values: &[f32], rows: usize, cols: usize, zlib: bool) -> AsdfFile {
    use asdf_core::array::{
        ArrayOptions, ByteOrder, CompressionChoice, DType, ScalarType, WriteArray,
    };
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    let dtype = DType::Scalar {
        ty: ScalarType::Float32,
        byteorder: ByteOrder::Big,
    };
    let arr = WriteArray::from_bytes(dtype, vec![rows, cols], bytes.into()).unwrap();
    let mut w = asdf_core::Writer::new(asdf_core::WriteOptions::default());
    let mut opts = ArrayOptions::default();
    if zlib {
        opts.compression = Some(CompressionChoice::Codec(
            asdf_core::array::Compression::Zlib,
        ));
    }
    let root = asdf_core::tree!({"sci": w.add_array_with(arr, opts)});
    let bytes = w.write_to_vec(&root).unwrap();
    AsdfFile::options().open_bytes(bytes, ".").unwrap()
}

#[test]
fn a_large_plane_read_in_bands_by_threads_gives_the_whole_planes_limits_and_pixels() {
    // 1210 x 1100 (over a million pixels: read in bands, by several threads where the
    // machine has them), big-endian; NaNs, infinities and an 11 x 11 block of NaN
    let (rows, cols) = (1210usize, 1100usize);
    let mut state = 12345u64;
    let mut values: Vec<f32> = (0..rows * cols)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            100.0 + ((state >> 40) as f32 / (1u64 << 24) as f32) * 20.0
        })
        .collect();
    values[7 * cols + 3] = f32::NAN;
    values[600 * cols + 1099] = f32::INFINITY;
    values[1209 * cols] = f32::NEG_INFINITY;
    for r in 220..231 {
        for c in 550..561 {
            values[r * cols + c] = f32::NAN;
        }
    }
    values[1000 * cols + 10] = 5000.0; // a star
    let good: Vec<f64> = values
        .iter()
        .filter(|v| v.is_finite())
        .map(|v| f64::from(*v))
        .collect();
    for zlib in [false, true] {
        let file = big_file(&values, rows, cols, zlib);
        for interval in [
            Interval::default(),
            Interval::MinMax,
            Interval::Percent(99.0),
        ] {
            let mut o = opts(interval);
            o.max_size = 100;
            assert_eq!(
                image_limits(&file, "/sci", &o).unwrap(),
                interval.limits(&good),
                "{interval:?} zlib {zlib}"
            );
        }
        // reduced by 11: 100 x 110, the NaN block is one bad pixel (block row 20, col 50)
        let mut o = PreviewOptions::default();
        o.max_size = 110;
        let (w, h, palette, idx) = indexed(&render_array(&file, "/sci", &o, Format::Png).unwrap());
        assert_eq!((w, h), (100, 110));
        assert_eq!(palette[255], Colormap::Grey.bad());
        let bad: Vec<usize> = (0..idx.len()).filter(|i| idx[*i] == 255).collect();
        assert_eq!(bad, vec![(109 - 20) * 100 + 50]);
        // at full size: every NaN and infinity in the bad colour, nothing else
        o.max_size = 2000;
        let png = render_array(&file, "/sci", &o, Format::Png).unwrap();
        let (w, h, _, idx) = indexed(&png);
        assert_eq!((w as usize, h as usize), (cols, rows));
        for (i, k) in idx.iter().enumerate() {
            let (row, col) = (rows - 1 - i / cols, i % cols);
            assert_eq!(
                *k == 255,
                !values[row * cols + col].is_finite(),
                "row {row} col {col}"
            );
        }
        // the star is white, the noise grey
        let (lo, hi) = image_limits(&file, "/sci", &o).unwrap().unwrap();
        assert!(lo > 99.0 && hi < 121.0, "{lo} {hi}");
        assert_eq!(idx[(rows - 1 - 1000) * cols + 10], 254);
        let decoded = decode(&png);
        assert_eq!(
            pixel(&decoded, 10, (rows - 1 - 1000) as u32),
            [255, 255, 255]
        );
    }
}

#[test]
fn an_inline_array_is_drawn_from_memory() {
    use asdf_core::array::{ArrayOptions, ByteOrder, DType, ScalarType, Storage, WriteArray};
    // [[1, 2, 3], [4, NaN, 6]] as nested lists in the tree
    let values = [1.0f64, 2.0, 3.0, 4.0, f64::NAN, 6.0];
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let dtype = DType::Scalar {
        ty: ScalarType::Float64,
        byteorder: ByteOrder::Little,
    };
    let arr = WriteArray::from_bytes(dtype, vec![2, 3], bytes.into()).unwrap();
    let mut w = asdf_core::Writer::new(asdf_core::WriteOptions::default());
    let ao = ArrayOptions {
        storage: Some(Storage::Inline),
        ..ArrayOptions::default()
    };
    let root = asdf_core::tree!({"small": w.add_array_with(arr, ao)});
    let bytes = w.write_to_vec(&root).unwrap();
    assert!(
        String::from_utf8_lossy(&bytes).contains("data:"),
        "stored inline"
    );
    let file = AsdfFile::options().open_bytes(bytes, ".").unwrap();
    let o = opts(Interval::MinMax);
    assert_eq!(image_limits(&file, "/small", &o).unwrap(), Some((1.0, 6.0)));
    let img = decode(&render_array(&file, "/small", &o, Format::Png).unwrap());
    assert_eq!((img.0, img.1), (3, 2));
    // row 1 on top: 4, NaN, 6; row 0 below: 1 (black), 2, 3
    assert_eq!(pixel(&img, 1, 0), Colormap::Grey.bad());
    assert_eq!(pixel(&img, 0, 1), [0, 0, 0]);
    assert_eq!(pixel(&img, 2, 0), [255, 255, 255]);
}
