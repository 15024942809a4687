// Which namespaces a policy looks at: `include` empty means all; `exclude` always wins; a labelSelector (the
// descheduler's namespaceLabelSelector) further keeps only the namespaces whose labels match.
import { matchesSelector } from '../model/labels.js';
import type { Labels } from '../model/types.js';
import type { PolicySpec } from '../policy/types.js';

export type NamespaceScope = (namespace: string) => boolean;

/** `labelsOf`: a namespace's labels (needed only when the policy has a labelSelector). */
export function namespaceScope(spec: PolicySpec, labelsOf?: (namespace: string) => Labels): NamespaceScope {
  const include = new Set(spec.namespaces.include);
  const exclude = new Set(spec.namespaces.exclude);
  const selector = spec.namespaces.labelSelector;
  const byName = (ns: string): boolean => !exclude.has(ns) && (include.size === 0 || include.has(ns));
  if (selector === undefined || labelsOf === undefined) return byName;
  return (ns) => byName(ns) && matchesSelector(selector, labelsOf(ns));
}
