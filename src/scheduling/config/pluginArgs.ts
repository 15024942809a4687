// `profiles[].pluginConfig`: each entry's args handed to its plugin's decoder (plugins/<plugin>/args.ts), which
// validates them with field paths and fills in the defaults. The parser knows no plugin's fields.
import type { Obj } from '../../model/rawJson.js';
import { joinPath, type Reader } from '../framework/argsReader.js';
import { decodeInterPodAffinityArgs } from '../plugins/interPodAffinity/args.js';
import { decodeFitArgs } from '../plugins/nodeResources/args.js';
import { decodeSpreadArgs } from '../plugins/podTopologySpread/args.js';
import { DEFAULT_PROFILE, type SchedulerProfile } from '../profile.js';

/** What the plugins' args set in a profile; undefined fields keep the defaults. */
export type ArgsSettings = Pick<SchedulerProfile, 'fitScoring' | 'spreadDefaulting' | 'hardPodAffinityWeight'>;

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
  const fit = entries.get('NodeResourcesFit');
  const interPod = entries.get('InterPodAffinity');
  const spread = entries.get('PodTopologySpread');
  const fitScoring = fit === undefined ? DEFAULT_PROFILE.fitScoring : decodeFitArgs(r, fit[0], fit[1]);
  const hardPodAffinityWeight =
    interPod === undefined ? undefined : decodeInterPodAffinityArgs(r, interPod[0], interPod[1]);
  const spreadDefaulting =
    spread === undefined ? DEFAULT_PROFILE.spreadDefaulting : decodeSpreadArgs(r, spread[0], spread[1]);
  if (fitScoring === undefined || spreadDefaulting === undefined) return undefined;
  return {
    fitScoring,
    spreadDefaulting,
    ...(hardPodAffinityWeight === undefined ? {} : { hardPodAffinityWeight }),
  };
}
