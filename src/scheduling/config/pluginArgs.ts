// `profiles[].pluginConfig`: each entry's args handed to its plugin's decoder (plugins/<plugin>/args.ts), which
// validates them with field paths and fills in the defaults. The parser knows no plugin's fields.
import type { Obj } from '../../model/rawJson.js';
import { ARGS_META, joinPath, type Reader } from '../framework/argsReader.js';
import { decodeIgnorePreferredTerms, decodeInterPodAffinityArgs } from '../plugins/interPodAffinity/args.js';
import { decodeNodeAffinityArgs } from '../plugins/nodeAffinity/args.js';
import { decodeBalancedArgs, decodeFitArgs } from '../plugins/nodeResources/args.js';
import { decodeSpreadArgs } from '../plugins/podTopologySpread/args.js';
import { DEFAULT_PROFILE, type SchedulerProfile } from '../profile.js';

/** What the plugins' args set in a profile; undefined fields keep the defaults. */
export type ArgsSettings = Pick<
  SchedulerProfile,
  | 'fitScoring'
  | 'spreadDefaulting'
  | 'hardPodAffinityWeight'
  | 'ignorePreferredTermsOfExistingPods'
  | 'fitIgnored'
  | 'balancedResources'
  | 'addedAffinity'
>;

/**
 * Plugins with args that do not change where a pod lands (preemption and volume binding timing): their fields are
 * checked, not used. Any other plugin's pluginConfig is refused: its args are not modelled.
 */
const LANDING_NEUTRAL_ARGS: Readonly<Record<string, readonly string[]>> = {
  DefaultPreemption: ['minCandidateNodesPercentage', 'minCandidateNodesAbsolute'],
  VolumeBinding: ['bindTimeoutSeconds'],
};
const MODELLED_ARGS = new Set([
  'NodeResourcesFit',
  'NodeResourcesBalancedAllocation',
  'NodeAffinity',
  'InterPodAffinity',
  'PodTopologySpread',
]);

/** pluginConfig entries by plugin name: the `args` object and its path. */
function pluginConfigEntries(r: Reader, profile: Obj, at: string): Map<string, readonly [Obj, string]> {
  const out = new Map<string, readonly [Obj, string]>();
  for (const [entry, eAt] of r.objects(r.list(profile, 'pluginConfig', at), joinPath(at, 'pluginConfig'))) {
    const name = r.string(entry, 'name', eAt);
    if (name === undefined || name === '') {
      r.fail(joinPath(eAt, 'name'), 'is required');
      continue;
    }
    if (out.has(name)) {
      r.fail(joinPath(eAt, 'name'), `repeated config for plugin ${name}`);
      continue;
    }
    const args = r.obj(entry, 'args', eAt) ?? {};
    out.set(name, [args, joinPath(eAt, 'args')]);
  }
  return out;
}

/** The profile's plugin settings from its pluginConfig, or undefined when an args object left none to use. */
export function argsSettingsOf(r: Reader, profile: Obj, at: string): ArgsSettings | undefined {
  const entries = pluginConfigEntries(r, profile, at);
  for (const [name, [args, aAt]] of entries) {
    if (MODELLED_ARGS.has(name)) continue;
    const neutral = LANDING_NEUTRAL_ARGS[name];
    if (neutral !== undefined) r.known(args, aAt, [...ARGS_META, ...neutral]);
    else if (Object.keys(args).some((k) => !ARGS_META.includes(k))) {
      r.fail(aAt, `args of ${name} are not modelled: the prediction cannot follow them (remove them or the entry)`);
    }
  }
  const fit = entries.get('NodeResourcesFit');
  const balanced = entries.get('NodeResourcesBalancedAllocation');
  const nodeAffinity = entries.get('NodeAffinity');
  const interPod = entries.get('InterPodAffinity');
  const spread = entries.get('PodTopologySpread');
  const fitArgs = fit === undefined ? undefined : decodeFitArgs(r, fit[0], fit[1]);
  const fitScoring = fit === undefined ? DEFAULT_PROFILE.fitScoring : fitArgs?.scoring;
  const balancedResources = balanced === undefined ? undefined : decodeBalancedArgs(r, balanced[0], balanced[1]);
  const addedAffinity = nodeAffinity === undefined ? undefined : decodeNodeAffinityArgs(r, ...nodeAffinity);
  const hardPodAffinityWeight =
    interPod === undefined ? undefined : decodeInterPodAffinityArgs(r, interPod[0], interPod[1]);
  const ignorePreferred = interPod === undefined ? undefined : decodeIgnorePreferredTerms(r, ...interPod);
  const spreadDefaulting =
    spread === undefined ? DEFAULT_PROFILE.spreadDefaulting : decodeSpreadArgs(r, spread[0], spread[1]);
  if (fitScoring === undefined || spreadDefaulting === undefined) return undefined;
  return {
    fitScoring,
    spreadDefaulting,
    ...(hardPodAffinityWeight === undefined ? {} : { hardPodAffinityWeight }),
    ...(ignorePreferred === undefined ? {} : { ignorePreferredTermsOfExistingPods: ignorePreferred }),
    ...(fitArgs?.ignored === undefined ? {} : { fitIgnored: fitArgs.ignored }),
    ...(balancedResources === undefined ? {} : { balancedResources }),
    ...(addedAffinity === undefined ? {} : { addedAffinity }),
  };
}
