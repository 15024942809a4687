// HighNodeUtilization: bin-packing for an autoscaler. Nodes at or below every threshold are underutilized; each is
// emptied, least utilized first (the order that frees the most nodes for the evictions a cycle allows), only if
// every pod on it that is not a DaemonSet or mirror pod can move and lands, on every node the scheduler might choose,
// on a node that is not being emptied. A half-emptied node saves nothing, so a node that cannot be emptied keeps all
// its pods. When every node is underutilized (where the descheduler does nothing), the most utilized one is kept as
// the destination. With evictionModes OnlyThresholdingResources, a node running a pod that requests none of the
// thresholds' resources is not emptied (the descheduler would leave that pod and evict the rest).
import { lifecycleReason } from '../../model/lifecycleTaints.js';
import type { NodeInfo, PodInfo } from '../../model/types.js';
import type { LoadStrategy, NodeClass, NodeClassification } from '../types.js';
import {
  atOrBelow,
  classifiedNodes,
  convertUsage,
  copyThresholds,
  percentText,
  resourcesOf,
  totalShare,
  usageByNode,
} from '../utilization.js';
import { highNodeUtilizationSection, type HighNodeUtilizationConfig } from './policy.js';

const NAME = 'HighNodeUtilization';

/** Pods an emptied node may keep: an autoscaler removes a node that runs only these. */
function staysOnNode(pod: PodInfo): boolean {
  return pod.daemonSet || pod.mirror;
}

/**
 * The pod's containers request one of `resources` (the key present, as the descheduler checks; `pods` is never a
 * container request). A pod built without the list (tests) counts what its requests hold.
 */
function requestsAny(pod: PodInfo, resources: readonly string[]): boolean {
  const names = pod.requestedResources ?? Object.keys(pod.requests);
  return resources.some((r) => names.includes(r));
}

export const highNodeUtilization: LoadStrategy<HighNodeUtilizationConfig, 'highNodeUtilization'> = {
  kind: 'load',
  name: NAME,
  key: 'highNodeUtilization',
  policy: highNodeUtilizationSection,

  usage: (config) => config.usage,

  plan(ctx, config): NodeClassification | undefined {
    const resources = resourcesOf(config.thresholds);
    const nodes = classifiedNodes(ctx);
    const usage = usageByNode(ctx, nodes, resources);
    const classes = new Map<string, NodeClass>();
    for (const n of nodes) {
      classes.set(
        n.name,
        lifecycleReason(n) === undefined && atOrBelow(usage.get(n)!, config.thresholds) ? 'under' : 'appropriate',
      );
    }
    const result: NodeClassification = { strategy: NAME, resources, classes };
    const sum = (n: NodeInfo): number => totalShare(usage.get(n)!, resources);
    const byLoad = (a: NodeInfo, b: NodeInfo): number =>
      sum(a) - sum(b) || ctx.podsOn(a).length - ctx.podsOn(b).length || (a.name < b.name ? -1 : 1);
    const under = nodes.filter((n) => classes.get(n.name) === 'under').sort(byLoad);
    if (under.length === 0 || under.length <= config.numberOfNodes) return result;
    // Every node takes part as a destination unless it is being emptied; with no other schedulable node, the most
    // utilized underutilized one is the destination.
    if (!nodes.some((n) => lifecycleReason(n) === undefined && classes.get(n.name) !== 'under')) under.pop();
    const emptied = new Set(under.map((n) => n.name));
    for (const node of under) {
      if (ctx.cycleFull) break;
      const pods = ctx
        .podsOn(node)
        .filter((p) => !staysOnNode(p))
        .sort((a, b) => ctx.compare(a, b));
      if (pods.length === 0) continue;
      const u = usage.get(node)!;
      const reason = `node ${node.name} is underutilized (${resources
        .map((r) => `${r} ${percentText(u[r] ?? 0)} ≤ ${config.thresholds[r]}%`)
        .join(', ')}) and is being emptied`;
      const lands = (targets: readonly NodeInfo[]): string | undefined => {
        const t = targets.find((n) => emptied.has(n.name));
        return t === undefined
          ? undefined
          : `its replacement would land on ${t.name}, an underutilized node being emptied`;
      };
      // OnlyThresholdingResources: a pod requesting none of the thresholds' resources stays, so the node stays full.
      const kept = config.evictionModes.includes('OnlyThresholdingResources')
        ? pods.find((p) => !requestsAny(p, resources))
        : undefined;
      if (kept !== undefined) {
        const result = `it requests none of ${resources.join(', ')} (evictionModes OnlyThresholdingResources)`;
        const why = `node ${node.name} cannot be emptied: ${kept.namespace}/${kept.name} cannot move (${result}); a half-emptied node saves nothing`;
        for (const pod of pods) ctx.skip(pod, pod === kept ? result : why);
        continue;
      }
      const mark = ctx.mark();
      for (const [i, pod] of pods.entries()) {
        const result = ctx.move(pod, reason, lands);
        if (typeof result !== 'string') continue;
        const why = `node ${node.name} cannot be emptied: ${pod.namespace}/${pod.name} cannot move (${result}); a half-emptied node saves nothing`;
        ctx.undo(mark, why);
        ctx.skip(pod, result);
        for (const other of pods.slice(i + 1)) ctx.skip(other, why);
        break;
      }
    }
    return result;
  },

  descheduler: {
    plugin: NAME,
    convertArgs(args, section, notes) {
      copyThresholds(args, section, 'thresholds');
      if (typeof args['numberOfNodes'] === 'number') section['numberOfNodes'] = args['numberOfNodes'];
      convertUsage(args, section, notes, NAME);
      const modes = args['evictionModes'];
      // Carried as given: a mode the descheduler does not know is refused by the section's validation, as by its own.
      if (Array.isArray(modes) && modes.length > 0) section['evictionModes'] = modes;
    },
  },
};
