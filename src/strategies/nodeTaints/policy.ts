// spec.strategies.nodeTaints: its type, defaults and validation.
import { labelKeyProblem, labelValueProblem } from '../../model/labels.js';
import type { PolicySection, StrategyConfig } from '../types.js';

/** An excludedTaints or includedTaints entry: "key" matches any value, "key=value" only that value. */
export interface TaintMatcher {
  readonly key: string;
  readonly value: string | undefined;
}

export interface NodeTaintsConfig extends StrategyConfig {
  readonly includePreferNoSchedule: boolean;
  readonly excludedTaints: readonly TaintMatcher[];
  /** When not empty, only these taints count (the descheduler's includedTaints); excludedTaints still applies. */
  readonly includedTaints: readonly TaintMatcher[];
}

function taintMatcherProblem(entry: string): string | undefined {
  const eq = entry.indexOf('=');
  const key = eq < 0 ? entry : entry.slice(0, eq);
  const keyProblem = labelKeyProblem(key);
  if (keyProblem !== undefined) return `must be "key" or "key=value": ${keyProblem.replace('label key', 'taint key')}`;
  if (eq >= 0) {
    const valueProblem = labelValueProblem(entry.slice(eq + 1));
    if (valueProblem !== undefined)
      return `must be "key" or "key=value": ${valueProblem.replace('label value', 'taint value')}`;
  }
  return undefined;
}

function toTaintMatcher(entry: string): TaintMatcher {
  const eq = entry.indexOf('=');
  return eq < 0 ? { key: entry, value: undefined } : { key: entry.slice(0, eq), value: entry.slice(eq + 1) };
}

export const nodeTaintsSection: PolicySection<NodeTaintsConfig> = {
  fields: ['enabled', 'includePreferNoSchedule', 'excludedTaints', 'includedTaints'],
  defaults: {
    // A section present runs (what a policy names is what runs); `enabled: false` keeps it off.
    enabled: true,
    // PreferNoSchedule is a soft taint the scheduler may legitimately place pods on.
    includePreferNoSchedule: false,
    // Every taint counts unless the policy names it.
    excludedTaints: [],
    // Empty: every taint counts.
    includedTaints: [],
  },
  read: (r, section, path) => ({
    enabled: r.bool(section, 'enabled', path),
    includePreferNoSchedule: r.bool(section, 'includePreferNoSchedule', path),
    excludedTaints: r.stringList(section, 'excludedTaints', path, taintMatcherProblem)?.map(toTaintMatcher),
    includedTaints: r.stringList(section, 'includedTaints', path, taintMatcherProblem)?.map(toTaintMatcher),
  }),
};
