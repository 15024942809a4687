// Pieces shared by strategies: the section of a strategy that is only switched on or off, and the justification
// of the inter-pod rules (a replacement clears them where the scheduler's inter-pod filters pass).
import type { MoveContext, PolicySection, StrategyConfig } from './types.js';
import type { NodeInfo, PodInfo } from '../model/types.js';

/** A section whose one field is `enabled`. */
export function enabledOnly(defaults: StrategyConfig): PolicySection<StrategyConfig> {
  return {
    fields: ['enabled'],
    defaults,
    read: (r, section, path) => ({ enabled: r.bool(section, 'enabled', path) }),
  };
}

/**
 * Pod (anti-)affinity holds for a replacement where the scheduler would let it land: with nodeFit, every filter
 * (a node it could not fit on clears nothing); without, the inter-pod filters only.
 */
export function interPodClears(pod: PodInfo, from: NodeInfo, ctx: MoveContext): (target: NodeInfo) => boolean {
  return ctx.fits(pod, from, ctx.nodeFit ? 'all' : 'interPod');
}
