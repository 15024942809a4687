#!/usr/bin/env bash
# The package as a user gets it: `npm pack` the built tree, install the tarball into an empty prefix (as
# `npm install -g` would), then run both commands it installs. Needs a build (`npm run build`); run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/../.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tarball="$(npm pack --silent --pack-destination "$work" | tail -n 1)"
# Dependencies come from the npm cache `npm ci` filled; the registry only for what it lacks.
npm install --global --prefix "$work/prefix" --prefer-offline --no-audit --no-fund --silent "$work/$tarball"
bin="$work/prefix/bin"
version="$("$bin/kubectl-rebalance" version)"
expected="kube-rebalancer $(node -p 'require("./package.json").version')"
[ "$version" = "$expected" ] || { echo "pack check: kubectl-rebalance version printed '$version', expected '$expected'" >&2; exit 1; }
# kubectl finds plugins on the PATH by name (`kubectl rebalance` runs kubectl-rebalance); its help says so.
"$bin/kubectl-rebalance" --help | grep -q '^Usage: kubectl rebalance ' \
  || { echo "pack check: kubectl-rebalance --help does not name itself kubectl rebalance" >&2; exit 1; }
# From an unrelated folder, with the example the package ships.
cd "$work"
plan="$("$bin/kube-rebalancer" plan --snapshot "$work/prefix/lib/node_modules/kube-rebalancer/examples/zone-skew.yaml")"
echo "$plan" | node -e 'const p = JSON.parse(require("fs").readFileSync(0, "utf8")); if (p.kind !== "RebalancePlan" || p.summary.evictions < 1) process.exit(1)' \
  || { echo "pack check: plan --snapshot did not print a RebalancePlan with evictions" >&2; exit 1; }
echo "pack check: $tarball installs; kubectl-rebalance version and kube-rebalancer plan --snapshot work"
