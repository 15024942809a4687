// RemoveDuplicates: no two pods of one owner (controller reference) on one node where other feasible nodes have
// room, as the descheduler's plugin of that name. A duplicate is moved only if its replacement, on every node the
// scheduler might choose, lands on a node that runs no pod of that owner (so a move never makes another duplicate);
// where the scheduler would put it back beside its siblings, it stays and the plan says why.
import { stringItems } from '../../model/rawJson.js';
import type { NodeInfo, PodInfo } from '../../model/types.js';
import type { LoadStrategy } from '../types.js';
import { removeDuplicatesSection, type RemoveDuplicatesConfig } from './policy.js';

const NAME = 'RemoveDuplicates';

export const removeDuplicates: LoadStrategy<RemoveDuplicatesConfig, 'removeDuplicates'> = {
  kind: 'load',
  name: NAME,
  key: 'removeDuplicates',
  policy: removeDuplicatesSection,

  plan(ctx, config) {
    const excluded = new Set(config.excludeOwnerKinds);
    // owner → node name → its pods there.
    const owners = new Map<string, Map<string, PodInfo[]>>();
    for (const node of ctx.nodes) {
      for (const pod of ctx.podsOn(node)) {
        if (pod.owner === undefined || excluded.has(pod.owner.kind) || pod.daemonSet || pod.mirror) continue;
        const key = `${pod.namespace}/${pod.owner.kind}/${pod.owner.name}`;
        let byNode = owners.get(key);
        if (!byNode) owners.set(key, (byNode = new Map<string, PodInfo[]>()));
        const list = byNode.get(node.name);
        if (list) list.push(pod);
        else byNode.set(node.name, [pod]);
      }
    }
    for (const key of [...owners.keys()].sort()) {
      if (ctx.cycleFull) break;
      const byNode = owners.get(key)!;
      if (![...byNode.values()].some((pods) => pods.length > 1)) continue;
      const count = new Map([...byNode].map(([n, pods]) => [n, pods.length]));
      // A tied node the scheduler may have chosen for an earlier replacement counts as taken.
      const maybe = new Set<string>();
      const lands = (targets: readonly NodeInfo[]): string | undefined => {
        const t = targets.find((n) => (count.get(n.name) ?? 0) > 0 || maybe.has(n.name));
        return t === undefined
          ? undefined
          : `its replacement could land on ${t.name}, which already runs a pod of ${key}`;
      };
      const nodes = [...byNode.keys()].sort((a, b) => count.get(b)! - count.get(a)! || (a < b ? -1 : 1));
      for (const name of nodes) {
        const pods = [...byNode.get(name)!].sort((a, b) => ctx.compare(a, b));
        // Every pod but the last in eviction order is a duplicate here.
        for (const pod of pods.slice(0, pods.length - 1)) {
          const result = ctx.move(pod, `${pods.length} pods of ${key} run on node ${name}`, lands);
          if (typeof result === 'string') {
            ctx.skip(pod, result);
            continue;
          }
          count.set(name, count.get(name)! - 1);
          count.set(result.target.name, (count.get(result.target.name) ?? 0) + 1);
          for (const t of result.ties) maybe.add(t.name);
        }
      }
    }
    return undefined;
  },

  descheduler: {
    plugin: NAME,
    convertArgs(args, section) {
      // v1alpha1 nests them under params.removeDuplicates.
      const nested = args['removeDuplicates'];
      const kinds =
        args['excludeOwnerKinds'] ??
        (typeof nested === 'object' && nested !== null
          ? (nested as Record<string, unknown>)['excludeOwnerKinds']
          : undefined);
      section['excludeOwnerKinds'] = stringItems(kinds);
    },
  },
};
