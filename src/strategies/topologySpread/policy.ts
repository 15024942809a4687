// spec.strategies.topologySpread: its type, defaults and validation. A policy's defaultConstraints are the
// cluster-level constraints of the scheduler's configuration (PodTopologySpreadArgs.defaultConstraints): they apply
// to pods that have none, with the workload's labels as the selector.
import { labelKeyProblem } from '../../model/labels.js';
import { present, typeName, type Obj } from '../../model/rawJson.js';
import {
  MIN_DOMAINS_NEEDS_DO_NOT_SCHEDULE,
  NODE_INCLUSION_POLICIES,
  spreadConstraintDefaults,
  WHEN_UNSATISFIABLE,
  type SpreadConstraintOptions,
} from '../../model/spread.js';
import type { WhenUnsatisfiable } from '../../model/types.js';
import type { PolicySection, SectionReader, StrategyConfig } from '../types.js';

/** A TopologySpreadConstraint without labelSelector (the pod's workload is counted), defaults applied. */
export interface DefaultConstraint extends SpreadConstraintOptions {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: WhenUnsatisfiable;
}

export interface TopologySpreadConfig extends StrategyConfig {
  readonly includeSoftConstraints: boolean;
  readonly defaultConstraints: readonly DefaultConstraint[];
}

const CONSTRAINT_FIELDS = [
  'maxSkew',
  'topologyKey',
  'whenUnsatisfiable',
  'minDomains',
  'nodeAffinityPolicy',
  'nodeTaintsPolicy',
] as const;

function readDefaultConstraints(
  r: SectionReader,
  parent: Obj | undefined,
  path: string,
): DefaultConstraint[] | undefined {
  const value = parent?.['defaultConstraints'];
  if (value === undefined || value === null) return undefined;
  const field = `${path}.defaultConstraints`;
  if (!Array.isArray(value)) return r.fail(field, `must be a list (got ${typeName(value)})`);
  const out: DefaultConstraint[] = [];
  const seen = new Set<string>();
  value.forEach((item, i) => {
    const p = `${field}[${i}]`;
    // labelSelector is known only to say why it must not be set.
    const c = r.objectValue(item, p, [...CONSTRAINT_FIELDS, 'labelSelector']);
    if (c === undefined) return;
    if (Object.hasOwn(c, 'labelSelector')) {
      r.fail(`${p}.labelSelector`, "must not be set: a default constraint counts the pods of the pod's own workload");
    }
    const maxSkew = r.integer(c, 'maxSkew', p, 1);
    if (!present(c['maxSkew'])) r.fail(`${p}.maxSkew`, 'is required (an integer ≥ 1)');
    let topologyKey = r.string(c, 'topologyKey', p);
    if (!present(c['topologyKey']) || topologyKey === '') {
      r.fail(`${p}.topologyKey`, 'is required');
      topologyKey = undefined;
    } else if (topologyKey !== undefined) {
      const problem = labelKeyProblem(topologyKey);
      if (problem !== undefined) topologyKey = r.fail(`${p}.topologyKey`, problem);
    }
    const whenUnsatisfiable = r.oneOf(c, 'whenUnsatisfiable', p, WHEN_UNSATISFIABLE);
    if (!present(c['whenUnsatisfiable']))
      r.fail(`${p}.whenUnsatisfiable`, `is required (${WHEN_UNSATISFIABLE.join(' or ')})`);
    const minDomains = r.integer(c, 'minDomains', p, 1);
    if (minDomains !== undefined && whenUnsatisfiable !== undefined && whenUnsatisfiable !== 'DoNotSchedule') {
      r.fail(`${p}.minDomains`, MIN_DOMAINS_NEEDS_DO_NOT_SCHEDULE);
    }
    const nodeAffinityPolicy = r.oneOf(c, 'nodeAffinityPolicy', p, NODE_INCLUSION_POLICIES);
    const nodeTaintsPolicy = r.oneOf(c, 'nodeTaintsPolicy', p, NODE_INCLUSION_POLICIES);
    if (topologyKey !== undefined && whenUnsatisfiable !== undefined) {
      const key = `${topologyKey} ${whenUnsatisfiable}`;
      if (seen.has(key)) r.fail(p, `duplicate constraint for topologyKey ${topologyKey} and ${whenUnsatisfiable}`);
      seen.add(key);
    }
    if (maxSkew === undefined || topologyKey === undefined || whenUnsatisfiable === undefined) return;
    out.push({
      maxSkew,
      topologyKey,
      whenUnsatisfiable,
      ...spreadConstraintDefaults(minDomains, nodeAffinityPolicy, nodeTaintsPolicy),
    });
  });
  return out;
}

export const topologySpreadSection: PolicySection<TopologySpreadConfig> = {
  fields: ['enabled', 'includeSoftConstraints', 'defaultConstraints'],
  defaults: {
    // A section present runs (what a policy names is what runs); `enabled: false` keeps it off.
    enabled: true,
    // ScheduleAnyway constraints are preferences the scheduler itself may break, so they are only reported.
    includeSoftConstraints: false,
    // No cluster-level constraints unless the scheduler was configured with some.
    defaultConstraints: [],
  },
  read: (r, section, path) => ({
    enabled: r.bool(section, 'enabled', path),
    includeSoftConstraints: r.bool(section, 'includeSoftConstraints', path),
    defaultConstraints: readDefaultConstraints(r, section, path),
  }),
};
