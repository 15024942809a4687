// The DefaultEvictor's arguments and the DeschedulerPolicy's top-level fields: what becomes spec.eviction (and the
// policy's scope), and a note for each one with no counterpart saying why.
import { stringItems as strings, type Obj, isObj } from '../model/rawJson.js';
import { DEFAULT_SPEC } from '../policy/defaults.js';
import { PLUGIN_ARGS, TOP_ARGS, fieldPath } from './argTypes.js';
import type { EvictorSettings } from './types.js';

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function obj(value: unknown): Obj {
  return isObj(value) ? value : {};
}

/** Where an evictor argument was written: `profiles[0].pluginConfig[0].args.minPodAge`, or v1alpha1's top level. */
function argPath(evictor: EvictorSettings, key: string): string {
  return fieldPath(evictor.path, key);
}

/** Each DefaultEvictor argument and top-level field with no counterpart: one line saying why. */
export function evictorNotes(evictor: EvictorSettings): string[] {
  const args = evictor.args;
  const top = evictor.top;
  const out: string[] = [];
  const note = (field: string, why: string): void => void out.push(`${field}: ${why}`);
  if (!evictor.v1alpha1) {
    for (const field of Object.keys(args))
      if (PLUGIN_ARGS['DefaultEvictor']![field] === undefined)
        note(`DefaultEvictor.${field}`, 'not carried over: not an argument of the descheduler v0.36 DefaultEvictor');
    for (const field of Object.keys(top))
      if (!['apiVersion', 'kind', 'profiles', ...Object.keys(TOP_ARGS)].includes(field))
        note(field, 'not carried over: not a field of the descheduler v0.36 DeschedulerPolicy');
  }
  if (typeof top['nodeSelector'] === 'string' && top['nodeSelector'].trim() !== '')
    note(
      'nodeSelector',
      'carried as spec.nodeSelector: only pods on matching nodes are evicted; utilization and spread are still ' +
        'measured over every node and a replacement may land on any node the scheduler picks, as it does (the ' +
        "descheduler's nodeFit looked at matching nodes only)",
    );
  // The descheduler reads the evictor's own selector only in its nodeFit check (ReadyNodes with it), never filling
  // it from the policy's nodeSelector (v0.26 to v0.36).
  const evictorNodes = args['nodeSelector'];
  if (typeof evictorNodes === 'string' && evictorNodes.trim() !== '') {
    if (args['nodeFit'] === true)
      note(
        'DefaultEvictor.nodeSelector',
        `not carried over: with nodeFit the descheduler keeps a pod unless it fits another ready node matching ` +
          `${JSON.stringify(evictorNodes)}; eviction.nodeFit here simulates the scheduler's choice over every node, so ` +
          'a pod that fits only outside those nodes may be evicted and its replacement land there (no eviction field ' +
          'limits the nodes a replacement may land on)',
      );
    else
      note(
        'DefaultEvictor.nodeSelector',
        'no counterpart needed: the descheduler reads it only for nodeFit, which this DefaultEvictor leaves off',
      );
  }
  for (const [field, protection] of Object.entries(DEPRECATED_PROTECTIONS)) {
    if (args[field] === true && PROTECTION_WHY[protection] !== undefined) note(field, PROTECTION_WHY[protection]);
  }
  if (systemCriticalLifted(evictor) && evictor.args['priorityThreshold'] !== undefined)
    note(
      'priorityThreshold',
      'not carried over: with the SystemCriticalPods protection off the descheduler applies no priority threshold, ' +
        'so none is carried (eviction.priorityThreshold is set above every pod priority)',
    );
  out.push(...protectionNotes(obj(args['podProtections'])));
  if (top['evictionFailureEventNotification'] !== undefined)
    note(
      'evictionFailureEventNotification',
      'no counterpart needed: a failed eviction is always an Event (RebalanceEvictionFailed)',
    );
  // metricsProviders' Prometheus source goes with the strategy that reads it (convert/prometheus.ts).
  if (top['metricsCollector'] !== undefined)
    note(
      'metricsCollector',
      'no counterpart needed: the utilization strategies with usage: Metrics read metrics.k8s.io themselves',
    );
  return out;
}

/** The DefaultEvictor's deprecated booleans and the pod protection each lifts (or, for ignorePodsWithoutPDB, adds). */
const DEPRECATED_PROTECTIONS: Readonly<Record<string, string>> = {
  evictDaemonSetPods: 'DaemonSetPods',
};

/** Why a pod protection the descheduler lets one lift (or add) has no counterpart here. */
const PROTECTION_WHY: Readonly<Record<string, string>> = {
  DaemonSetPods: 'not carried over: a DaemonSet pod would come back on the same node, so none is evicted',
};

/** Protections carried over as spec.eviction fields (see evictionOf), by list. */
// PodsWithResourceClaims needs no field: kube-rebalancer never evicts a running pod with DRA claims (where its
// replacement can get its devices is not modelled), which is what the protection asks for.
const MAPPED: Readonly<Record<string, readonly string[]>> = {
  extraEnabled: ['PodsWithPVC', 'PodsWithoutPDB', 'PodsWithResourceClaims'],
  defaultDisabled: ['PodsWithLocalStorage', 'FailedBarePods', 'SystemCriticalPods'],
};

/** DefaultEvictor's podProtections (v0.34 on): what evictionOf does not carry over. */
function protectionNotes(protections: Obj): string[] {
  const out: string[] = [];
  for (const list of ['extraEnabled', 'defaultDisabled'] as const) {
    for (const p of strings(protections[list])) {
      if (MAPPED[list]!.includes(p)) continue;
      out.push(
        `podProtections.${list} ${p}: ${PROTECTION_WHY[p] ?? 'not carried over: not a protection of the descheduler v0.36'}`,
      );
    }
  }
  if (
    obj(protections['config'])['PodsWithPVC'] !== undefined &&
    !strings(protections['extraEnabled']).includes('PodsWithPVC')
  )
    out.push(
      'podProtections.config.PodsWithPVC: not carried over: it has no effect without PodsWithPVC in extraEnabled, ' +
        'in the descheduler too',
    );
  return out;
}

/** The descheduler's settings that mean the same as one of spec.eviction's, and where each was written. */
export function evictionOf(
  evictor: EvictorSettings,
  scope: { priorityThreshold: unknown; nodeFit: unknown; nodeLimit: unknown; path: string },
  notes: string[],
  sources: Map<string, string>,
): Obj {
  const args = evictor.args;
  const top = evictor.top;
  const eviction: Obj = {};
  const set = (key: string, value: unknown, from: string): void => {
    eviction[key] = value;
    sources.set(`spec.eviction.${key}`, from);
  };
  // v1alpha1 carries the priority threshold and nodeFit per strategy (the scope); v1alpha2 in the evictor.
  const thresholdPath = evictor.v1alpha1 ? scope.path : argPath(evictor, 'priorityThreshold');
  const threshold = obj(evictor.v1alpha1 ? scope.priorityThreshold : args['priorityThreshold']);
  if (systemCriticalLifted(evictor)) {
    // No priority protection at all, as the descheduler has then: the opt-in and a threshold no pod reaches.
    const from = strings(obj(args['podProtections'])['defaultDisabled']).includes('SystemCriticalPods')
      ? `${argPath(evictor, 'podProtections')}.defaultDisabled`
      : argPath(evictor, 'evictSystemCriticalPods');
    set('evictSystemCriticalPods', true, from);
    set('priorityThreshold', { value: ABOVE_EVERY_POD }, from);
  } else if (threshold['value'] !== undefined && threshold['value'] !== null)
    set('priorityThreshold', { value: threshold['value'] }, thresholdPath);
  else if (typeof threshold['name'] === 'string' && threshold['name'] !== '') {
    if (DNS_SUBDOMAIN.test(threshold['name']))
      set('priorityThreshold', { className: threshold['name'] }, thresholdPath);
    else
      notes.push(
        `priorityThreshold.name: ${JSON.stringify(threshold['name'])} is not a valid PriorityClass name (a lowercase ` +
          'DNS subdomain), so no cluster can have it; the default threshold (system-cluster-critical) applies',
      );
  }
  const limits: ReadonlyArray<readonly [string, string]> = [
    ['maxNoOfPodsToEvictPerNode', 'maxPerNode'],
    ['maxNoOfPodsToEvictPerNamespace', 'maxPerNamespace'],
    ['maxNoOfPodsToEvictTotal', 'maxPerCycle'],
  ];
  for (const [from, to] of limits) if (top[from] !== undefined && top[from] !== null) set(to, top[from], from);
  // Both caps hold in the descheduler (the plugin's evictionLimits.node and the policy's per-node limit): the smaller.
  const nodeLimit = scope.nodeLimit;
  const perNode = eviction['maxPerNode'];
  const smaller = typeof nodeLimit !== 'number' || typeof perNode !== 'number' || nodeLimit < perNode;
  if (nodeLimit !== undefined && smaller)
    set('maxPerNode', nodeLimit, fieldPath(fieldPath(scope.path, 'evictionLimits'), 'node'));
  protectionSettings(evictor, set);
  const nodeFit = evictor.v1alpha1 ? scope.nodeFit : args['nodeFit'];
  if (nodeFit !== undefined && nodeFit !== null)
    set('nodeFit', nodeFit, evictor.v1alpha1 ? scope.path : argPath(evictor, 'nodeFit'));
  if (args['minReplicas'] !== undefined && args['minReplicas'] !== null)
    set('minReplicas', args['minReplicas'], argPath(evictor, 'minReplicas'));
  if (top['gracePeriodSeconds'] !== undefined && top['gracePeriodSeconds'] !== null)
    set('gracePeriodSeconds', top['gracePeriodSeconds'], 'gracePeriodSeconds');
  introduceDefaults(eviction, args, evictor, notes, sources);
  return eviction;
}

/** Above system-node-critical (2000001000), the highest priority a pod can have. */
const ABOVE_EVERY_POD = 2_000_001_001;

/** The DefaultEvictor's SystemCriticalPods protection is off (its deprecated boolean, or podProtections). */
function systemCriticalLifted(evictor: EvictorSettings): boolean {
  if (evictor.v1alpha1) return evictor.args['evictSystemCriticalPods'] === true;
  const protections = obj(evictor.args['podProtections']);
  return (
    evictor.args['evictSystemCriticalPods'] === true ||
    strings(protections['defaultDisabled']).includes('SystemCriticalPods')
  );
}

/** The DefaultEvictor's protections (its booleans and podProtections) that are spec.eviction fields here. */
function protectionSettings(evictor: EvictorSettings, set: (key: string, value: unknown, from: string) => void): void {
  const args = evictor.args;
  const protections = obj(args['podProtections']);
  const protectionsPath = argPath(evictor, 'podProtections');
  if (args['evictLocalStoragePods'] !== undefined)
    set('evictLocalStoragePods', args['evictLocalStoragePods'], argPath(evictor, 'evictLocalStoragePods'));
  if (strings(protections['defaultDisabled']).includes('PodsWithLocalStorage'))
    set('evictLocalStoragePods', true, `${protectionsPath}.defaultDisabled`);
  if (typeof args['ignorePvcPods'] === 'boolean')
    set('evictPodsWithPVC', !args['ignorePvcPods'], argPath(evictor, 'ignorePvcPods'));
  if (strings(protections['extraEnabled']).includes('PodsWithPVC')) {
    set('evictPodsWithPVC', false, `${protectionsPath}.extraEnabled`);
    const classes = obj(obj(protections['config'])['PodsWithPVC'])['protectedStorageClasses'];
    if (Array.isArray(classes) && classes.length > 0)
      set(
        'protectedStorageClasses',
        classes.map((c) => obj(c)['name']),
        `${protectionsPath}.config.PodsWithPVC.protectedStorageClasses`,
      );
  }
  // The descheduler's filter lets the annotated pod through unless Mandatory (unset is Preferred there); v1alpha1
  // policies predate the annotation, so ours (it protects) stays.
  if (!evictor.v1alpha1)
    set('noEvictionPolicy', args['noEvictionPolicy'] ?? 'Preferred', argPath(evictor, 'noEvictionPolicy'));
  if (args['ignorePodsWithoutPDB'] === true)
    set('evictPodsWithoutPDB', false, argPath(evictor, 'ignorePodsWithoutPDB'));
  if (strings(protections['extraEnabled']).includes('PodsWithoutPDB'))
    set('evictPodsWithoutPDB', false, `${protectionsPath}.extraEnabled`);
  // Failed bare pods only: the Running-bare-pod protection (evictBarePods) stays as it is.
  if (args['evictFailedBarePods'] === true) set('evictFailedBarePods', true, argPath(evictor, 'evictFailedBarePods'));
  if (strings(protections['defaultDisabled']).includes('FailedBarePods'))
    set('evictFailedBarePods', true, `${protectionsPath}.defaultDisabled`);
}

/** A duration held in milliseconds as the Go-style string the CRD takes (300000 → "5m"). */
function goDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s % 3600 === 0 && s > 0) return `${s / 3600}h`;
  if (s % 60 === 0 && s > 0) return `${s / 60}m`;
  return `${s}s`;
}

/** kube-rebalancer's eviction limits the descheduler has no counterpart of, and why a user may want to change each. */
const INTRODUCED: ReadonlyArray<readonly [string, string]> = [
  ['maxPerCycle', 'the descheduler limits a run only with maxNoOfPodsToEvictTotal'],
  ['maxPerNode', 'the descheduler limits a node only with maxNoOfPodsToEvictPerNode'],
  ['maxPerNamespace', 'the descheduler limits a namespace only with maxNoOfPodsToEvictPerNamespace'],
  ['maxPerWorkload', 'the descheduler has no limit per workload (replicas out at once until replacements are Ready)'],
];

/**
 * kube-rebalancer's eviction defaults that the descheduler does not have, written out (so the policy reads as what
 * runs) each with a note: these make the converted policy evict fewer pods per cycle than the descheduler did.
 */
function introduceDefaults(
  eviction: Obj,
  args: Obj,
  evictor: EvictorSettings,
  notes: string[],
  sources: Map<string, string>,
): void {
  const d = DEFAULT_SPEC.eviction;
  for (const [key, why] of INTRODUCED) {
    if (eviction[key] !== undefined) continue;
    eviction[key] = d[key as 'maxPerCycle'];
    notes.push(`eviction.${key}: ${eviction[key] as number}, kube-rebalancer's default: ${why} (0 allows none)`);
  }
  if (args['minPodAge'] !== undefined && args['minPodAge'] !== null) {
    eviction['minPodAge'] = args['minPodAge'];
    sources.set('spec.eviction.minPodAge', argPath(evictor, 'minPodAge'));
  } else {
    eviction['minPodAge'] = goDuration(d.minPodAgeMs);
    notes.push(
      `eviction.minPodAge: ${goDuration(d.minPodAgeMs)}, kube-rebalancer's default: the descheduler sets no minimum ` +
        'age unless DefaultEvictor.minPodAge does ("0s" to evict pods of any age)',
    );
  }
  eviction['waitForReplacement'] = d.waitForReplacement;
  eviction['replacementTimeout'] = goDuration(d.replacementTimeoutMs);
  eviction['cooldown'] = goDuration(d.cooldownMs);
  notes.push(
    `eviction.waitForReplacement: ${String(d.waitForReplacement)}, replacementTimeout ` +
      `${goDuration(d.replacementTimeoutMs)}, cooldown ${goDuration(d.cooldownMs)}: kube-rebalancer's pacing, which ` +
      "the descheduler does not have (it evicts a run's pods at once and may evict a replacement again next run)",
  );
  if (eviction['nodeFit'] === undefined) {
    eviction['nodeFit'] = d.nodeFit;
    notes.push(
      `eviction.nodeFit: ${String(d.nodeFit)}, kube-rebalancer's default (the descheduler's is false): a pod is ` +
        'evicted only where its replacement fits on another node',
    );
  }
}
