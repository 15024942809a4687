// PriorityClasses, and the priority of a pod that names one instead of carrying spec.priority.
import { FieldError } from '../../errors.js';
import { intern } from '../../model/intern.js';
import type { PriorityClassInfo } from '../../model/types.js';
import { getBool, getInt, getObj, requireString, root } from './fields.js';

/** Resolves a pod's priority from its priorityClassName (undefined when it has none); see makePriorityResolver. */
export type PriorityResolver = (className: string | undefined) => number;

export function convertPriorityClass(raw: unknown): PriorityClassInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const value = getInt(o, 'value', '');
  if (value === undefined) throw new FieldError('value', 'is required and must be an integer');
  return { name: intern(name), value, globalDefault: getBool(o, 'globalDefault', '') ?? false };
}

/** The values of the built-in classes, which exist in every cluster even when a snapshot does not list them. */
export const BUILTIN_PRIORITY_CLASSES: ReadonlyMap<string, number> = new Map([
  ['system-cluster-critical', 2_000_000_000],
  ['system-node-critical', 2_000_001_000],
]);

/**
 * priorityClassName → value, for pods without spec.priority: the named class (or a built-in one); otherwise, and for
 * pods without a class, the globalDefault class (the lowest-valued one if several claim it, as the admission plugin
 * picks); otherwise 0.
 */
export function makePriorityResolver(classes: readonly PriorityClassInfo[]): PriorityResolver {
  const byName = new Map<string, number>();
  let globalDefault: number | undefined;
  for (const c of classes) {
    byName.set(c.name, c.value);
    if (c.globalDefault && (globalDefault === undefined || c.value < globalDefault)) globalDefault = c.value;
  }
  return (className) => {
    if (className !== undefined) {
      const value = byName.get(className) ?? BUILTIN_PRIORITY_CLASSES.get(className);
      if (value !== undefined) return value;
    }
    return globalDefault ?? 0;
  };
}
