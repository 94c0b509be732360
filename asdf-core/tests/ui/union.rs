use asdf_core::AsdfType;

#[derive(AsdfType)]
union U {
    a: u32,
    b: f32,
}

fn main() {}
