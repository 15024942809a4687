#!/usr/bin/env bash
# Prints the path of a helm binary built from the Go module proxy (helm.sh/helm/v3) into a cache outside the repo
# ($KUBE_REBALANCER_HELM_CACHE, default ~/.cache/kube-rebalancer/helm/<version>), the way hack/control-plane-assets.sh
# builds Kubernetes: no distribution package and no download script, only `go build` of a pinned module version.
#
#   helm="$(bash hack/helm.sh)" && "$helm" lint charts/kube-rebalancer
#
# HELM_VERSION overrides the pinned version. A helm already on PATH at that version is used as is. Progress goes to
# stderr; stdout carries only the binary's path. Exit 1 with one line on stderr when no helm can be had.
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v3.22.0}"

fail() {
  echo "helm: $*" >&2
  exit 1
}

if command -v helm >/dev/null 2>&1 && helm version --template '{{.Version}}' 2>/dev/null | grep -qx "$HELM_VERSION"; then
  command -v helm
  exit 0
fi

cache="${KUBE_REBALANCER_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-rebalancer/helm}/$HELM_VERSION"
if [ -x "$cache/bin/helm" ]; then
  echo "$cache/bin/helm"
  exit 0
fi

command -v go >/dev/null 2>&1 || fail "no helm $HELM_VERSION in $cache and no Go toolchain to build one"
work="$cache/src"
rm -rf "$work"
mkdir -p "$work" "$cache/bin"
echo "helm: building helm.sh/helm/v3@$HELM_VERSION into $cache/bin" >&2
# `go install module@version` builds helm's command with helm's own go.mod (its pinned dependencies), outside any
# module of ours.
GOBIN="$work" CGO_ENABLED=0 go install -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
  "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >"$work/build.log" 2>&1 ||
  fail "go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION failed (see $work/build.log)"
mv "$work/helm" "$cache/bin/helm"
echo "$cache/bin/helm"
