// CSINode → CsiNodeInfo: how many volumes of each CSI driver a node can attach (the NodeVolumeLimits filter's limit).
import { FieldError } from '../../errors.js';
import { intern } from '../../model/intern.js';
import { isObj, typeName } from '../../model/rawJson.js';
import type { CsiNodeInfo } from '../../model/types.js';
import { getInt, getList, getObj, requireString, root } from './fields.js';

export function convertCsiNode(raw: unknown): CsiNodeInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const spec = getObj(o, 'spec', '');
  const limits: Record<string, number> = {};
  (getList(spec, 'drivers', 'spec') ?? []).forEach((d, i) => {
    const path = `spec.drivers[${i}]`;
    if (!isObj(d)) throw new FieldError(path, `must be an object (got ${typeName(d)})`);
    const driver = requireString(d, 'name', path);
    // A driver without allocatable.count has no limit of its own (the node's attachable-volumes-csi-* may give one).
    const count = getInt(getObj(d, 'allocatable', path), 'count', `${path}.allocatable`);
    if (count === undefined) return;
    if (count < 0) throw new FieldError(`${path}.allocatable.count`, 'must be 0 or more');
    limits[intern(driver)] = count;
  });
  return { name: intern(name), limits };
}
