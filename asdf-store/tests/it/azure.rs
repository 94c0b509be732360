//! Reading and multipart writing of `az://` URLs against Azurite, the Azure Storage emulator
//! (npm package `azurite`, pinned in `tests/azurite/package-lock.json` and installed by
//! `.ci/run` with `npm ci`), started on loopback by the test and stopped after it; a server
//! that cannot start fails the test. `ASDF_AZURITE_BLOB` names another `azurite-blob`
//! program. object_store reaches the emulator through `AZURITE_BLOB_STORAGE_URL`, which this
//! test sets for its process (nextest runs each test in a process of its own; no other test
//! here reads it).

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use asdf_core::tree;
use asdf_core::write::{WriteOptions, Writer};
use asdf_store::{StoreError, StoreOptions};

use crate::regions;

struct Azurite {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Drop for Azurite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("azurite")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn start_azurite() -> Azurite {
    let program = std::env::var_os("ASDF_AZURITE_BLOB")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            here()
                .join("node_modules")
                .join(".bin")
                .join("azurite-blob")
        });
    let port = free_port();
    // Its workspace, removed on drop.
    let dir = std::env::temp_dir().join(format!("asdf-azurite-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let child = Command::new(&program)
        .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
        .args(["--disableTelemetry", "--silent", "--skipApiVersionCheck"])
        .arg("--location")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start {} ({e}); `bash .ci/run` installs it (npm ci in \
                 asdf-store/tests/azurite), or set ASDF_AZURITE_BLOB",
                program.display()
            )
        });
    let azurite = Azurite { child, port, dir };
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "azurite did not listen within 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    azurite
}

fn create_container(port: u16, name: &str) {
    let out = Command::new("node")
        .arg(here().join("create-container.js"))
        .args([port.to_string(), name.to_string()])
        .output()
        .expect("node, to create the container");
    assert!(
        out.status.success(),
        "creating container {name}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn az_write_multipart_then_read_and_failures() {
    let azurite = start_azurite();
    create_container(azurite.port, "data");
    std::env::set_var(
        "AZURITE_BLOB_STORAGE_URL",
        format!("http://127.0.0.1:{}", azurite.port),
    );
    let o = StoreOptions::new()
        .option("azure_storage_use_emulator", "true")
        .max_retries(1)
        .timeout(Duration::from_secs(20));

    // 20 MiB: three blocks of the upload (Put Block, then Put Block List).
    let a = ndarray::Array1::from_iter((0..(20 << 20) / 8).map(|i| i as f64));
    let mut w = Writer::new(WriteOptions::default());
    let root = tree!({"a": w.add_array(&a), "meta": {"telescope": "Roman"}});
    let want = w.write_to_vec(&root).unwrap();
    let url = "az://data/run/obs.asdf";
    let sent = asdf_store::write_to_url(&w, &root, url, &o).unwrap();
    assert_eq!(sent.bytes, want.len() as u64);
    assert_eq!(sent.parts, 3);

    let file = asdf_store::open_url_with(url, &o, &Default::default()).unwrap();
    assert_eq!(
        file.node("/meta/telescope").unwrap().as_str(),
        Some("Roman")
    );
    assert_eq!(file.array::<f64>("/a").unwrap(), a.into_dyn());
    let reader = asdf_store::StoreReader::open(url, &o).unwrap();
    let mut got = vec![0u8; want.len()];
    reader.read_at(&mut got, 0).unwrap();
    assert!(got == want);

    // A missing blob is a typed error.
    let err =
        asdf_store::open_url_with("az://data/none.asdf", &o, &Default::default()).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Store {
                source: object_store::Error::NotFound { .. },
                ..
            }
        ),
        "{err:?}"
    );

    // A write that fails midway leaves the blob as it was.
    let mut w = Writer::new(WriteOptions::default());
    let dtype = asdf_core::array::DType::scalar(
        asdf_core::array::ScalarType::UInt8,
        asdf_core::array::ByteOrder::Little,
    );
    let mut n = 0;
    let node = w.add_array_pieces(dtype, &[64 << 20], Default::default(), move || {
        n += 1;
        if n > 20 {
            return Err(std::io::Error::other("the source of the pieces failed"));
        }
        Ok(Some(vec![n as u8; 1 << 20]))
    });
    let err = asdf_store::write_to_url(&w, &tree!({"big": node}), url, &o).unwrap_err();
    assert!(matches!(err, StoreError::Write(_)), "{err:?}");
    let reader = asdf_store::StoreReader::open(url, &o).unwrap();
    assert_eq!(reader.meta().size, want.len() as u64);
    let mut got = vec![0u8; want.len()];
    reader.read_at(&mut got, 0).unwrap();
    assert!(got == want);

    // Region reads fetch only the cutout's rows, or its lz4 sub-block.
    regions::cutouts_fetch_only_their_rows_or_sub_blocks("az://data/regions/", &o);
}
