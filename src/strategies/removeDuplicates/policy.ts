// spec.strategies.removeDuplicates: its type, defaults and validation (the descheduler's RemoveDuplicatesArgs).
import type { PolicySection, StrategyConfig } from '../types.js';

export interface RemoveDuplicatesConfig extends StrategyConfig {
  /** Owner kinds (of the pod's controller reference, e.g. ReplicaSet, StatefulSet, Job) left alone. */
  readonly excludeOwnerKinds: readonly string[];
}

/** A Kubernetes kind: an upper-case letter, then letters and digits. */
function kindProblem(kind: string): string | undefined {
  return /^[A-Z][A-Za-z0-9]{0,62}$/.test(kind) ? undefined : 'must be a kind such as ReplicaSet or StatefulSet';
}

export const removeDuplicatesSection: PolicySection<RemoveDuplicatesConfig> = {
  fields: ['enabled', 'excludeOwnerKinds'],
  defaults: {
    // A section present runs (what a policy names is what runs); `enabled: false` keeps it off.
    enabled: true,
    // Every owner kind counts unless the policy names it.
    excludeOwnerKinds: [],
  },
  read: (r, section, path) => ({
    enabled: r.bool(section, 'enabled', path),
    excludeOwnerKinds: r.stringList(section, 'excludeOwnerKinds', path, kindProblem),
  }),
};
