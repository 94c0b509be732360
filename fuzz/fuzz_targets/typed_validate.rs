//! Fuzz target: open arbitrary bytes as an ASDF file, validate its tree against the bundled
//! schemas, and read it into typed values (generic containers, complex numbers, big
//! integers, arrays). Errors are fine; panics, aborts, hangs and huge allocations are bugs.
#![no_main]

use std::collections::BTreeMap;

use asdf_core::convert::{LazyArray, OrderedMap};
use asdf_core::Node;
use libfuzzer_sys::fuzz_target;
use num_complex::Complex;

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = asdf_core::AsdfFile::from_bytes(data.to_vec()) {
        let _ = file.validate();
        let _ = file.read_as::<OrderedMap<Node>>("/");
        let _ = file.read_as::<BTreeMap<String, Vec<Option<i128>>>>("/");
        let _ = file.read_as::<BTreeMap<String, Complex<f64>>>("/");
        let _ = file.read_as::<BTreeMap<String, u128>>("/");
        for (path, _) in file.arrays() {
            let _ = file.read_as::<ndarray::ArrayD<f64>>(&path);
            if let Ok(lazy) = file.read_as::<LazyArray<u8, ndarray::IxDyn>>(&path) {
                let _ = lazy.load(&file);
            }
        }
        let mut w = asdf_core::write::Writer::from_file(&file, Default::default());
        if let Ok(root) = w.add_value(file.tree()) {
            let _ = w.write_to_vec(&root);
        }
    }
});
