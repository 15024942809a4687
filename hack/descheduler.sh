#!/usr/bin/env bash
# Prints the path of a descheduler binary (sigs.k8s.io/descheduler, cmd/descheduler) for the bench's side-by-side
# rows, built from the Go module proxy into a cache outside the repo ($KUBE_REBALANCER_ASSETS_CACHE/../descheduler,
# default ~/.cache/kube-rebalancer/descheduler/<version>/descheduler). Neither its source nor the binary belongs in
# this repository.
#
#   bash hack/descheduler.sh            # the newest release the proxy lists (go list -m -versions)
#   bash hack/descheduler.sh v0.36.0    # an exact one
#
# It is built as its own module, as its Makefile does, so its go.mod's replace directives hold. Progress goes to
# stderr; stdout carries only the path. Exit 1 with one line on stderr when none can be had.
set -euo pipefail

fail() {
  echo "descheduler: $*" >&2
  exit 1
}

command -v go >/dev/null 2>&1 || fail "no Go toolchain to build the descheduler"
module=sigs.k8s.io/descheduler
if [ $# -ge 1 ]; then
  version="$1"
else
  version="$(cd / && go list -m -versions "$module" 2>/dev/null | tr ' ' '\n' | grep '^v[0-9]' | sort -V | tail -n 1)" ||
    true
  [ -n "$version" ] || fail "the Go module proxy lists no version of $module"
fi
base="${KUBE_REBALANCER_ASSETS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-rebalancer/k8s}/../descheduler/$version"
mkdir -p "$base"
base="$(cd "$base" && pwd)"
if [ -x "$base/descheduler" ]; then
  echo "$base/descheduler"
  exit 0
fi

start=$(date +%s)
echo "descheduler: building $module@$version into $base" >&2
dir="$(cd / && go mod download -json "$module@$version" 2>>"$base/build.log" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' | head -1)" || true
[ -d "$dir" ] || fail "the Go module proxy does not serve $module@$version (see $base/build.log)"
# The module cache is read-only and go may need to touch go.sum: build in a writable copy, removed afterwards.
rm -rf "$base/src"
cp -r "$dir" "$base/src"
chmod -R u+w "$base/src"
(
  cd "$base/src"
  CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath \
    -ldflags "-s -w -X $module/pkg/version.version=$version" \
    -o "$base/descheduler.tmp" ./cmd/descheduler >>"$base/build.log" 2>&1
) || fail "building $module@$version failed (see $base/build.log)"
mv "$base/descheduler.tmp" "$base/descheduler"
rm -rf "$base/src"
echo "descheduler: $version built in $(($(date +%s) - start)) s" >&2
echo "$base/descheduler"
