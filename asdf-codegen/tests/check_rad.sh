#!/usr/bin/env bash
# Generates Rust types with `asdftool codegen` for the two real schema sets and type-checks
# them in a scratch crate outside the workspace: any error or warning fails (the scratch crate
# says `#![deny(warnings)]`; RUSTFLAGS are left as they are so the target folder's builds are
# reused).
#
# - rad, the Roman Attribute Dictionary (pinned in tests/rad-requirements.txt, installed into
#   the oracle venv without its dependencies when missing). Without options, the generated
#   code must equal the committed asdf-codegen/tests/generated/rad.rs (ASDF_CODEGEN_BLESS=1
#   rewrites it), which examples/roman_image.rs compiles with `#![deny(warnings)]` in the test build:
#   the scratch crate then leaves rad out. With options, rad is type-checked here.
# - JWST: stdatamodels' datamodel schemas (stdatamodels/jwst/datamodels/schemas, from the FITS
#   oracle venv, tests/oracle-fits-requirements.txt), type-checked here.
#
# Prints how many schemas were mapped, how many warnings the generator gave, and how long
# each step took.
#
#   asdf-codegen/tests/check_rad.sh [--all-versions] [--lazy-arrays]
#
# (the options are asdftool codegen's; ORACLE_VENV=... and FITS_VENV=... for other venvs,
# ASDFTOOL=... for a built asdftool)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${ORACLE_VENV:-$repo/.venv-oracle}"
fvenv="${FITS_VENV:-$repo/.venv-fits}"
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac

want="$(sed -n 's/^rad==\([^ ]*\).*/\1/p' "$repo/tests/rad-requirements.txt")"
have="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("rad"))' 2>/dev/null || true)"
if [ "$have" != "$want" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes \
    -r "$repo/tests/rad-requirements.txt"
fi
rad_dir="$("$venv/bin/python" -c 'import importlib.resources as r, rad.resources as m; print(r.files(m))')"
rad_version="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("rad"))')"
# found without importing stdatamodels (which imports astropy)
jwst_dir="$("$fvenv/bin/python" -c 'import importlib.util as u; print(u.find_spec("stdatamodels").submodule_search_locations[0])')/jwst/datamodels/schemas"
sdm_version="$("$fvenv/bin/python" -c 'import importlib.metadata as m; print(m.version("stdatamodels"))')"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src"

# the main workspace's dev profile for third-party crates (as fuzz/Cargo.toml), and its lock
# file, so the check reuses the target folder's builds of asdf-core and its dependencies
cat > "$scratch/Cargo.toml" <<TOML
[package]
name = "rad-codegen-check"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
asdf-core = { path = "$repo/asdf-core", package = "asdfrs-core" }
ndarray = "0.17"
num-complex = "0.4"
half = "2"
TOML
# the profiles of the main workspace, copied as .ci/publish-check copies them
awk '/^\[/ { keep = ($0 ~ /^\[profile[.]/) } keep' "$repo/Cargo.toml" >> "$scratch/Cargo.toml"
cp "$repo/Cargo.lock" "$scratch/Cargo.lock"
printf '%s\n' '//! Types generated from the rad package'"'"'s and stdatamodels'"'"' schemas.' '#![deny(warnings)]' 'pub mod jwst;' > "$scratch/src/lib.rs"

start=$(date +%s.%N)
# ASDFTOOL=PATH: an asdftool already built (.ci/run gives the test build's, which a build of
# asdfrs-cli alone, with its own features, would not reuse)
asdftool="${ASDFTOOL:-}"
if [ -z "$asdftool" ]; then
  (cd "$repo" && cargo build --quiet -p asdfrs-cli --bin asdftool --target-dir "$target")
  asdftool="$target/debug/asdftool"
fi
built=$(date +%s.%N)
summary="$("$asdftool" codegen "$@" "$rad_dir" -o "$scratch/src/rad.rs" 2> "$scratch/warnings.txt")"
jwst_summary="$("$asdftool" codegen "$@" "$jwst_dir" -o "$scratch/src/jwst.rs" 2> "$scratch/jwst-warnings.txt")"
generated=$(date +%s.%N)
for f in rad jwst; do
  rustfmt --check --edition 2021 "$scratch/src/$f.rs" > /dev/null || {
    echo "check_rad: the code generated from $f's schemas is not rustfmt-clean" >&2
    exit 1
  }
done
committed="$here/generated/rad.rs"
if [ "$#" -eq 0 ]; then
  if [ -n "${ASDF_CODEGEN_BLESS:-}" ]; then
    cp "$scratch/src/rad.rs" "$committed"
  fi
  if ! cmp -s "$scratch/src/rad.rs" "$committed"; then
    echo "check_rad: asdf-codegen/tests/generated/rad.rs differs from what asdftool codegen writes for rad $rad_version (ASDF_CODEGEN_BLESS=1 bash asdf-codegen/tests/check_rad.sh rewrites it)" >&2
    diff "$committed" "$scratch/src/rad.rs" | head -40 >&2 || true
    exit 1
  fi
  echo "rad: the generated code equals asdf-codegen/tests/generated/rad.rs (type-checked by the test build of examples/roman_image.rs)"
else
  echo 'pub mod rad;' >> "$scratch/src/lib.rs"
fi
cargo check --quiet --manifest-path "$scratch/Cargo.toml" --target-dir "$target" 2>&1 | tee "$scratch/check.txt"
status=${PIPESTATUS[0]}
checked=$(date +%s.%N)
# the scratch crate's own warnings are errors (deny(warnings)) and fail the check; a warning
# of a dependency (asdf-core built with its default features alone) is shown, not counted
if [ "$status" -ne 0 ] || grep -q '^warning: `rad-codegen-check`' "$scratch/check.txt"; then
  echo "check_rad: the code generated from rad $rad_version or stdatamodels $sdm_version does not type-check cleanly" >&2
  exit 1
fi
echo "rad $rad_version${*:+ ($*)}: $summary" | sed "s|$scratch/src/||"
echo "stdatamodels $sdm_version (JWST)${*:+ ($*)}: $jwst_summary" | sed "s|$scratch/src/||"
for f in warnings jwst-warnings; do
  echo "generator warnings by kind ($f.txt):"
  sed -E 's/^warning: [^#]*#[^:]*: //; s/(asdf:|tag:|http:)[^ ]*[^ :,]/URI/g' "$scratch/$f.txt" | sort | uniq -c | sort -rn
done
awk -v a="$start" -v b="$built" -v c="$generated" -v d="$checked" 'BEGIN {
  printf "times: asdftool build %.1f s, generation %.2f s, cargo check %.1f s\n", b - a, c - b, d - c
}'
