//! asdf-store's integration tests, one module per store, in one test program (4 programs
//! before, each linked asdf-core and object_store alone). Run one with a filter, e.g. `cargo
//! test -p asdfrs-store --test it http::`. The `s3` and `gcs` tests need `moto_server`, the
//! `azure` test Azurite (`.ci/run` installs both; see their modules); a server that cannot
//! start fails its test. The helpers stay in `tests/support/`, which asdftool's tests include
//! too.

#[path = "../support/regions.rs"]
mod regions;
#[path = "../support/mod.rs"]
mod support;
#[path = "../support/uploads.rs"]
mod uploads;

mod azure;
mod gcs;
mod http;
mod s3;
