#!/usr/bin/env bash
# Prints a folder holding etcd, kube-apiserver, kube-controller-manager and kube-scheduler of one Kubernetes release,
# for KUBEBUILDER_ASSETS (the envtest convention the real-control-plane suites follow):
#
#   KUBEBUILDER_ASSETS="$(bash hack/control-plane-assets.sh 1.37)" npm test
#
# The argument is a minor (1.35, 1.36, 1.37: the newest patch this script knows) or an exact vX.Y.Z. A provided set
# (../shared/k8s/<version>/bin) is used when it is there; otherwise the binaries are built from the Go module proxy into
# a cache outside the repo ($KUBE_REBALANCER_ASSETS_CACHE, default ~/.cache/kube-rebalancer/k8s/<version>/bin), the
# way out-of-tree scheduler plugins build against Kubernetes: a small module requiring k8s.io/kubernetes@vX.Y.Z with every
# staging module (k8s.io/api, k8s.io/apiserver, ...) pinned to v0.Y.Z. etcd comes from go.etcd.io/etcd (Debian's 3.4
# is older than what recent API servers expect). A first build took 32-39 minutes on a busy 2-core machine; later calls
# print the cached folder at once. Progress goes to stderr; stdout carries only the folder, so $(...) captures it.
# Exit 1 with one line on stderr when no set can be had (no Go, no proxy, a failed build).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"

# The newest patch of each supported minor served by the Go module proxy, and the etcd each release is tested with.
declare -A PATCH=([1.35]=v1.35.4 [1.36]=v1.36.3 [1.37]=v1.37.2)
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler)

fail() {
  echo "control-plane-assets: $*" >&2
  exit 1
}

[ $# -eq 1 ] || fail "usage: hack/control-plane-assets.sh <1.35|1.36|1.37|vX.Y.Z>"
want="$1"
case "$want" in
  v[0-9]*.[0-9]*.[0-9]*) version="$want" ;;
  [0-9]*.[0-9]*.[0-9]*) version="v$want" ;;
  v[0-9]*.[0-9]*) version="${PATCH[${want#v}]:-}" ;;
  [0-9]*.[0-9]*) version="${PATCH[$want]:-}" ;;
  *) version="" ;;
esac
[ -n "$version" ] || fail "unknown Kubernetes version '$want' (known minors: ${!PATCH[*]}; or give vX.Y.Z)"

complete() {
  local dir="$1" b
  for b in "${BINARIES[@]}"; do [ -x "$dir/$b" ] || return 1; done
}

# 1. A set provided beside the checkout.
for provided in "$root/../shared/k8s/$version/bin" "$root/../shared/k8s/${version%.*}/bin"; do
  if complete "$provided"; then
    cd "$provided" && pwd
    exit 0
  fi
done

# 2. The cache.
cache="${KUBE_REBALANCER_ASSETS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-rebalancer/k8s}/$version"
if complete "$cache/bin"; then
  echo "$cache/bin"
  exit 0
fi

# 3. Build it, one build per version at a time: a second caller (another checkout, a parallel CI job) waits for the
# first and then takes its result, instead of removing the folder the first is building in.
command -v go >/dev/null 2>&1 || fail "no set for $version in ../shared/k8s and no Go toolchain to build one"
mkdir -p "$cache"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/.lock"
  flock 9
  if complete "$cache/bin"; then
    echo "$cache/bin"
    exit 0
  fi
fi
minor="${version#v1.}"
minor="${minor%%.*}"
staging="v0.$minor.${version##*.}"
work="$cache/src"
rm -rf "$work"
mkdir -p "$work" "$cache/bin"
cd "$work"
start=$(date +%s)
echo "control-plane-assets: building Kubernetes $version (staging $staging) and etcd $ETCD_VERSION into $cache/bin" >&2

cat >go.mod <<EOF
module kube-rebalancer.local/control-plane-assets

go 1.26
EOF
go mod download -json "k8s.io/kubernetes@$version" >k8s.json 2>>build.log || fail "the Go module proxy does not serve k8s.io/kubernetes@$version (see $work/build.log)"
kdir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' k8s.json | head -1)"
[ -d "$kdir" ] || fail "k8s.io/kubernetes@$version downloaded to no folder (see $work/k8s.json)"
# Kubernetes's own go.mod points each staging module at ./staging; a module that requires it must pin them instead.
mods=$(sed -n 's/^[[:space:]]*\(k8s\.io\/[a-z0-9-]*\) => \.\/staging\/src\/.*$/\1/p' "$kdir/go.mod" | sort -u)
[ -n "$mods" ] || fail "found no staging modules in $kdir/go.mod"
{
  echo "require k8s.io/kubernetes $version"
  for m in $mods; do echo "replace $m => $m $staging"; done
} >>go.mod
mkdir -p tools && cat >tools/tools.go <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
EOF
go mod tidy -e >>build.log 2>&1 || fail "go mod tidy failed for Kubernetes $version (see $work/build.log)"

# /version must say what was built: the operator models the scheduler of the release it reads there.
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
ldflags="$ldflags -X $pkg.buildDate=1970-01-01T00:00:00Z"
for b in kube-apiserver kube-controller-manager kube-scheduler; do
  echo "control-plane-assets: go build $b $version" >&2
  CGO_ENABLED=0 go build -tags providerless -trimpath -ldflags "$ldflags" -o "$cache/bin/$b.tmp" "k8s.io/kubernetes/cmd/$b" \
    >>build.log 2>&1 || fail "building $b $version failed (see $work/build.log)"
  mv "$cache/bin/$b.tmp" "$cache/bin/$b"
done

# etcd: its server module's main package is the etcd binary.
etcdwork="$cache/etcd-src"
rm -rf "$etcdwork"
mkdir -p "$etcdwork"
(
  cd "$etcdwork"
  printf 'module kube-rebalancer.local/etcd\n\ngo 1.26\n' >go.mod
  mkdir -p tools && printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >tools/tools.go
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >>build.log 2>&1 &&
    go mod tidy -e >>build.log 2>&1 &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$cache/bin/etcd.tmp" go.etcd.io/etcd/server/v3 >>build.log 2>&1
) || fail "building etcd $ETCD_VERSION failed (see $etcdwork/build.log)"
mv "$cache/bin/etcd.tmp" "$cache/bin/etcd"

complete "$cache/bin" || fail "the build of $version left $cache/bin incomplete"
echo "control-plane-assets: $version built in $(($(date +%s) - start)) s" >&2
echo "$cache/bin"
