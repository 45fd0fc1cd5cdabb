#!/usr/bin/env bash
# Builds the fallback Bigtable emulator offline from Debian packages: golang-go and
# golang-google-cloud-dev (cloud.google.com/go/bigtable/bttest and its dependencies under
# /usr/share/gocode). GOPATH mode, no network. Output: .cache/bigtable-emulator/btemu
# (git-ignored); rebuilt only when scripts/bigtable-emulator.go or the Go toolchain
# changed. Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
out_dir="$root/.cache/bigtable-emulator"
bin="$out_dir/btemu"
src="$root/scripts/bigtable-emulator.go"

command -v go >/dev/null || { echo "build-bigtable-emulator: go not found (apt-get install golang-go golang-google-cloud-dev)" >&2; exit 1; }
[ -d /usr/share/gocode/src/cloud.google.com/go/bigtable/bttest ] ||
  { echo "build-bigtable-emulator: bttest not found (apt-get install golang-google-cloud-dev)" >&2; exit 1; }

stamp="$(sha256sum "$src" | cut -c1-16)-$(go version | tr -c 'a-zA-Z0-9.\n' '_')"
if [ -x "$bin" ] && [ "$(cat "$out_dir/stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$out_dir"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/btemu"
cp "$src" "$work/src/btemu/main.go"
(
  cd "$work/src/btemu"
  GO111MODULE=off GOPATH="$work:/usr/share/gocode" GOPROXY=off CGO_ENABLED=0 \
    GOCACHE="$out_dir/gocache" go build -trimpath -ldflags='-s -w' -o "$bin.tmp" .
) >&2
mv "$bin.tmp" "$bin"
echo "$stamp" > "$out_dir/stamp"
echo "$bin"
