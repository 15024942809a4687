// How messages name a raw object.
import { isObj } from '../../model/rawJson.js';

const NAMESPACED = new Set(['Pod', 'PodDisruptionBudget', 'PersistentVolumeClaim', 'PodMetrics']);

/** `Kind namespace/name` (or `Kind name` for cluster-scoped kinds); undefined when the object has no name. */
export function describeObject(kind: string, raw: unknown): string | undefined {
  if (!isObj(raw)) return undefined;
  const meta = raw['metadata'];
  if (!isObj(meta)) return undefined;
  const name = meta['name'];
  if (typeof name !== 'string' || name === '') return undefined;
  if (!NAMESPACED.has(kind)) return `${kind} ${name}`;
  const ns = meta['namespace'];
  return `${kind} ${typeof ns === 'string' && ns !== '' ? ns : 'default'}/${name}`;
}
