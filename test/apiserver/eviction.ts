// POST pods/{name}/eviction — the logic of kube-apiserver's EvictionREST (pkg/registry/core/pod/storage/eviction.go,
// v1.31+ with PodDisruptionConditions GA):
//  1. Name in the body must match the URL (400). dryRun from the query and from body.deleteOptions are merged; when
//     both are set and differ the request fails (500, as the real server's plain error does).
//  2. Pod missing: 404. Pods that are Pending, Succeeded, Failed or already terminating skip every PDB check and are
//     deleted directly (a DisruptionTarget condition is added first), answering 201.
//  3. PDBs in the pod's namespace whose selector matches the pod's labels (`{}` matches all; a null selector none):
//     more than one: 500 "This pod has more than one PodDisruptionBudget, which the eviction subresource does not
//     support."; none: delete.
//  4. With one PDB: an unready pod is deleted without touching the budget when unhealthyPodEvictionPolicy is
//     AlwaysAllow, or (IfHealthyBudget, the default) when currentHealthy >= desiredHealthy > 0; otherwise
//     checkAndDecrement: observedGeneration < generation: 429 (Retry-After 10, "is still being processed");
//     disruptionsAllowed < 0 or more than 2000 disruptedPods: 403; disruptionsAllowed == 0: 429 with cause
//     DisruptionBudget "The disruption budget <name> needs <desired> healthy pods and has <current> currently";
//     else disruptionsAllowed-- and (unless dry-run) disruptedPods[pod] = now, written through the PDB's status.
//  5. Delete the pod (graceful or not, see the server's podTerminationDelayMs) and answer 201 Status Success.
// Everything before the pod delete happens atomically (the server is single-threaded), so the real server's
// conflict retries never trigger here.

import type { KubeApi, WriteResult } from './api.js';
import { rfc3339 } from './clock.js';
import { errors, successStatus } from './errors.js';
import { isPodReady, isTerminal, isTerminating, setCondition } from './pods.js';
import type { Selector } from './selectors.js';
import { compileLabelSelectorOrNothing } from './selectors.js';
import type { DeleteOptions, KubeObject, RawPdb, RawPod } from './types.js';
import { isObject } from './types.js';

const MAX_DISRUPTED_POD_SIZE = 2000;
const PDB_STORAGE = 'poddisruptionbudgets.policy';

function parseDeleteOptions(value: unknown): DeleteOptions {
  if (!isObject(value)) return {};
  const options: DeleteOptions = {};
  if (typeof value.gracePeriodSeconds === 'number') options.gracePeriodSeconds = value.gracePeriodSeconds;
  if (isObject(value.preconditions)) {
    const pre: DeleteOptions['preconditions'] = {};
    if (typeof value.preconditions.uid === 'string') pre.uid = value.preconditions.uid;
    if (typeof value.preconditions.resourceVersion === 'string')
      pre.resourceVersion = value.preconditions.resourceVersion;
    options.preconditions = pre;
  }
  if (Array.isArray(value.dryRun)) options.dryRun = value.dryRun.map(String);
  if (typeof value.propagationPolicy === 'string') options.propagationPolicy = value.propagationPolicy;
  return options;
}

function sameDryRun(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Compiled PDB selectors, per stored (immutable) PDB object. */
const selectors = new WeakMap<RawPdb, Selector>();

function pdbsForPod(api: KubeApi, pod: RawPod): RawPdb[] {
  const matching: RawPdb[] = [];
  for (const pdb of api.store.iterate<RawPdb>(PDB_STORAGE, pod.metadata.namespace ?? '')) {
    let selector = selectors.get(pdb);
    if (selector === undefined) {
      // An invalid selector matches no pod.
      selector = compileLabelSelectorOrNothing(pdb.spec?.selector);
      selectors.set(pdb, selector);
    }
    if (selector.matches(pod.metadata.labels)) matching.push(pdb);
  }
  return matching;
}

function tooManyRequestsStillProcessing(pdbName: string): Error {
  return errors.tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10, [
    { reason: 'DisruptionBudget', message: `The disruption budget ${pdbName} is still being processed by the server.` },
  ]);
}

/** The PDB status the disruption controller's UpdateDisruptionAllowedCondition writes. */
export function disruptionAllowedCondition(disruptionsAllowed: number, observedGeneration: number | undefined) {
  return disruptionsAllowed > 0
    ? { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', observedGeneration }
    : { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '', observedGeneration };
}

function checkAndDecrement(api: KubeApi, pdb: RawPdb, podName: string, dryRun: boolean): void {
  const name = pdb.metadata.name ?? '';
  const status = pdb.status ?? { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
  const gr = { group: 'policy', resource: 'poddisruptionbudget' };
  if ((status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) throw tooManyRequestsStillProcessing(name);
  if (status.disruptionsAllowed < 0) throw errors.forbidden(gr, name, 'pdb disruptions allowed is negative');
  if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_POD_SIZE) {
    throw errors.forbidden(gr, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  }
  if (status.disruptionsAllowed === 0) {
    throw errors.tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0, [
      {
        reason: 'DisruptionBudget',
        message: `The disruption budget ${name} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`,
      },
    ]);
  }
  if (dryRun) return;
  const now = api.now();
  const allowed = status.disruptionsAllowed - 1;
  let conditions = status.conditions;
  if (allowed === 0) {
    conditions = setCondition(conditions, disruptionAllowedCondition(0, status.observedGeneration), now);
  }
  const next: RawPdb = {
    ...pdb,
    status: {
      ...status,
      disruptionsAllowed: allowed,
      disruptedPods: { ...(status.disruptedPods ?? {}), [podName]: rfc3339(now) },
      ...(conditions !== undefined ? { conditions } : {}),
    },
  };
  api.commitUpdate(api.resource(PDB_STORAGE), next, pdb);
}

/** addConditionAndDeletePod: mark the pod DisruptionTarget=True, then delete it. */
function addConditionAndDelete(api: KubeApi, pod: RawPod, options: DeleteOptions): void {
  const podsDef = api.resource('pods');
  const dryRun = (options.dryRun ?? []).includes('All');
  let current: KubeObject = pod;
  let deleteOptions = options;
  if (!dryRun) {
    const pre = options.preconditions ?? {};
    const gr = { group: '', resource: 'Pod' };
    const name = pod.metadata.name ?? '';
    if (pre.uid && pre.uid !== pod.metadata.uid) {
      throw errors.conflict(
        gr,
        name,
        `the UID in the precondition (${pre.uid}) does not match the UID in record (${pod.metadata.uid ?? ''}). The object might have been deleted and then recreated`,
      );
    }
    if (pre.resourceVersion && pre.resourceVersion !== pod.metadata.resourceVersion) {
      throw errors.conflict(
        gr,
        name,
        `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${pod.metadata.resourceVersion ?? ''}). The object might have been modified`,
      );
    }
    const next: RawPod = {
      ...pod,
      status: {
        ...(pod.status ?? {}),
        conditions: setCondition(
          pod.status?.conditions,
          {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'EvictionByEvictionAPI',
            message: 'Eviction API: evicting',
            lastProbeTime: null,
          },
          api.now(),
        ),
      },
    };
    current = api.commitUpdate(podsDef, next, pod);
    if (pre.resourceVersion) {
      deleteOptions = {
        ...options,
        preconditions: { ...pre, resourceVersion: current.metadata.resourceVersion ?? '' },
      };
    }
  }
  api.delete(podsDef, current.metadata.namespace, current.metadata.name ?? '', deleteOptions);
}

function withResourceVersionPrecondition(options: DeleteOptions, rv: string | undefined): DeleteOptions {
  return { ...options, preconditions: { ...(options.preconditions ?? {}), resourceVersion: rv ?? '' } };
}

/** Handles POST .../pods/{name}/eviction. `queryDryRun` is the request's `dryRun` query parameter values. */
export function evictPod(
  api: KubeApi,
  namespace: string,
  name: string,
  body: unknown,
  queryDryRun: string[],
): WriteResult {
  if (!isObject(body)) throw errors.badRequest('the body of the request must be a policy/v1 Eviction');
  const bodyName = isObject(body.metadata) ? body.metadata.name : undefined;
  if (bodyName !== name) throw errors.badRequest('name in URL does not match name in Eviction object');
  let options = parseDeleteOptions(body.deleteOptions);
  const bodyDryRun = options.dryRun ?? [];
  if (bodyDryRun.length === 0) options = { ...options, dryRun: queryDryRun };
  else if (queryDryRun.length > 0 && !sameDryRun(queryDryRun, bodyDryRun)) {
    throw errors.internal(
      `Non-matching dry-run options in request and content: [${queryDryRun.join(' ')}] and [${bodyDryRun.join(' ')}]`,
    );
  }
  const dryRun = (options.dryRun ?? []).includes('All');
  const pod = api.store.get<RawPod>('pods', namespace, name);
  if (pod === undefined) throw errors.notFound({ group: '', resource: 'pods' }, name);
  const rvUnset = !options.preconditions?.resourceVersion;

  const phase = pod.status?.phase;
  if (phase === 'Pending' || isTerminal(pod) || isTerminating(pod)) {
    const enforceRv = !isTerminal(pod) && !isTerminating(pod);
    const deleteOptions =
      enforceRv && rvUnset ? withResourceVersionPrecondition(options, pod.metadata.resourceVersion) : options;
    addConditionAndDelete(api, pod, deleteOptions);
    return { code: 201, body: successStatus(201) };
  }

  const pdbs = pdbsForPod(api, pod);
  if (pdbs.length > 1) {
    return {
      code: 500,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        code: 500,
      },
    };
  }
  let deleteOptions = options;
  const pdb = pdbs[0];
  if (pdb !== undefined) {
    const status = pdb.status;
    const unhealthyBypass =
      !isPodReady(pod) &&
      (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow' ||
        (status !== undefined && status.currentHealthy >= status.desiredHealthy && status.desiredHealthy > 0));
    if (unhealthyBypass) {
      deleteOptions = withResourceVersionPrecondition(options, pod.metadata.resourceVersion);
    } else {
      checkAndDecrement(api, pdb, name, dryRun);
    }
  }
  addConditionAndDelete(api, pod, deleteOptions);
  return { code: 201, body: successStatus(201) };
}
