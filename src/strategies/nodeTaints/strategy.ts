// NodeTaints: a pod on a node with a taint it does not tolerate (NoSchedule and NoExecute; PreferNoSchedule as a
// preference), unless the policy excludes the taint (or includes others only) or it is one of the node lifecycle's own (a cordon, not-ready,
// pressure, the autoscaler's: model/lifecycleTaints.ts), which never count. Cleared by a replacement on a node
// without such a taint.
import { stringItems } from '../../model/rawJson.js';
import { isLifecycleTaint } from '../../model/lifecycleTaints.js';
import { isTolerated, taintText } from '../../model/taints.js';
import type { Taint } from '../../model/types.js';
import type { RuleStrategy } from '../types.js';
import { nodeTaintsSection, type NodeTaintsConfig, type TaintMatcher } from './policy.js';

const NAME = 'NodeTaints';

function matchesAny(taint: Taint, excluded: readonly TaintMatcher[]): boolean {
  return excluded.some((m) => m.key === taint.key && (m.value === undefined || m.value === taint.value));
}

export const nodeTaints: RuleStrategy<NodeTaintsConfig, 'nodeTaints'> = {
  kind: 'rule',
  name: NAME,
  key: 'nodeTaints',
  policy: nodeTaintsSection,
  // Node-level rules (taints, then node affinity) are fixed before inter-pod ones, whose moves then see them done.
  fixOrder: 1,

  detector: (_ctx, config) => (pod, node, out) => {
    for (const taint of node.taints) {
      if (taint.effect === 'PreferNoSchedule' && !config.includePreferNoSchedule) continue;
      if (isLifecycleTaint(taint) || matchesAny(taint, config.excludedTaints)) continue;
      if (config.includedTaints.length > 0 && !matchesAny(taint, config.includedTaints)) continue;
      if (isTolerated(taint, pod.tolerations)) continue;
      out.push({
        strategy: NAME,
        pod,
        node: node.name,
        soft: taint.effect === 'PreferNoSchedule',
        reason: `node ${node.name} has taint ${taintText(taint)} that the pod does not tolerate`,
      });
    }
  },

  actsOnSoft: (config) => config.includePreferNoSchedule,

  // The target must carry no untolerated taint of the violation's kind (soft: PreferNoSchedule; hard: the others).
  clears: (v, pod) => (target) =>
    !target.taints.some(
      (t) =>
        (v.soft ? t.effect === 'PreferNoSchedule' : t.effect !== 'PreferNoSchedule') &&
        !isTolerated(t, pod.tolerations),
    ),

  withoutTarget: true,

  descheduler: {
    plugin: 'RemovePodsViolatingNodeTaints',
    convertArgs(args, section, notes) {
      const included = args['includedTaints'];
      if (Array.isArray(included) && included.length > 0) section['includedTaints'] = stringItems(included);
      else if (Array.isArray(included)) {
        // The plugin counts only the taints listed; listing none, it counts none (its filter tests for nil).
        section['enabled'] = false;
        notes.push(
          'RemovePodsViolatingNodeTaints.includedTaints: [] lets no taint count, so the plugin evicts nothing; the ' +
            'section is left disabled',
        );
      }
      if (args['excludedTaints'] !== undefined) section['excludedTaints'] = stringItems(args['excludedTaints']);
      if (args['includePreferNoSchedule'] !== undefined)
        section['includePreferNoSchedule'] = args['includePreferNoSchedule'] === true;
      if (args['excludedTaints'] === undefined) section['excludedTaints'] = [];
    },
  },
};
