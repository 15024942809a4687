#!/usr/bin/env bash
# charts/kube-rebalancer as CI checks it: helm (built by hack/helm.sh from the Go module proxy, cached outside the repo)
# lints the chart with its default values and with every optional part on, the chart's CRD is the repo's, and
# `helm template` output is applied to a real API server with server-side dry run (test/integration/chart.test.ts,
# which needs KUBEBUILDER_ASSETS as the other real-control-plane suites do). Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/../.."
helm="$(bash hack/helm.sh)"
chart=charts/kube-rebalancer
cmp -s crds/rebalancer.dev_rebalancepolicies.yaml "$chart/crds/rebalancer.dev_rebalancepolicies.yaml" \
  || { echo "chart check: $chart/crds/ differs from crds/ (copy crds/rebalancer.dev_rebalancepolicies.yaml over)" >&2; exit 1; }
"$helm" lint --strict "$chart"
"$helm" lint --strict "$chart" \
  --set metrics.serviceMonitor.enabled=true --set initialPolicy.enabled=true --set replicas=3 \
  --set-json 'schedulerConfig={"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration"}'
if [ -z "${KUBEBUILDER_ASSETS:-}" ]; then
  echo "chart check: KUBEBUILDER_ASSETS is unset, so helm template | server-side dry run cannot run" >&2
  exit 1
fi
HELM="$helm" npx vitest run test/integration/chart.test.ts
echo "chart check: helm lint passes; helm template output accepted by the API server (server-side dry run)"
