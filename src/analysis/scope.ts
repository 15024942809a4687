// Which namespaces a policy looks at: `include` empty means all; `exclude` always wins.
import type { PolicySpec } from '../policy/types.js';

export type NamespaceScope = (namespace: string) => boolean;

export function namespaceScope(spec: PolicySpec): NamespaceScope {
  const include = new Set(spec.namespaces.include);
  const exclude = new Set(spec.namespaces.exclude);
  return (ns) => !exclude.has(ns) && (include.size === 0 || include.has(ns));
}
