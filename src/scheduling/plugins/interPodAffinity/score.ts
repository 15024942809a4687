// InterPodAffinity's score (kube-scheduler v1.26, both directions): every existing pod adds to the topology domain of
// its node — the incoming pod's preferred affinity terms that select it (+weight), its preferred anti-affinity terms
// (−weight); and the existing pod's own terms that select the incoming pod: required affinity (+hardPodAffinityWeight),
// preferred affinity (+weight), preferred anti-affinity (−weight). A node scores the sum over the domains it is in;
// the scores are then scaled min–max to 0–100 over the nodes being scored.
import { labelValue } from '../../../model/labels.js';
import type { NodeInfo, PodAffinityTerm, PodInfo } from '../../../model/types.js';
import type { ClusterState, Placed } from '../../clusterState.js';
import type { ScorePlugin } from '../../framework/interface.js';
import { minMaxNormalize } from '../../framework/normalize.js';
import { DEFAULT_HARD_POD_AFFINITY_WEIGHT } from './args.js';

/** Topology key → domain → summed weight. Empty: no term applies, every node scores 0. */
export type TopologyScores = Map<string, Map<string, number>>;

function add(scores: TopologyScores, key: string, domain: string, weight: number): void {
  let perDomain = scores.get(key);
  if (perDomain === undefined) {
    perDomain = new Map();
    scores.set(key, perDomain);
  }
  perDomain.set(domain, (perDomain.get(domain) ?? 0) + weight);
}

/**
 * The domain weights for placing `pod`. `gone`: the evicted pod is already deleted (otherwise, still terminating, it
 * counts as an existing pod, as upstream's InterPodAffinity does not skip terminating pods).
 */
export function topologyScores(state: ClusterState, pod: PodInfo, gone: Placed | undefined): TopologyScores {
  const scores: TopologyScores = new Map();
  const incoming = (terms: readonly { weight: number; term: PodAffinityTerm }[] | undefined, sign: number): void => {
    for (const { weight, term } of terms ?? []) {
      const counts = state.matchCounts(term, pod);
      for (const [domain, n] of counts.perDomain) if (n !== 0) add(scores, term.topologyKey, domain, sign * weight * n);
      if (gone !== undefined && state.termMatches(term, pod, gone.pod)) {
        const domain = labelValue(gone.node.labels, term.topologyKey);
        if (domain !== undefined) add(scores, term.topologyKey, domain, -sign * weight);
      }
    }
  };
  incoming(pod.preferredPodAffinity, 1);
  incoming(pod.preferredPodAntiAffinity, -1);
  for (const g of state.scoreTermGroups()) {
    if (!state.termMatches(g.term, g.owner, pod)) continue;
    for (const [domain, w] of g.perDomain) if (w !== 0) add(scores, g.term.topologyKey, domain, w);
  }
  if (gone !== undefined) subtractOwnTerms(state, scores, pod, gone);
  return scores;
}

/** Takes the deleted pod's own terms out again (they were counted with it in the live groups). */
function subtractOwnTerms(state: ClusterState, scores: TopologyScores, pod: PodInfo, gone: Placed): void {
  const own = (term: PodAffinityTerm, weight: number): void => {
    if (!state.termMatches(term, gone.pod, pod)) return;
    const domain = labelValue(gone.node.labels, term.topologyKey);
    if (domain !== undefined) add(scores, term.topologyKey, domain, -weight);
  };
  const hard = state.profile.hardPodAffinityWeight ?? DEFAULT_HARD_POD_AFFINITY_WEIGHT;
  if (hard > 0) for (const t of gone.pod.podAffinity) own(t, hard);
  for (const p of gone.pod.preferredPodAffinity ?? []) own(p.term, p.weight);
  for (const p of gone.pod.preferredPodAntiAffinity ?? []) own(p.term, -p.weight);
}

export function interPodRaw(scores: TopologyScores, node: NodeInfo): number {
  let score = 0;
  for (const [key, perDomain] of scores) {
    const domain = labelValue(node.labels, key);
    if (domain !== undefined) score += perDomain.get(domain) ?? 0;
  }
  return score;
}

export const interPodAffinityScore: ScorePlugin = {
  name: 'InterPodAffinity',
  preScore: ({ state, pod, evicted }) => {
    const topology = topologyScores(state, pod, evicted.gone);
    if (topology.size === 0) return undefined;
    return {
      score(feasible, out) {
        for (let k = 0; k < feasible.length; k++) out[k] = interPodRaw(topology, state.nodeList[feasible[k]!]!);
      },
      normalize: minMaxNormalize,
    };
  },
};
