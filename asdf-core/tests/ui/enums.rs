use asdf_core::AsdfType;

#[derive(AsdfType)]
#[asdf(tag = "asdf://example.org/tags/e-1.0.0")]
enum E {
    #[asdf(tag = "asdf://example.org/tags/a-1.0.0")]
    A,
    B { x: u32 },
    C(u32, u32),
    #[asdf(rename = "d")]
    D(u32),
    #[asdf(rename = "A")]
    F,
}

#[derive(AsdfType)]
enum Empty {}

fn main() {}
