// Policies the bench's rows share (bench/run.ts and bench/compare.ts plan with the same ones).
import type { Policy } from '../src/policy/types.js';
import type { LowNodeUtilizationConfig } from '../src/strategies/lowNodeUtilization/policy.js';

/** The default policy with lowNodeUtilization on, thresholds around the generated clusters' load. */
export function withLowNodeUtilization(policy: Policy): Policy {
  const lowNodeUtilization: LowNodeUtilizationConfig = {
    ...policy.spec.strategies.lowNodeUtilization,
    enabled: true,
    // Two points around the mean: the skewed workloads' nodes are over, the others' under (10k: zone c is empty).
    thresholds: { cpu: 2, pods: 2 },
    targetThresholds: { cpu: 2, pods: 2 },
    useDeviationThresholds: true,
  };
  return {
    ...policy,
    spec: {
      ...policy.spec,
      strategies: {
        ...policy.spec.strategies,
        // Alone, so the row measures it (the skewed spread and the mixed clusters' violations would fill the cycle).
        topologySpread: { ...policy.spec.strategies.topologySpread, enabled: false },
        podAntiAffinity: { ...policy.spec.strategies.podAntiAffinity, enabled: false },
        nodeAffinity: { ...policy.spec.strategies.nodeAffinity, enabled: false },
        nodeTaints: { ...policy.spec.strategies.nodeTaints, enabled: false },
        lowNodeUtilization,
      },
    },
  };
}
