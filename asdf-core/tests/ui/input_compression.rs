use asdf_core::AsdfType;

// an owned array does not remember the codec it was read with
#[derive(AsdfType)]
struct A {
    #[asdf(compression = "input")]
    a: ndarray::Array2<f32>,
    #[asdf(compression = "input")]
    b: Option<ndarray::ArrayD<u8>>,
    // fine: a lazy array keeps its block
    #[asdf(compression = "input")]
    c: asdf_core::convert::LazyArray<f32, ndarray::Ix1>,
    // fine: a named codec
    #[asdf(compression = "lz4")]
    d: ndarray::Array1<f64>,
}

fn main() {}
