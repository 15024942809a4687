// Rule violations of pods already running, each checked the way the scheduler's filter would check the pod against
// its current node today. What a rule is, and how it is checked, is its strategy's (src/strategies/<key>/strategy.ts):
// this runs the detectors of the registry's enabled rule strategies over the counted, in-scope pods.
import { selectorText } from '../model/labels.js';
import { termSelectsNamespace } from '../model/podAffinity.js';
import { isCounted } from '../model/pods.js';
import type { Labels, NodeInfo, PodAffinityTerm, PodInfo } from '../model/types.js';
import type { PolicySpec } from '../policy/types.js';
import { configOf, type StrategyRegistry } from '../strategies/registry.js';
import type { DetectionContext, ViolationCheck, ViolationRecord } from '../strategies/types.js';
import type { PodIndex } from './podIndex.js';
import type { NamespaceScope } from './scope.js';

export interface ViolationContext {
  readonly spec: PolicySpec;
  readonly inScope: NamespaceScope;
  readonly nodes: ReadonlyMap<string, NodeInfo>;
  readonly index: PodIndex;
  readonly namespaceLabels: (namespace: string) => Labels;
}

/** Counted pods that a term matches (selector and namespaces), from the index. */
export function podsMatchingTerm(
  term: PodAffinityTerm,
  owner: PodInfo,
  ctx: Pick<ViolationContext, 'index' | 'namespaceLabels'>,
): PodInfo[] {
  const out: PodInfo[] = [];
  const namespaces =
    term.namespaces.length === 0 && term.namespaceSelector === undefined
      ? [owner.namespace]
      : [...ctx.index.namespaceNames()];
  for (const ns of namespaces) {
    if (!termSelectsNamespace(term, owner, ns, ctx.namespaceLabels)) continue;
    out.push(...ctx.index.select(ns, term.selector));
  }
  return out;
}

/** What the detectors read, with the pods each term matches memoised (replicas share their terms). */
export function detectionContext(ctx: ViolationContext): DetectionContext {
  const termCache = new Map<string, PodInfo[]>();
  return {
    nodes: ctx.nodes,
    inScope: ctx.inScope,
    namespaceLabels: ctx.namespaceLabels,
    nodeOf: (p) => (p.nodeName === undefined ? undefined : ctx.nodes.get(p.nodeName)),
    podsMatching: (term, owner) => {
      const key = `${owner.namespace}\u0000${selectorText(term.selector)}\u0000${term.namespaces.join(',')}\u0000${term.namespaceSelector ? selectorText(term.namespaceSelector) : '-'}`;
      let list = termCache.get(key);
      if (!list) {
        list = podsMatchingTerm(term, owner, ctx);
        termCache.set(key, list);
      }
      return list;
    },
  };
}

export function analyzeViolations(
  pods: readonly PodInfo[],
  ctx: ViolationContext,
  strategies: StrategyRegistry,
): ViolationRecord[] {
  const detection = detectionContext(ctx);
  // Detectors run in registration order, so a pod's violations are listed in the registry's order.
  const checks: ViolationCheck[] = [];
  for (const s of strategies.all) {
    if (s.kind !== 'rule') continue;
    const config = configOf(ctx.spec.strategies, s);
    if (config.enabled) checks.push(s.detector(detection, config));
  }
  const out: ViolationRecord[] = [];
  if (checks.length === 0) return out;
  for (const pod of pods) {
    if (!isCounted(pod) || !ctx.inScope(pod.namespace)) continue;
    const node = ctx.nodes.get(pod.nodeName!);
    if (!node) continue;
    for (const check of checks) check(pod, node, out);
  }
  return dedupe(out);
}

/** One entry per (strategy, pod, reason): a pair found from both sides is reported once per side. */
function dedupe(records: ViolationRecord[]): ViolationRecord[] {
  const seen = new Set<string>();
  return records.filter((r) => {
    const key = `${r.strategy}\u0000${r.pod.uid}\u0000${r.reason}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
