//! Runnable examples for asdf-rs: `cargo run -p asdf-examples --example read_observation`.
//! The data they read lives in `examples/data/`.

/// Path of the example observation file shipped with the repository.
pub fn observation_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/observation.asdf")
}

/// The typed data product of the `typed_observation` and `keep_unknown` examples.
pub mod typed {
    use asdf_core::convert::Extra;
    use asdf_core::AsdfType;
    use ndarray::Array2;

    /// The URI of the example's own schema (`examples/schemas/observation-1.0.0.yaml`).
    pub const OBSERVATION_SCHEMA_URI: &str = "asdf://example.org/schemas/observation-1.0.0";

    /// The example's own tag.
    pub const OBSERVATION_TAG: &str = "asdf://example.org/tags/observation-1.0.0";

    /// Registers the example schema and binds the observation tag to it, so every tree
    /// holding an observation is validated against it.
    pub fn register_schema() -> Result<(), asdf_core::schema::SchemaError> {
        asdf_core::schema::register_schema(
            OBSERVATION_SCHEMA_URI,
            include_str!("schemas/observation-1.0.0.yaml"),
        )?;
        asdf_core::schema::register_tag(OBSERVATION_TAG, OBSERVATION_SCHEMA_URI);
        Ok(())
    }

    /// An observation: metadata, a science image, its error array and a bad-pixel mask.
    /// The images are zlib-compressed blocks; files written by any `observation-1.x`
    /// version are read.
    #[derive(AsdfType, Debug, Clone, PartialEq)]
    #[asdf(
        tag = "asdf://example.org/tags/observation-1.0.0",
        tag_pattern = "asdf://example.org/tags/observation-1.*",
        schema = "asdf://example.org/schemas/observation-1.0.0"
    )]
    pub struct Observation {
        /// What was observed and how.
        pub meta: Exposure,
        /// The science image.
        #[asdf(compression = "zlib")]
        pub sci: Array2<f32>,
        /// One-sigma errors of `sci`.
        #[asdf(compression = "zlib")]
        pub err: Array2<f32>,
        /// True where a pixel is not to be used.
        #[asdf(compression = "zlib")]
        pub mask: Array2<bool>,
    }

    /// Observation metadata.
    #[derive(AsdfType, Debug, Clone, PartialEq)]
    pub struct Exposure {
        /// Telescope name.
        pub telescope: String,
        /// Instrument name.
        pub instrument: String,
        /// Exposure duration in seconds.
        pub exposure_time: f64,
        /// Filter, when the instrument has one (left out of the file when `None`).
        pub filter: Option<String>,
    }

    /// The part of `examples/data/observation.asdf` (written by python asdf) that a program
    /// cares about. Everything else lands in `rest` and is written back unchanged.
    #[derive(AsdfType, Debug, Clone, PartialEq)]
    pub struct PartialProduct {
        /// Metadata, of which only the telescope is modelled.
        pub meta: PartialMeta,
        /// The science image (stored zlib-compressed in the file; read as `f32`).
        pub sci: Array2<f32>,
        /// Every other key of the root, in order (arrays, tables, history...).
        #[asdf(extra)]
        pub rest: Extra,
    }

    /// Metadata with one modelled key.
    #[derive(AsdfType, Debug, Clone, PartialEq)]
    pub struct PartialMeta {
        /// Telescope name.
        pub telescope: String,
        /// Every other metadata key.
        #[asdf(extra)]
        pub rest: Extra,
    }
}

/// The README's code, compiled (and run where it is not `no_run`) as doctests, so that it
/// stays true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
