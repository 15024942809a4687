// What a pod's spec says beyond resources and selectors that decides whether (and where) the scheduler places it:
// scheduling gates, DRA resource claims, and the node features it needs (NodeDeclaredFeatures). Nearly every pod has
// none of them, so each is absent rather than empty.
import { intern } from '../../model/intern.js';
import { isObj, typeName, type Obj } from '../../model/rawJson.js';
import { FieldError } from '../../errors.js';
import { getList } from './fields.js';

/** spec.schedulingGates is not empty (PodSchedulingReadiness, GA 1.30). */
export function schedulingGated(spec: Obj | undefined): boolean {
  const gates = getList(spec, 'schedulingGates', 'spec');
  return gates !== undefined && gates.length > 0;
}

/** The names of spec.resourceClaims; undefined when none. */
export function resourceClaimNames(spec: Obj | undefined): readonly string[] | undefined {
  const list = getList(spec, 'resourceClaims', 'spec');
  if (list === undefined || list.length === 0) return undefined;
  return list.map((c, i) => {
    if (!isObj(c) || typeof c['name'] !== 'string') {
      throw new FieldError(
        `spec.resourceClaims[${i}].name`,
        `must be a string (got ${typeName(isObj(c) ? c['name'] : c)})`,
      );
    }
    return intern(c['name']);
  });
}

function anyContainer(spec: Obj | undefined, test: (c: Obj) => boolean): boolean {
  for (const key of ['containers', 'initContainers'] as const) {
    const list = spec?.[key];
    if (!Array.isArray(list)) continue;
    for (const c of list as unknown[]) if (isObj(c) && test(c)) return true;
  }
  return false;
}

function anyIn(list: unknown, test: (item: Obj) => boolean): boolean {
  if (!Array.isArray(list)) return false;
  for (const item of list as unknown[]) if (isObj(item) && test(item)) return true;
  return false;
}

const restartsAll = (c: Obj): boolean => anyIn(c['restartPolicyRules'], (r) => r['action'] === 'RestartAllContainers');
const bindsWithOptions = (c: Obj): boolean =>
  anyIn(c['volumeMounts'], (m) => Array.isArray(m['bindMountOptions']) && m['bindMountOptions'].length > 0);

/**
 * The node features the pod needs, inferred from its spec as the 1.37 scheduler's NodeDeclaredFeatures plugin does
 * (component-helpers nodedeclaredfeatures, the features whose InferForScheduling can be true): a container restart
 * rule restarting all containers, a host-network pod in a user namespace, bind mount options on a volume mount.
 * Sorted; undefined when none.
 */
export function requiredNodeFeatures(spec: Obj | undefined): readonly string[] | undefined {
  let out: string[] | undefined;
  if (anyContainer(spec, restartsAll)) (out ??= []).push('RestartAllContainersOnContainerExits');
  if (spec?.['hostNetwork'] === true && spec['hostUsers'] === false)
    (out ??= []).push('UserNamespacesHostNetworkSupport');
  if (anyContainer(spec, bindsWithOptions)) (out ??= []).push('VolumeBindMountOptions');
  return out?.sort().map(intern);
}
