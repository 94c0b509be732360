use asdf_core::AsdfType;

#[derive(AsdfType)]
#[asdf(tag = "asdf://example.org/tags/a-1.0.0", version = "1.0.0")]
struct A {
    #[asdf(renamed = "b")]
    a: u32,
    #[asdf(skip, compresion = "zlib")]
    c: u32,
}

#[derive(AsdfType)]
#[asdf]
enum E {
    #[asdf(flatten)]
    X,
    #[asdf(tag = "asdf://example.org/tags/y-1.0.0", schema = "asdf://example.org/schemas/y-1.0.0", skip)]
    Y { y: u32 },
}

fn main() {}
