// PodTopologySpread's filter (kube-scheduler v1.26): for each DoNotSchedule constraint of the pod, the node must carry
// the topology key and placing the pod there must keep the domain within maxSkew of the least-loaded eligible domain.
// The evicted pod is taken out of the counts at once: the plugin skips terminating pods.
import { labelValue, matchesSelector } from '../../../model/labels.js';
import type { SpreadConstraint } from '../../../model/types.js';
import type { FilterPlugin } from '../../framework/interface.js';

/** One spread constraint of the pod being placed, with the evicted pod already taken out. */
interface SpreadTerm {
  readonly constraint: SpreadConstraint;
  readonly counts: ReadonlyMap<string, number>;
  /** The group's domain per node index. */
  readonly domains: readonly (string | undefined)[];
  /** The evicted pod's domain in this group, if it was counted there (its count is one less). */
  readonly minus: string | undefined;
  readonly min: number;
  readonly self: number;
}

function minAfterRemoval(counts: ReadonlyMap<string, number>, minDomains: number, minus: string | undefined): number {
  if (counts.size < minDomains || counts.size === 0) return 0;
  let min = Infinity;
  for (const [domain, n] of counts) min = Math.min(min, domain === minus ? n - 1 : n);
  return min;
}

function countIn(s: SpreadTerm, domain: string): number {
  return (s.counts.get(domain) ?? 0) - (domain === s.minus ? 1 : 0);
}

export const podTopologySpreadFilter: FilterPlugin = {
  name: 'PodTopologySpread',
  preFilter: ({ state, pod, evicted }) => {
    const spread = state
      .groupsOfMember(pod)
      .filter((group) => group.group.constraint.whenUnsatisfiable === 'DoNotSchedule')
      .map((group): SpreadTerm => {
        const counts = group.counts;
        const constraint = group.group.constraint;
        const minus =
          evicted && matchesSelector(constraint.selector, evicted.pod.labels)
            ? group.group.domainsByNode.get(evicted.node.name)
            : undefined;
        return {
          constraint,
          counts,
          domains: state.nodeDomains(group),
          minus,
          min: minAfterRemoval(counts, constraint.minDomains, minus),
          self: matchesSelector(constraint.selector, pod.labels) ? 1 : 0,
        };
      });
    if (spread.length === 0) return undefined;
    return (node, index) => {
      for (const s of spread) {
        // The filter needs the key on the node; eligibility (inclusion policies) only decides which domains count.
        const domain = s.domains[index] ?? labelValue(node.labels, s.constraint.topologyKey);
        if (domain === undefined) return `topology spread: node has no ${s.constraint.topologyKey} label`;
        const skew = countIn(s, domain) + s.self - s.min;
        if (skew > s.constraint.maxSkew)
          return `topology spread: maxSkew ${s.constraint.maxSkew} on ${s.constraint.topologyKey}`;
      }
      return undefined;
    };
  },
};
