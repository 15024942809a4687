// The converted policies checked as the API server would check them (our parser mirrors the CRD, docs/adr/0006):
// a value the CRD would refuse is the DeschedulerPolicy's, so it is reported at the field the user wrote there.
import { InputError } from '../errors.js';
import { checkPolicy } from '../policy/parse.js';
import type { StrategyRegistry } from '../strategies/registry.js';
import { policyObject } from './render.js';
import type { ConvertedPolicy } from './types.js';

/**
 * Our field names where a strategy renamed its plugin's argument (section key → plugin argument), so the rest of a
 * problem's path stays right.
 */
const RENAMED: Readonly<Record<string, string>> = {
  'podLifeTime.maxPodLifeTime': 'maxPodLifeTimeSeconds',
  'failedPods.minPodLifetime': 'minPodLifetimeSeconds',
  'lowNodeUtilization.usage': 'metricsUtilization',
  'lowNodeUtilization.prometheus': 'metricsUtilization.prometheus',
  'highNodeUtilization.usage': 'metricsUtilization',
  'topologySpread.includeSoftConstraints': 'constraints',
};

/** The DeschedulerPolicy field a problem at `field` of the converted spec comes from, if known. */
export function sourceOf(field: string, sources: ReadonlyMap<string, string>): string | undefined {
  let best: string | undefined;
  for (const key of sources.keys()) {
    const under = field === key || field.startsWith(`${key}.`) || field.startsWith(`${key}[`);
    if (under && (best === undefined || key.length > best.length)) best = key;
  }
  if (best === undefined) return undefined;
  let rest = field.slice(best.length);
  const strategy = /^spec\.strategies\.(\w+)$/.exec(best)?.[1];
  const arg = /^\.(\w+)/.exec(rest)?.[1];
  if (strategy !== undefined && arg !== undefined && RENAMED[`${strategy}.${arg}`] !== undefined)
    rest = `.${RENAMED[`${strategy}.${arg}`]!}${rest.slice(arg.length + 1)}`;
  return `${sources.get(best)!}${rest}`;
}

/** Every converted policy valid, or one InputError naming each DeschedulerPolicy field the CRD would refuse. */
export function checkConverted(
  policies: readonly ConvertedPolicy[],
  file: string,
  object: string | undefined,
  registry: StrategyRegistry,
): void {
  const problems: string[] = [];
  for (const p of policies) {
    for (const { field, problem } of checkPolicy(policyObject(p), registry).problems) {
      const from = sourceOf(field, p.sources);
      // A field with no source is one convert wrote itself: a converter bug, said as such rather than blamed on input.
      const line =
        from !== undefined
          ? `${from}: ${problem}`
          : `converted policy ${p.name} ${field}: ${problem} (a kube-rebalancer convert bug: please report it)`;
      if (!problems.includes(line)) problems.push(line);
    }
  }
  if (problems.length === 0) return;
  if (problems.length === 1) {
    const only = problems[0]!;
    const colon = only.indexOf(': ');
    throw new InputError(file, object, only.slice(0, colon), only.slice(colon + 2));
  }
  throw new InputError(
    file,
    object,
    undefined,
    `${problems.length} values the RebalancePolicy CRD would refuse: ${problems.join('; ')}`,
  );
}
