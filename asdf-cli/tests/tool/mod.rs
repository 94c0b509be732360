//! What the asdftool integration tests share: running the built binary, its output as
//! text, and scratch folders that are removed when the test ends (passing or not).

#![allow(dead_code)]

use std::ffi::OsStr;
use std::process::{Command, Output};

/// Runs the `asdftool` built for these tests with `args`.
pub fn asdftool<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_asdftool"))
        .args(args)
        .output()
        .expect("run asdftool")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Standard output of a run that must have succeeded (exit status 0; else the test fails
/// showing standard error).
pub fn ok(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
    stdout(o)
}
