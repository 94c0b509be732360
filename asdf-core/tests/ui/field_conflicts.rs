use asdf_core::convert::Extra;
use asdf_core::AsdfType;

#[derive(AsdfType)]
struct Inner {
    x: u32,
}

#[derive(AsdfType)]
struct A {
    #[asdf(flatten, rename = "inner")]
    a: Inner,
    #[asdf(skip, rename = "b", compression = "zlib", with = "m")]
    b: u32,
    #[asdf(flatten, default, keep_null)]
    c: Inner,
}

#[derive(AsdfType)]
struct B {
    #[asdf(extra)]
    rest: Extra,
    #[asdf(extra)]
    more: Extra,
    #[asdf(rename = "x")]
    x: u32,
    y: u32,
    #[asdf(rename = "y")]
    z: u32,
}

#[derive(AsdfType)]
struct C {
    #[asdf(flatten)]
    inner: Inner,
    #[asdf(extra, default)]
    rest: Extra,
}

#[derive(AsdfType)]
struct D(#[asdf(rename = "a")] u32, #[asdf(skip)] u32, #[asdf(compression = "zlib")] Vec<f64>);

fn main() {}
