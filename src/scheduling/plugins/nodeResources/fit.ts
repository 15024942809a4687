// NodeResourcesFit (kube-scheduler v1.26): the filter — room for one more pod and for every resource the pod requests,
// with the evicted pod's share freed once it is gone — and the score by the configured strategy (args.ts).
import type { FilterPlugin, ScorePlugin } from '../../framework/interface.js';
import { fitIgnores } from './args.js';
import { heldOf } from '../../state/nodeUsage.js';
import { fitScore, nodeLoad } from './resourceAllocation.js';

export const nodeResourcesFitFilter: FilterPlugin = {
  name: 'NodeResourcesFit',
  preFilter: ({ state, pod, evicted, terminating }) => {
    const requests = pod.requests;
    // The pod's own profile (its spec.schedulerName's): filters get no profile of their own.
    const ignored = (state.profileFor(pod) ?? state.profile).fitIgnored;
    return (node, index) => {
      const usage = state.usageAt(index);
      const freed = !terminating && evicted !== undefined && evicted.node === node ? evicted.pod : undefined;
      const podCap = node.allocatable['pods'];
      if (podCap !== undefined && usage.pods - (freed ? 1 : 0) + 1 > podCap) return 'node has no room for another pod';
      for (const name in requests) {
        const amount = requests[name]!;
        if (amount <= 0 || fitIgnores(ignored, name)) continue;
        const cap = node.allocatable[name];
        // A node that does not report a standard resource (a hand-written snapshot) is not limited by it;
        // an extended resource the node does not offer cannot be satisfied.
        if (cap === undefined) {
          if (name === 'cpu' || name === 'memory' || name === 'ephemeral-storage') continue;
          return `node has no ${name}`;
        }
        const used =
          (usage.requested[name] ?? 0) - (freed ? (heldOf(freed, state.kubeVersion).requests[name] ?? 0) : 0);
        if (used + amount > cap) return `insufficient ${name}`;
      }
      return undefined;
    };
  },
};

export const nodeResourcesFitScore: ScorePlugin = {
  name: 'NodeResourcesFit',
  preScore: ({ state, profile, pod, evicted }) => ({
    score(feasible, out) {
      const nodes = state.nodeList;
      const scoring = profile.fitScoring;
      for (let k = 0; k < feasible.length; k++) {
        const index = feasible[k]!;
        out[k] = fitScore(scoring, nodeLoad(state, index, nodes[index]!, evicted.gone), pod);
      }
    },
  }),
};
