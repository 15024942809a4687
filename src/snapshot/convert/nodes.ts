// Node and Namespace → NodeInfo and NamespaceInfo.
import { intern, internLabels, internResources } from '../../model/intern.js';
import type { NamespaceInfo, NodeInfo } from '../../model/types.js';
import { conditionTrue, getBool, getObj, getStringMap, labelsOf, requireString, root } from './fields.js';
import { resourceList } from './resources.js';
import { taints } from './taints.js';

export function convertNode(raw: unknown): NodeInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const spec = getObj(o, 'spec', '');
  const status = getObj(o, 'status', '');
  return {
    name: intern(name),
    labels: labelsOf(meta),
    taints: taints(spec),
    unschedulable: getBool(spec, 'unschedulable', 'spec') ?? false,
    ready: conditionTrue(status, 'Ready', 'status'),
    allocatable: internResources(resourceList(status, 'allocatable', 'status') ?? {}),
  };
}

export function convertNamespace(raw: unknown): NamespaceInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  // The API server always sets this label (and it cannot be changed), so namespaceSelectors can rely on it.
  const labels = { ...(getStringMap(meta, 'labels', 'metadata') ?? {}), 'kubernetes.io/metadata.name': name };
  return { name: intern(name), labels: internLabels(labels) };
}
