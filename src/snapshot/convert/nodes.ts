// Node and Namespace → NodeInfo and NamespaceInfo.
import { intern, internLabels, internResources } from '../../model/intern.js';
import { FieldError } from '../../errors.js';
import { isObj, typeName, type Obj } from '../../model/rawJson.js';
import type { NamespaceInfo, NodeImage, NodeInfo } from '../../model/types.js';
import {
  conditionTrue,
  EMPTY,
  getBool,
  getInt,
  getList,
  getObj,
  getStringMap,
  labelsOf,
  requireString,
  root,
} from './fields.js';
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
    images: nodeImages(status),
    ...declaredFeatures(status),
  };
}

/** status.declaredFeatures (1.36+), sorted; nothing when the node declares none. */
function declaredFeatures(status: Obj | undefined): { declaredFeatures?: readonly string[] } {
  const list = getList(status, 'declaredFeatures', 'status');
  if (list === undefined || list.length === 0) return {};
  const names = list.map((n, i) => {
    if (typeof n !== 'string') {
      throw new FieldError(`status.declaredFeatures[${i}]`, `must be a string (got ${typeName(n)})`);
    }
    return intern(n);
  });
  return { declaredFeatures: names.sort() };
}

/** Image lists by their raw text: nodes of one pool report the same images, so they share one list. */
const imageLists = new Map<string, readonly NodeImage[]>();
const MAX_IMAGE_LISTS = 4096;

/** node.status.images, for ImageLocality: the names each image is known by, and its size. */
function nodeImages(status: Obj | undefined): readonly NodeImage[] {
  const list = getList(status, 'images', 'status');
  if (list === undefined || list.length === 0) return EMPTY;
  const key = JSON.stringify(list);
  const known = imageLists.get(key);
  if (known !== undefined) return known;
  const images = list.map((raw, i): NodeImage => {
    const path = `status.images[${i}]`;
    if (!isObj(raw)) throw new FieldError(path, `must be an object (got ${typeName(raw)})`);
    const names = (getList(raw, 'names', path) ?? []).map((n, j) => {
      if (typeof n !== 'string') throw new FieldError(`${path}.names[${j}]`, `must be a string (got ${typeName(n)})`);
      return intern(n);
    });
    return { names, sizeBytes: getInt(raw, 'sizeBytes', path) ?? 0 };
  });
  if (imageLists.size >= MAX_IMAGE_LISTS) imageLists.clear();
  imageLists.set(key, images);
  return images;
}

export function convertNamespace(raw: unknown): NamespaceInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  // The API server always sets this label (and it cannot be changed), so namespaceSelectors can rely on it.
  const labels = { ...(getStringMap(meta, 'labels', 'metadata') ?? {}), 'kubernetes.io/metadata.name': name };
  return { name: intern(name), labels: internLabels(labels) };
}
