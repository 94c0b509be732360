use asdf_core::AsdfType;

#[derive(AsdfType)]
struct A {
    #[asdf(compression = "gzip")]
    a: Vec<f64>,
    #[asdf(storage = "cloud")]
    b: Vec<f64>,
    #[asdf(compression = "ZSTD", storage = "internal")]
    c: Vec<f64>,
}

fn main() {}
