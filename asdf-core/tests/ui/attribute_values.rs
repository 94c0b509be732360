use asdf_core::AsdfType;

#[derive(AsdfType)]
#[asdf(tag = 5, schema)]
struct A {
    #[asdf(skip = "yes")]
    a: u32,
    #[asdf(rename)]
    b: u32,
    #[asdf(default = "not a path!")]
    c: u32,
    #[asdf(rename = "d", rename = "e")]
    d: u32,
    #[asdf(flatten(x))]
    f: B,
    #[asdf(with = "not a module")]
    g: u32,
}

#[derive(AsdfType)]
struct B {}

fn main() {}
