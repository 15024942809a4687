// PersistentVolume, PersistentVolumeClaim and StorageClass → the model's volume objects (the node constraints of a
// pod's volumes are resolved later, once the snapshot's volumes are known: model/volumes.ts).
import { FieldError } from '../../errors.js';
import { intern } from '../../model/intern.js';
import { labelKeyProblem } from '../../model/labels.js';
import { isObj, typeName } from '../../model/rawJson.js';
import type { PersistentVolumeClaimInfo, PersistentVolumeInfo, StorageClassInfo } from '../../model/types.js';
import { getEnum, getList, getObj, getString, requireString, root } from './fields.js';
import { requiredTerms, stringValues, termsOf } from './nodeSelectors.js';

export function convertPersistentVolume(raw: unknown): PersistentVolumeInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const spec = getObj(o, 'spec', '');
  const required = getObj(getObj(spec, 'nodeAffinity', 'spec'), 'required', 'spec.nodeAffinity');
  let nodeAffinity: PersistentVolumeInfo['nodeAffinity'];
  if (required !== undefined) nodeAffinity = requiredTerms(required, 'spec.nodeAffinity.required');
  const storageClassName = getString(spec, 'storageClassName', 'spec') || undefined;
  const info: PersistentVolumeInfo = {
    name: intern(name),
    storageClassName: storageClassName && intern(storageClassName),
    nodeAffinity,
  };
  const csi = getObj(spec, 'csi', 'spec');
  if (csi === undefined) return info;
  const driver = requireString(csi, 'driver', 'spec.csi');
  const handle = requireString(csi, 'volumeHandle', 'spec.csi');
  return { ...info, csi: { driver: intern(driver), handle } };
}

export function convertPersistentVolumeClaim(raw: unknown): PersistentVolumeClaimInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const namespace = intern(getString(meta, 'namespace', 'metadata') || 'default');
  const spec = getObj(o, 'spec', '');
  const volumeName = getString(spec, 'volumeName', 'spec') || undefined;
  const storageClassName = getString(spec, 'storageClassName', 'spec') || undefined;
  const accessModes = getList(spec, 'accessModes', 'spec') ?? [];
  accessModes.forEach((mode, i) => {
    if (typeof mode !== 'string')
      throw new FieldError(`spec.accessModes[${i}]`, `must be a string (got ${typeName(mode)})`);
  });
  return {
    namespace,
    name: intern(name),
    volumeName: volumeName && intern(volumeName),
    storageClassName: storageClassName && intern(storageClassName),
    readWriteOncePod: accessModes.includes('ReadWriteOncePod'),
  };
}

const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'] as const;

export function convertStorageClass(raw: unknown): StorageClassInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const volumeBindingMode = getEnum(o, 'volumeBindingMode', '', BINDING_MODES) ?? 'Immediate';
  const rawTopologies = getList(o, 'allowedTopologies', '');
  let allowedTopologies: StorageClassInfo['allowedTopologies'];
  if (rawTopologies !== undefined && rawTopologies.length > 0) {
    // A TopologySelectorTerm's matchLabelExpressions are `key In values` requirements, ANDed.
    const asTerms = rawTopologies.map((t, i) => {
      const path = `allowedTopologies[${i}]`;
      if (!isObj(t)) throw new FieldError(path, `must be an object with matchLabelExpressions (got ${typeName(t)})`);
      const expressions = (getList(t, 'matchLabelExpressions', path) ?? []).map((e, j) => {
        const ePath = `${path}.matchLabelExpressions[${j}]`;
        if (!isObj(e)) throw new FieldError(ePath, `must be an object with key and values (got ${typeName(e)})`);
        const key = requireString(e, 'key', ePath);
        const problem = labelKeyProblem(key);
        if (problem !== undefined) throw new FieldError(`${ePath}.key`, problem);
        const values = stringValues(e, ePath);
        if (values.length === 0) throw new FieldError(`${ePath}.values`, 'must be non-empty');
        return { key, operator: 'In', values };
      });
      return { matchExpressions: expressions };
    });
    allowedTopologies = termsOf(asTerms, 'allowedTopologies');
  }
  const provisioner = getString(o, 'provisioner', '') || undefined;
  return { name: intern(name), provisioner: provisioner && intern(provisioner), volumeBindingMode, allowedTopologies };
}
