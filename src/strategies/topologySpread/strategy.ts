// TopologySpread: restores topology spread after the fact. Every spread group is measured by the analysis (the
// scheduler simulation needs their counts whatever the policy); this strategy says which groups the policy acts
// on, which pods may move in one step, and what makes a move worth its eviction. The planner's balancing engine
// (src/planner/plan.ts, balanceGroup) makes the steps.
import { matchesSelector } from '../../model/labels.js';
import { stringItems } from '../../model/rawJson.js';
import { tupleLess } from '../../model/spread.js';
import type { PodInfo } from '../../model/types.js';
import type { SkewStrategy } from '../types.js';
import { topologySpreadSection, type TopologySpreadConfig } from './policy.js';

const PLUGIN = 'RemovePodsViolatingTopologySpreadConstraint';

export const topologySpread: SkewStrategy<TopologySpreadConfig, 'topologySpread'> = {
  kind: 'skew',
  name: 'TopologySpread',
  key: 'topologySpread',
  policy: topologySpreadSection,

  // Hard constraints always; ScheduleAnyway ones are preferences the scheduler itself may leave skewed.
  actsOn: (group, config) =>
    config.enabled && (group.constraint.whenUnsatisfiable === 'DoNotSchedule' || config.includeSoftConstraints),

  // A step moves one pod out of a fullest domain: a pod elsewhere cannot lower the maximum. Every pod the selector
  // counts there is a candidate, not only the pods that carry the constraint: the kube-scheduler counts another
  // workload's pods the selector matches, so moving one of them lowers this skew as much, and it may lower its own
  // workload's skew too (two workloads spread by a shared label: one eviction can serve both).
  candidates(group, counts, at) {
    let max = 0;
    for (const n of counts.values()) max = Math.max(max, n);
    const out: PodInfo[] = [];
    for (const pod of group.matching) {
      const node = at(pod);
      if (node === undefined || !matchesSelector(group.constraint.selector, pod.labels)) continue;
      if (counts.get(group.domainsByNode.get(node.name) ?? '') === max) out.push(pod);
    }
    return out;
  },

  // (skew, domains at the maximum, domains at the minimum) must strictly fall; a run of steps that only lowers the
  // last two is kept by the planner only when the group reaches maxSkew (strict: each step lowers the skew).
  helps: (after, before, strict) => (strict ? after[0] < before[0] : tupleLess(after, before)),

  reason(group, counts, from, target) {
    const c = group.constraint;
    const fromDomain = group.domainsByNode.get(from.name)!;
    let minDomain = '';
    let min = Infinity;
    for (const [d, n] of counts) if (n < min || (n === min && d < minDomain)) [min, minDomain] = [n, d];
    const toDomain = target ? group.domainsByNode.get(target.name) : undefined;
    const shown = toDomain !== undefined ? toDomain : minDomain;
    return `${c.topologyKey}: ${fromDomain} has ${counts.get(fromDomain)}, ${shown} has ${counts.get(shown) ?? 0}, maxSkew ${c.maxSkew}`;
  },

  descheduler: {
    plugin: PLUGIN,
    convertArgs(args, section, notes) {
      const constraints = stringItems(args['constraints']);
      if (args['includeSoftConstraints'] !== undefined)
        section['includeSoftConstraints'] = args['includeSoftConstraints'] === true;
      else if (constraints.length > 0) section['includeSoftConstraints'] = constraints.includes('ScheduleAnyway');
      // true (the plugin's default) is what the planner does anyway: a move needs a node that takes the replacement.
      if (args['topologyBalanceNodeFit'] === false)
        notes.push(
          `${PLUGIN}.topologyBalanceNodeFit: false: stricter here: a spread move is planned only where the ` +
            'simulated replacement lands (eviction.nodeFit: false drops that for every strategy of the policy)',
        );
    },
  },
};
