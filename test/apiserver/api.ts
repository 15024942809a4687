// The API semantics of the test server, independent of HTTP: what the real server's registry strategies,
// admission plugins and generic store do for create, update (main resource and /status), patch, delete (with
// preconditions, graceful pod termination and finalizers), list (selectors, pagination) and the pods/binding
// subresource. The HTTP layer (http.ts) and the simulated controllers both call this class, so an in-process
// write behaves exactly like one over HTTP. Eviction lives in eviction.ts.

import { randomUUID } from 'node:crypto';
import type { Clock, TimerSet } from './clock.js';
import { rfc3339 } from './clock.js';
import type { ApiError, FieldError, Status } from './errors.js';
import { errors, successStatus } from './errors.js';
import { deepClone, deepEqual, jsonPatch, mergePatch, strategicMerge } from './patch.js';
import {
  admitPriority,
  applyPodDefaults,
  isTerminal,
  isTerminating,
  nameProblem,
  qosClass,
  setCondition,
  validatePodSpec,
  validatePodSpecUpdate,
} from './pods.js';
import type { ResourceDef, ResourceRegistry } from './resources.js';
import { apiVersionOf, applySchemaDefaults, groupResource } from './resources.js';
import type { FieldRequirement, Selector } from './selectors.js';
import { fieldsMatch, parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { ObjectStore } from './store.js';
import type { DeleteOptions, KubeObject, RawPod } from './types.js';
import { isObject, objectKey } from './types.js';

export interface WriteResult {
  code: number;
  body: KubeObject | Status;
}

export interface ListQuery {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  limit?: number | undefined;
  continue?: string | undefined;
  resourceVersion?: string | undefined;
  resourceVersionMatch?: string | undefined;
}

export interface ListResult {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: KubeObject[];
}

export interface KubeApiOptions {
  store: ObjectStore;
  registry: ResourceRegistry;
  clock: Clock;
  timers: TimerSet;
  /** How long a gracefully deleted pod stays Terminating before it disappears; 0 deletes at once. */
  podTerminationDelayMs: number;
  /** Reject namespaced writes into missing (404) or terminating (403) namespaces, as NamespaceLifecycle does. */
  namespaceLifecycle: boolean;
  random: () => number;
}

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

interface ListSnapshot {
  storage: string;
  rv: number;
  items: KubeObject[];
  keys: string[];
  filtered: boolean;
}

const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

export class KubeApi {
  readonly store: ObjectStore;
  readonly registry: ResourceRegistry;
  private readonly clock: Clock;
  private readonly timers: TimerSet;
  private readonly options: KubeApiOptions;
  private readonly snapshots = new Map<string, ListSnapshot>();
  private snapshotCounter = 0;

  constructor(options: KubeApiOptions) {
    this.options = options;
    this.store = options.store;
    this.registry = options.registry;
    this.clock = options.clock;
    this.timers = options.timers;
  }

  /** Looks a resource up by plural, `plural.group`, kind or short name; throws if unknown. */
  resource(name: string): ResourceDef {
    const def = this.registry.lookup(name);
    if (def === undefined) throw new Error(`unknown resource ${name}`);
    return def;
  }

  // ---- identity helpers ----------------------------------------------------------------------------------------

  uid(): string {
    if (this.options.random === Math.random) return randomUUID();
    const hex = Array.from({ length: 32 }, () => Math.floor(this.options.random() * 16).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }

  randomSuffix(length = 5): string {
    let out = '';
    for (let i = 0; i < length; i++)
      out += NAME_ALPHABET.charAt(Math.floor(this.options.random() * NAME_ALPHABET.length));
    return out;
  }

  now(): number {
    return this.clock.now();
  }

  /** The representation served by `def` of a stored object (events.k8s.io/v1 converts core events). */
  view(def: ResourceDef, stored: KubeObject): KubeObject {
    return def.view ? def.view.fromStorage(stored) : stored;
  }

  private storageDef(def: ResourceDef): ResourceDef {
    return def.view ? (this.registry.forStorage(def.storage) ?? def) : def;
  }

  // ---- reads ----------------------------------------------------------------------------------------------------

  get(def: ResourceDef, namespace: string | undefined, name: string): KubeObject {
    const stored = this.store.get(def.storage, def.namespaced ? namespace : undefined, name);
    if (stored === undefined) throw errors.notFound(groupResource(def), name);
    return this.view(def, stored);
  }

  /** Compiles the selectors of a list or watch request (400 on bad syntax or unsupported field). */
  selectors(def: ResourceDef, query: ListQuery): { labels: Selector; fields: FieldRequirement[] } {
    return {
      labels: parseLabelSelector(query.labelSelector),
      fields: parseFieldSelector(query.fieldSelector, new Set(Object.keys(def.fields))),
    };
  }

  matcher(def: ResourceDef, query: ListQuery): (stored: KubeObject) => boolean {
    const { labels, fields } = this.selectors(def, query);
    const namespace = def.namespaced && query.namespace ? query.namespace : undefined;
    return (stored) => {
      if (namespace !== undefined && stored.metadata.namespace !== namespace) return false;
      if (!labels.empty && !labels.matches(stored.metadata.labels)) return false;
      if (fields.length === 0) return true;
      const obj = this.view(def, stored);
      return fieldsMatch(fields, (field) => def.fields[field]?.(obj) ?? '');
    };
  }

  list(def: ResourceDef, query: ListQuery): ListResult {
    const limit = query.limit !== undefined && query.limit > 0 ? Math.floor(query.limit) : 0;
    let snapshot: ListSnapshot;
    let start = 0;
    if (query.continue) {
      const decoded = this.decodeContinue(query.continue);
      const found = this.snapshots.get(decoded.id);
      if (found === undefined || found.storage !== def.storage || this.store.isCompacted(def.storage, found.rv)) {
        throw errors.expired(CONTINUE_EXPIRED);
      }
      snapshot = found;
      start = decoded.start;
    } else {
      if (query.resourceVersionMatch === 'Exact' && query.resourceVersion !== String(this.store.resourceVersion)) {
        throw errors.expired(
          `too old resource version: ${query.resourceVersion ?? ''} (${this.store.resourceVersion})`,
        );
      }
      const matches = this.matcher(def, query);
      const namespace = def.namespaced && query.namespace ? query.namespace : undefined;
      const items = this.store.list(def.storage, namespace).filter(matches);
      const keyed = items.map((obj) => ({ key: objectKey(obj.metadata.namespace, obj.metadata.name ?? ''), obj }));
      keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const filtered = Boolean(query.labelSelector) || Boolean(query.fieldSelector);
      snapshot = {
        storage: def.storage,
        rv: this.store.resourceVersion,
        items: keyed.map((k) => k.obj),
        keys: keyed.map((k) => k.key),
        filtered,
      };
    }
    const end = limit > 0 ? Math.min(snapshot.items.length, start + limit) : snapshot.items.length;
    const page = snapshot.items.slice(start, end);
    const metadata: ListResult['metadata'] = { resourceVersion: String(snapshot.rv) };
    if (end < snapshot.items.length) {
      metadata.continue = this.rememberSnapshot(snapshot, end);
      if (!snapshot.filtered) metadata.remainingItemCount = snapshot.items.length - end;
    }
    return {
      apiVersion: apiVersionOf(def),
      kind: def.listKind,
      metadata,
      items: page.map((obj) => this.listItem(def, obj)),
    };
  }

  /** Typed lists omit kind/apiVersion on items; custom resources (unstructured) keep them. */
  private listItem(def: ResourceDef, stored: KubeObject): KubeObject {
    const obj = this.view(def, stored);
    if (def.custom) return obj;
    const { apiVersion: _apiVersion, kind: _kind, ...rest } = obj;
    return rest;
  }

  private rememberSnapshot(snapshot: ListSnapshot, next: number): string {
    let id = [...this.snapshots.entries()].find(([, s]) => s === snapshot)?.[0];
    if (id === undefined) {
      id = String(++this.snapshotCounter);
      this.snapshots.set(id, snapshot);
      if (this.snapshots.size > 64) {
        const oldest = this.snapshots.keys().next().value;
        if (oldest !== undefined) this.snapshots.delete(oldest);
      }
    }
    const token = { v: 'meta.k8s.io/v1', rv: snapshot.rv, start: snapshot.keys[next - 1] ?? '', id, i: next };
    return Buffer.from(JSON.stringify(token)).toString('base64url');
  }

  private decodeContinue(token: string): { id: string; start: number } {
    try {
      const decoded: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
      if (isObject(decoded) && typeof decoded.id === 'string' && typeof decoded.i === 'number') {
        return { id: decoded.id, start: decoded.i };
      }
    } catch {
      // fall through
    }
    throw errors.badRequest(`invalid value for continue: ${token}`);
  }

  // ---- create ---------------------------------------------------------------------------------------------------

  private checkTypeMeta(def: ResourceDef, body: KubeObject): void {
    const expected = apiVersionOf(def);
    if (def.custom && (body.kind === undefined || body.kind === '')) {
      throw errors.badRequest(`Object 'Kind' is missing in '${JSON.stringify(body)}'`);
    }
    if (body.apiVersion !== undefined && body.apiVersion !== expected && body.apiVersion !== '') {
      throw errors.badRequest(
        `the API version in the data (${body.apiVersion}) does not match the expected API version (${expected})`,
      );
    }
    if (body.kind !== undefined && body.kind !== '' && body.kind !== def.kind) {
      throw errors.badRequest(`the kind in the data (${body.kind}) does not match the expected kind (${def.kind})`);
    }
  }

  /** Decodes a request body into the storage representation (a fresh object the caller may mutate). */
  private decode(def: ResourceDef, body: unknown): KubeObject {
    if (!isObject(body)) throw errors.badRequest('the body of the request must be a JSON object');
    const obj = deepClone(body) as KubeObject;
    if (!isObject(obj.metadata)) obj.metadata = {};
    this.checkTypeMeta(def, obj);
    obj.apiVersion = apiVersionOf(def);
    obj.kind = def.kind;
    const stored = def.view ? def.view.toStorage(obj) : obj;
    const sdef = this.storageDef(def);
    stored.apiVersion = apiVersionOf(sdef);
    stored.kind = sdef.kind;
    return stored;
  }

  private checkNamespace(def: ResourceDef, obj: KubeObject, namespace: string | undefined): void {
    if (!def.namespaced) {
      delete obj.metadata.namespace;
      return;
    }
    const bodyNs = obj.metadata.namespace;
    if (bodyNs !== undefined && bodyNs !== '' && namespace !== undefined && namespace !== '' && bodyNs !== namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const ns = namespace || bodyNs;
    if (!ns) throw errors.badRequest('the server could not find the requested resource');
    obj.metadata.namespace = ns;
  }

  private admitNamespace(def: ResourceDef, namespace: string): void {
    if (!this.options.namespaceLifecycle || !def.namespaced) return;
    const ns = this.store.get('namespaces', undefined, namespace);
    if (ns === undefined) throw errors.notFound({ group: '', resource: 'namespaces' }, namespace);
    if (isTerminating(ns) && def.storage !== 'events') {
      throw errors.forbidden(
        groupResource(def),
        '',
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      );
    }
  }

  create(def: ResourceDef, namespace: string | undefined, body: unknown, dryRun = false): WriteResult {
    if (def.storage === '-bindings') {
      const binding = isObject(body) && isObject(body.metadata) ? body : { metadata: {} };
      const name = isObject(binding.metadata) && typeof binding.metadata.name === 'string' ? binding.metadata.name : '';
      return this.bind(namespace ?? '', name, body, dryRun);
    }
    if (def.view) this.validateEventsV1(body, namespace);
    const obj = this.decode(def, body);
    this.checkNamespace(def, obj, namespace);
    const meta = obj.metadata;
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '') {
      throw errors.internal('resourceVersion should not be set on objects to be created');
    }
    if (def.namespaced) this.admitNamespace(def, meta.namespace ?? '');
    if (!meta.name) {
      if (!meta.generateName) {
        throw errors.invalid({ group: def.group, kind: def.kind }, '', [
          { field: 'metadata.name', type: 'FieldValueRequired', detail: 'name or generateName is required' },
        ]);
      }
      meta.name = this.generateName(def, meta.namespace, meta.generateName);
    }
    const name = meta.name;
    const problem = nameProblem(name);
    if (problem !== undefined) {
      throw errors.invalid({ group: def.group, kind: def.kind }, name, [
        { field: 'metadata.name', type: 'FieldValueInvalid', value: name, detail: problem },
      ]);
    }
    meta.uid = this.uid();
    meta.creationTimestamp = rfc3339(this.clock.now());
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.managedFields;
    delete meta.resourceVersion;
    if (def.generation === 'none') delete meta.generation;
    else meta.generation = 1;
    this.prepareForCreate(def, obj);
    const fieldErrors = this.validate(def, obj, undefined);
    if (fieldErrors.length > 0) throw errors.invalid({ group: def.group, kind: def.kind }, name, fieldErrors);
    if (this.store.get(def.storage, meta.namespace, name) !== undefined) {
      throw errors.alreadyExists(groupResource(def), name);
    }
    if (dryRun) return { code: 201, body: this.view(def, obj) };
    const stored = this.store.commitCreate(def.storage, obj);
    return { code: 201, body: this.view(def, stored) };
  }

  private generateName(def: ResourceDef, namespace: string | undefined, prefix: string): string {
    for (let attempt = 0; attempt < 20; attempt++) {
      const candidate = `${prefix}${this.randomSuffix()}`;
      if (this.store.get(def.storage, namespace, candidate) === undefined) return candidate;
    }
    throw errors.internal('could not generate a unique name');
  }

  private prepareForCreate(def: ResourceDef, obj: KubeObject): void {
    switch (def.storage) {
      case 'pods': {
        const pod = obj as RawPod;
        if (!isObject(pod.spec)) return;
        applyPodDefaults(pod);
        admitPriority(pod, {
          byName: (name) => this.store.get('priorityclasses.scheduling.k8s.io', undefined, name),
          globalDefault: () =>
            this.store.list('priorityclasses.scheduling.k8s.io').find((pc) => pc.globalDefault === true),
        });
        pod.status = { phase: 'Pending', qosClass: qosClass(pod.spec) };
        return;
      }
      case 'namespaces':
        obj.spec = { finalizers: ['kubernetes'] };
        obj.status = { phase: 'Active' };
        return;
      case 'poddisruptionbudgets.policy':
        obj.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
        return;
      case 'deployments.apps':
      case 'replicasets.apps':
        obj.status = {};
        return;
      case 'priorityclasses.scheduling.k8s.io':
        obj.preemptionPolicy ??= 'PreemptLowerPriority';
        obj.value ??= 0;
        return;
      default:
        if (def.custom) {
          if (def.subresources.includes('status')) delete obj.status;
          if (def.schema !== undefined) applySchemaDefaults(obj, def.schema);
        }
    }
  }

  private validate(def: ResourceDef, obj: KubeObject, prev: KubeObject | undefined): FieldError[] {
    switch (def.storage) {
      case 'pods':
        return prev === undefined
          ? validatePodSpec(obj.spec)
          : validatePodSpecUpdate((obj as RawPod).spec, (prev as RawPod).spec);
      case 'poddisruptionbudgets.policy':
        return validatePdbSpec(obj.spec);
      case 'priorityclasses.scheduling.k8s.io':
        return validatePriorityClass(obj, prev);
      case 'events':
        return validateEventNamespace(obj);
      default:
        return [];
    }
  }

  /** events.k8s.io/v1 requires the fields of the new Event API (ValidateEventCreate for that version). */
  private validateEventsV1(body: unknown, namespace: string | undefined): void {
    if (!isObject(body)) return;
    const problems: FieldError[] = [];
    for (const field of ['eventTime', 'reportingController', 'reportingInstance', 'action', 'reason']) {
      if (body[field] === undefined || body[field] === null || body[field] === '') {
        problems.push({ field, type: 'FieldValueRequired' });
      }
    }
    if (body.type !== 'Normal' && body.type !== 'Warning') {
      problems.push({
        field: 'type',
        type: 'FieldValueInvalid',
        value: '',
        detail: `has invalid value: ${String(body.type)}`,
      });
    }
    if (typeof body.note === 'string' && body.note.length > 1024) {
      problems.push({
        field: 'note',
        type: 'FieldValueInvalid',
        value: '',
        detail: 'can have at most 1024 characters',
      });
    }
    const regarding = isObject(body.regarding) ? body.regarding : undefined;
    const eventNs = (isObject(body.metadata) ? body.metadata.namespace : undefined) ?? namespace;
    if (regarding?.namespace && eventNs && regarding.namespace !== eventNs) {
      problems.push({
        field: 'regarding.namespace',
        type: 'FieldValueInvalid',
        value: regarding.namespace,
        detail: 'does not match event.namespace',
      });
    }
    if (problems.length > 0) {
      const name = isObject(body.metadata) && typeof body.metadata.name === 'string' ? body.metadata.name : '';
      throw errors.invalid({ group: 'events.k8s.io', kind: 'Event' }, name, problems);
    }
  }

  // ---- update ---------------------------------------------------------------------------------------------------

  /** PUT of the main resource (`subresource` undefined) or of its /status. */
  update(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    body: unknown,
    subresource?: 'status',
    dryRun = false,
  ): WriteResult {
    const obj = this.decode(def, body);
    const meta = obj.metadata;
    if (meta.name && meta.name !== name) {
      throw errors.badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    meta.name = name;
    this.checkNamespace(def, obj, namespace);
    const existing = this.store.get(def.storage, meta.namespace, name);
    if (existing === undefined) {
      if (def.allowCreateOnUpdate && subresource === undefined && !meta.resourceVersion) {
        return this.create(def, namespace, def.view ? def.view.fromStorage(obj) : obj, dryRun);
      }
      throw errors.notFound(groupResource(def), name);
    }
    this.checkPreconditions(def, existing, meta.resourceVersion, meta.uid);
    const next =
      subresource === 'status' ? this.prepareStatusUpdate(existing, obj) : this.prepareUpdate(def, existing, obj);
    const fieldErrors = subresource === 'status' ? [] : this.validate(def, next, existing);
    if (fieldErrors.length > 0) throw errors.invalid({ group: def.group, kind: def.kind }, name, fieldErrors);
    return { code: 200, body: this.view(def, this.commitUpdate(def, next, existing, dryRun)) };
  }

  private checkPreconditions(
    def: ResourceDef,
    existing: KubeObject,
    rv: string | undefined,
    uid: string | undefined,
  ): void {
    const name = existing.metadata.name ?? '';
    if (!rv) {
      if (!def.allowUnconditionalUpdate) {
        throw errors.invalid({ group: def.group, kind: def.kind }, name, [
          {
            field: 'metadata.resourceVersion',
            type: 'FieldValueInvalid',
            value: 0,
            detail: 'must be specified for an update',
          },
        ]);
      }
    } else if (rv !== existing.metadata.resourceVersion) {
      throw errors.modified(groupResource(def), name);
    }
    if (uid && uid !== existing.metadata.uid) {
      throw errors.conflict(
        groupResource(def),
        name,
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${existing.metadata.uid ?? ''}`,
      );
    }
  }

  private prepareUpdate(def: ResourceDef, existing: KubeObject, obj: KubeObject): KubeObject {
    const next: KubeObject = { ...obj, metadata: { ...obj.metadata } };
    const meta = next.metadata;
    const old = existing.metadata;
    meta.uid = old.uid;
    meta.creationTimestamp = old.creationTimestamp;
    meta.resourceVersion = old.resourceVersion;
    setOrDelete(meta, 'deletionTimestamp', old.deletionTimestamp);
    setOrDelete(meta, 'deletionGracePeriodSeconds', old.deletionGracePeriodSeconds);
    setOrDelete(meta, 'generation', old.generation);
    delete meta.managedFields;
    if (def.subresources.includes('status')) setOrDelete(next, 'status', existing.status);
    if (def.custom && def.schema !== undefined) applySchemaDefaults(next, def.schema);
    if (def.generation !== 'none' && generationChanged(def, next, existing)) {
      meta.generation = (old.generation ?? 0) + 1;
    }
    return next;
  }

  /** /status writes change only `status` (the rest of the object, metadata included, is kept). */
  private prepareStatusUpdate(existing: KubeObject, obj: KubeObject): KubeObject {
    const next: KubeObject = { ...existing };
    setOrDelete(next, 'status', obj.status);
    return next;
  }

  /**
   * Stores `next` over `existing` with the real server's details: an unchanged object is not written (no new
   * resourceVersion, no watch event), and an object whose deletion waits only on finalizers is deleted when the
   * last finalizer goes.
   */
  commitUpdate(def: ResourceDef, next: KubeObject, existing: KubeObject, dryRun = false): KubeObject {
    const meta = next.metadata;
    if (
      meta.deletionTimestamp &&
      (meta.finalizers ?? []).length === 0 &&
      (meta.deletionGracePeriodSeconds ?? 0) === 0 &&
      !dryRun
    ) {
      return this.store.commitDelete(def.storage, existing);
    }
    const comparable = { ...next, metadata: { ...meta, resourceVersion: existing.metadata.resourceVersion } };
    if (deepEqual(comparable, existing)) return existing;
    if (dryRun) return comparable;
    return this.store.commitUpdate(def.storage, next, existing);
  }

  // ---- patch ----------------------------------------------------------------------------------------------------

  patch(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    contentType: string,
    patchBody: unknown,
    subresource?: 'status',
    dryRun = false,
  ): WriteResult {
    const current = this.get(def, namespace, name);
    let patched: unknown;
    switch (contentType) {
      case 'application/json-patch+json':
        patched = jsonPatch(current, patchBody);
        break;
      case 'application/merge-patch+json':
        if (!isObject(patchBody)) throw errors.badRequest('a merge patch must be a JSON object');
        patched = mergePatch(current, patchBody);
        break;
      case 'application/strategic-merge-patch+json':
        if (def.custom) {
          throw errors.unsupportedMediaType(contentType, [
            'application/json-patch+json',
            'application/merge-patch+json',
          ]);
        }
        if (!isObject(patchBody)) throw errors.badRequest('a strategic merge patch must be a JSON object');
        patched = strategicMerge('', current, patchBody);
        break;
      default:
        throw errors.unsupportedMediaType(contentType, [
          'application/json-patch+json',
          'application/merge-patch+json',
          'application/strategic-merge-patch+json',
        ]);
    }
    if (!isObject(patched)) throw errors.badRequest('the patched object is not a JSON object');
    const result = this.update(def, namespace, name, patched, subresource, dryRun);
    return { code: 200, body: result.body };
  }

  // ---- delete ---------------------------------------------------------------------------------------------------

  delete(def: ResourceDef, namespace: string | undefined, name: string, options: DeleteOptions = {}): WriteResult {
    const ns = def.namespaced ? namespace : undefined;
    const existing = this.store.get(def.storage, ns, name);
    if (existing === undefined) throw errors.notFound(groupResource(def), name);
    const dryRun = (options.dryRun ?? []).includes('All');
    const pre = options.preconditions ?? {};
    if (pre.uid && pre.uid !== existing.metadata.uid) {
      throw errors.conflict(
        groupResource(def),
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${existing.metadata.uid ?? ''}`,
      );
    }
    if (pre.resourceVersion && pre.resourceVersion !== existing.metadata.resourceVersion) {
      throw errors.conflict(
        groupResource(def),
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${existing.metadata.resourceVersion ?? ''}`,
      );
    }
    if (def.storage === 'namespaces') return this.deleteNamespace(def, existing, dryRun);
    if (def.storage === 'pods') {
      const graceful = this.gracefulPodDelete(def, existing as RawPod, options, dryRun);
      if (graceful !== undefined) return graceful;
    }
    if ((existing.metadata.finalizers ?? []).length > 0) {
      if (isTerminating(existing)) return { code: 200, body: this.view(def, existing) };
      const next = withMeta(existing, { deletionTimestamp: rfc3339(this.clock.now()), deletionGracePeriodSeconds: 0 });
      const stored = dryRun ? next : this.store.commitUpdate(def.storage, next, existing);
      return { code: 200, body: this.view(def, stored) };
    }
    const tombstone = dryRun ? existing : this.store.commitDelete(def.storage, existing);
    if (def.returnDeletedObject) return { code: 200, body: this.view(def, tombstone) };
    const details = { name, group: def.group || undefined, kind: def.resource, uid: existing.metadata.uid };
    if (!details.group) delete details.group;
    return { code: 200, body: successStatus(200, details) };
  }

  /**
   * Graceful pod deletion (only when a termination delay is configured): a bound, non-terminal pod gets
   * deletionTimestamp = now + grace period and disappears when the simulated kubelet confirms, `delay` ms later.
   */
  private gracefulPodDelete(
    def: ResourceDef,
    pod: RawPod,
    options: DeleteOptions,
    dryRun: boolean,
  ): WriteResult | undefined {
    const delay = this.options.podTerminationDelayMs;
    let grace = options.gracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    if (!pod.spec?.nodeName || isTerminal(pod)) grace = 0;
    if (delay <= 0 || grace <= 0) return undefined;
    if (isTerminating(pod)) return { code: 200, body: this.view(def, pod) };
    const next = withMeta(pod, {
      deletionTimestamp: rfc3339(this.clock.now() + grace * 1000),
      deletionGracePeriodSeconds: grace,
    });
    if (dryRun) return { code: 200, body: this.view(def, next) };
    const stored = this.store.commitUpdate(def.storage, next, pod);
    const uid = pod.metadata.uid;
    this.timers.set(
      () => this.finishPodTermination(def, stored.metadata.namespace, stored.metadata.name ?? '', uid),
      delay,
    );
    return { code: 200, body: this.view(def, stored) };
  }

  private finishPodTermination(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    uid: string | undefined,
  ): void {
    const current = this.store.get(def.storage, namespace, name);
    if (current === undefined || current.metadata.uid !== uid || !isTerminating(current)) return;
    if ((current.metadata.finalizers ?? []).length > 0) {
      this.store.commitUpdate(def.storage, withMeta(current, { deletionGracePeriodSeconds: 0 }), current);
      return;
    }
    this.store.commitDelete(def.storage, current);
  }

  /** Namespace deletion, compressed: Terminating, then every namespaced object in it deleted, then the namespace. */
  private deleteNamespace(def: ResourceDef, ns: KubeObject, dryRun: boolean): WriteResult {
    if (isTerminating(ns)) return { code: 200, body: ns };
    const name = ns.metadata.name ?? '';
    const terminating: KubeObject = {
      ...withMeta(ns, { deletionTimestamp: rfc3339(this.clock.now()) }),
      status: { phase: 'Terminating' },
    };
    if (dryRun) return { code: 200, body: terminating };
    const stored = this.store.commitUpdate(def.storage, terminating, ns);
    const storages = new Set(
      this.registry.all.filter((d) => d.namespaced && !d.storage.startsWith('-')).map((d) => d.storage),
    );
    for (const storage of storages) {
      for (const obj of this.store.list(storage, name)) this.store.commitDelete(storage, obj);
    }
    this.store.commitDelete(def.storage, stored);
    return { code: 200, body: stored };
  }

  deleteCollection(def: ResourceDef, query: ListQuery, options: DeleteOptions): ListResult {
    const listed = this.list(def, { ...query, limit: undefined, continue: undefined });
    const deleted: KubeObject[] = [];
    for (const item of listed.items) {
      try {
        const result = this.delete(def, item.metadata.namespace, item.metadata.name ?? '', options);
        if (result.body.kind !== 'Status') deleted.push(result.body as KubeObject);
        else deleted.push(item);
      } catch (err) {
        if ((err as ApiError).code !== 404) throw err;
      }
    }
    return { ...listed, items: deleted };
  }

  // ---- pods/binding ---------------------------------------------------------------------------------------------

  /** POST pods/{name}/binding (or namespaces/{ns}/bindings): assigns an unbound pod to a node. */
  bind(namespace: string, podName: string, body: unknown, dryRun = false): WriteResult {
    const podsDef = this.resource('pods');
    const binding = isObject(body) ? body : {};
    const bindingName = isObject(binding.metadata) ? binding.metadata.name : undefined;
    if (typeof bindingName === 'string' && bindingName !== '' && bindingName !== podName) {
      throw errors.badRequest('name in URL does not match name in Binding object');
    }
    const target = isObject(binding.target) ? binding.target : {};
    const nodeName = typeof target.name === 'string' ? target.name : '';
    if (nodeName === '') {
      throw errors.invalid({ group: '', kind: 'Binding' }, podName, [
        { field: 'target.name', type: 'FieldValueRequired' },
      ]);
    }
    const pod = this.store.get<RawPod>('pods', namespace, podName);
    if (pod === undefined) throw errors.notFound(groupResource(podsDef), podName);
    if (isTerminating(pod)) {
      throw errors.conflict(
        groupResource(podsDef),
        podName,
        `pod ${podName} is being deleted, cannot be assigned to a host`,
      );
    }
    if (pod.spec.nodeName) {
      throw errors.conflict(
        groupResource(podsDef),
        podName,
        `pod ${podName} is already assigned to node "${pod.spec.nodeName}"`,
      );
    }
    const next: RawPod = {
      ...pod,
      spec: { ...pod.spec, nodeName },
      status: {
        ...(pod.status ?? {}),
        conditions: setCondition(
          pod.status?.conditions,
          { type: 'PodScheduled', status: 'True', lastProbeTime: null },
          this.clock.now(),
        ),
      },
    };
    if (!dryRun) this.store.commitUpdate('pods', next, pod);
    return { code: 201, body: successStatus(201) };
  }
}

function setOrDelete(target: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined) delete target[key];
  else target[key] = value;
}

function withMeta(obj: KubeObject, changes: Record<string, unknown>): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, ...changes } };
}

function generationChanged(def: ResourceDef, next: KubeObject, prev: KubeObject): boolean {
  if (def.generation === 'spec') return !deepEqual(next.spec, prev.spec);
  const strip = (obj: KubeObject): Record<string, unknown> => {
    const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
    return rest;
  };
  return !deepEqual(strip(next), strip(prev));
}

function intOrPercentProblem(value: unknown): string | undefined {
  if (typeof value === 'number')
    return Number.isInteger(value) && value >= 0 ? undefined : 'must be greater than or equal to 0';
  if (typeof value === 'string') {
    const match = /^(\d+)%$/.exec(value);
    if (match === null) return "a valid percent string must be a numeric string followed by an ending '%'";
    return Number(match[1]) > 100 ? 'must not be greater than 100%' : undefined;
  }
  return 'must be an integer or percentage';
}

function validatePdbSpec(spec: unknown): FieldError[] {
  if (!isObject(spec)) return [];
  const problems: FieldError[] = [];
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
    problems.push({
      field: 'spec',
      type: 'FieldValueInvalid',
      value: JSON.stringify(spec),
      detail: 'minAvailable and maxUnavailable cannot be both set',
    });
  }
  for (const field of ['minAvailable', 'maxUnavailable']) {
    if (spec[field] === undefined) continue;
    const problem = intOrPercentProblem(spec[field]);
    if (problem !== undefined) {
      problems.push({ field: `spec.${field}`, type: 'FieldValueInvalid', value: spec[field], detail: problem });
    }
  }
  return problems;
}

function validatePriorityClass(obj: KubeObject, prev: KubeObject | undefined): FieldError[] {
  const value = Number(obj.value ?? 0);
  if (prev !== undefined && Number(prev.value ?? 0) !== value) {
    return [{ field: 'value', type: 'FieldValueForbidden', detail: 'may not be changed in an update.' }];
  }
  if (prev === undefined && value > 1_000_000_000 && !(obj.metadata.name ?? '').startsWith('system-')) {
    return [
      {
        field: 'value',
        type: 'FieldValueForbidden',
        detail: 'maximum allowed value of a user defined priority is 1000000000',
      },
    ];
  }
  return [];
}

function validateEventNamespace(obj: KubeObject): FieldError[] {
  const involved = isObject(obj.involvedObject) ? obj.involvedObject : undefined;
  const ns = involved?.namespace;
  if (typeof ns === 'string' && ns !== '' && ns !== obj.metadata.namespace) {
    return [
      {
        field: 'involvedObject.namespace',
        type: 'FieldValueInvalid',
        value: ns,
        detail: 'does not match event.namespace',
      },
    ];
  }
  return [];
}
