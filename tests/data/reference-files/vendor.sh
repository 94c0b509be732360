#!/usr/bin/env bash
# Re-vendors (or, with --check, verifies) the ASDF reference files in this folder from the pinned
# asdf-standard source distribution on the python package index, checked against its sha256.
#
#   bash tests/data/reference-files/vendor.sh           # replace the vendored copy
#   bash tests/data/reference-files/vendor.sh --check   # exit 1 if the copy differs
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="1.4.0"
sha256="0c5f121d0db87cb7780d61a087f392c5104ce208016cfb2a130c9cea912cfddc"
python="${PYTHON:-python3}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "asdf-standard==$version --hash=sha256:$sha256" > "$work/req.txt"
"$python" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
  --require-hashes -r "$work/req.txt" -d "$work"
tar -xzf "$work/asdf_standard-$version.tar.gz" -C "$work"
src="$work/asdf_standard-$version/reference_files"

if [ "${1:-}" = "--check" ]; then
  status=0
  for f in $(cd "$src" && find . -name '*.asdf' -o -name '*.yaml' | sort); do
    cmp -s "$src/$f" "$here/$f" || { echo "differs from asdf-standard $version: $f"; status=1; }
  done
  upstream=$(cd "$src" && find . -name '*.asdf' -o -name '*.yaml' | wc -l)
  ours=$(cd "$here" && find . -name '*.asdf' -o -name '*.yaml' | wc -l)
  [ "$upstream" = "$ours" ] || { echo "$ours files here, $upstream upstream"; status=1; }
  [ "$status" = 0 ] && echo "reference files: $ours files, identical to asdf-standard $version"
  exit "$status"
fi

for d in "$here"/1.*; do rm -f "$d"/*.asdf "$d"/*.yaml; done
for d in "$src"/1.*; do
  v="$(basename "$d")"
  mkdir -p "$here/$v"
  cp "$d"/*.asdf "$d"/*.yaml "$here/$v/"
done
cp "$work/asdf_standard-$version/LICENSE" "$here/LICENSE"
echo "vendored $(cd "$here" && find . -name '*.asdf' -o -name '*.yaml' | wc -l) files from asdf-standard $version"
echo "regenerate their sidecars: .venv-oracle/bin/python tests/oracle/canonical.py sidecars --write tests/data/reference-files"
