// The resources the test API server serves, their per-resource API semantics (scope, status subresource, generation
// tracking, update rules, field selectors) and the discovery documents built from them.

import type { KubeObject } from './types.js';
import { isObject } from './types.js';

export type GenerationPolicy =
  /** No metadata.generation (pods, nodes, namespaces, leases, events, priority classes). */
  | 'none'
  /** generation starts at 1 and grows when `spec` changes (PDBs, Deployments, ReplicaSets). */
  | 'spec'
  /** Custom resources with a status subresource: grows on any change outside metadata and status. */
  | 'nonMetadataNonStatus';

export interface ResourceDef {
  group: string;
  version: string;
  /** Plural resource name, as in URLs. */
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  /** Store collection. Two API resources may share one (core/v1 and events.k8s.io/v1 events). */
  storage: string;
  /** Subresources served: `status`, `eviction`, `binding`. */
  subresources: string[];
  generation: GenerationPolicy;
  /** Whether PUT without metadata.resourceVersion is allowed (false for custom resources). */
  allowUnconditionalUpdate: boolean;
  /** Whether PUT of a missing object creates it (true for leases, events, PDBs). */
  allowCreateOnUpdate: boolean;
  /** DELETE answers with the object (pods, namespaces) rather than a Status. */
  returnDeletedObject: boolean;
  /** A custom resource: served as unstructured JSON (no strategic merge patch, items keep kind in lists). */
  custom: boolean;
  /** Field selector labels and how each reads the object. */
  fields: Record<string, (obj: KubeObject) => string>;
  /** Converts between this resource's representation and its storage's (events.k8s.io/v1 over core/v1 events). */
  view?: { toStorage(obj: KubeObject): KubeObject; fromStorage(obj: KubeObject): KubeObject };
  /** OpenAPI v3 schema of a custom resource; its `default`s are applied on writes (structural defaulting). */
  schema?: unknown;
}

export function apiVersionOf(def: Pick<ResourceDef, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

export function groupResource(def: ResourceDef): { group: string; resource: string } {
  return { group: def.group, resource: def.resource };
}

function readPath(obj: unknown, path: string): string {
  let current: unknown = obj;
  for (const part of path.split('.')) {
    if (!isObject(current)) return '';
    current = current[part];
  }
  if (current === undefined || current === null) return '';
  return typeof current === 'string' ? current : JSON.stringify(current);
}

function fieldsFor(paths: string[], aliases: Record<string, string> = {}): Record<string, (obj: KubeObject) => string> {
  const fields: Record<string, (obj: KubeObject) => string> = {};
  for (const path of ['metadata.name', 'metadata.namespace', ...paths]) fields[path] = (obj) => readPath(obj, path);
  for (const [alias, path] of Object.entries(aliases)) fields[alias] = (obj) => readPath(obj, path);
  return fields;
}

interface DefInput {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  storage?: string;
  subresources?: string[];
  generation?: GenerationPolicy;
  allowUnconditionalUpdate?: boolean;
  allowCreateOnUpdate?: boolean;
  returnDeletedObject?: boolean;
  custom?: boolean;
  fields?: string[];
  fieldAliases?: Record<string, string>;
  singular?: string;
  listKind?: string;
  schema?: unknown;
}

export function defineResource(input: DefInput): ResourceDef {
  const def: ResourceDef = {
    group: input.group,
    version: input.version,
    resource: input.resource,
    singular: input.singular ?? input.kind.toLowerCase(),
    kind: input.kind,
    listKind: input.listKind ?? `${input.kind}List`,
    namespaced: input.namespaced,
    shortNames: input.shortNames ?? [],
    storage: input.storage ?? (input.group ? `${input.resource}.${input.group}` : input.resource),
    subresources: input.subresources ?? [],
    generation: input.generation ?? 'none',
    allowUnconditionalUpdate: input.allowUnconditionalUpdate ?? true,
    allowCreateOnUpdate: input.allowCreateOnUpdate ?? false,
    returnDeletedObject: input.returnDeletedObject ?? false,
    custom: input.custom ?? false,
    fields: fieldsFor(input.fields ?? [], input.fieldAliases),
  };
  if (input.schema !== undefined) def.schema = input.schema;
  return def;
}

// ---- events.k8s.io/v1 <-> core/v1 Event ----------------------------------------------------------------------

function compact(obj: Record<string, unknown>): KubeObject {
  for (const key of Object.keys(obj)) if (obj[key] === undefined) delete obj[key];
  return obj as KubeObject;
}

const eventsV1View = {
  toStorage(obj: KubeObject): KubeObject {
    return compact({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: obj.metadata,
      involvedObject: obj.regarding ?? {},
      related: obj.related,
      reason: obj.reason,
      message: obj.note,
      source: obj.deprecatedSource ?? {},
      firstTimestamp: obj.deprecatedFirstTimestamp,
      lastTimestamp: obj.deprecatedLastTimestamp,
      count: obj.deprecatedCount,
      type: obj.type,
      eventTime: obj.eventTime,
      series: obj.series,
      action: obj.action,
      reportingComponent: obj.reportingController ?? '',
      reportingInstance: obj.reportingInstance ?? '',
    });
  },
  fromStorage(obj: KubeObject): KubeObject {
    const source = obj.source;
    return compact({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: obj.metadata,
      eventTime: obj.eventTime ?? null,
      series: obj.series,
      reportingController: obj.reportingComponent || undefined,
      reportingInstance: obj.reportingInstance || undefined,
      action: obj.action,
      reason: obj.reason,
      regarding: obj.involvedObject,
      related: obj.related,
      note: obj.message,
      type: obj.type,
      deprecatedSource: isObject(source) && Object.keys(source).length > 0 ? source : undefined,
      deprecatedFirstTimestamp: obj.firstTimestamp ?? undefined,
      deprecatedLastTimestamp: obj.lastTimestamp ?? undefined,
      deprecatedCount: obj.count,
    });
  },
};

const EVENT_FIELDS = [
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'source',
  'type',
];

/** Everything served by default, except custom resources (see `customResource`). */
export function builtinResources(): ResourceDef[] {
  const events = defineResource({
    group: '',
    version: 'v1',
    resource: 'events',
    kind: 'Event',
    namespaced: true,
    shortNames: ['ev'],
    storage: 'events',
    allowCreateOnUpdate: true,
    fields: EVENT_FIELDS,
    fieldAliases: { source: 'source.component' },
  });
  const eventsV1 = defineResource({
    group: 'events.k8s.io',
    version: 'v1',
    resource: 'events',
    kind: 'Event',
    namespaced: true,
    shortNames: ['ev'],
    storage: 'events',
    allowCreateOnUpdate: true,
    fields: EVENT_FIELDS,
    fieldAliases: {
      source: 'source.component',
      'regarding.kind': 'involvedObject.kind',
      'regarding.namespace': 'involvedObject.namespace',
      'regarding.name': 'involvedObject.name',
      'regarding.uid': 'involvedObject.uid',
      reportingController: 'reportingComponent',
    },
  });
  eventsV1.view = eventsV1View;
  return [
    defineResource({
      group: '',
      version: 'v1',
      resource: 'pods',
      kind: 'Pod',
      namespaced: true,
      shortNames: ['po'],
      subresources: ['status', 'eviction', 'binding'],
      returnDeletedObject: true,
      fields: [
        'spec.nodeName',
        'spec.restartPolicy',
        'spec.schedulerName',
        'spec.serviceAccountName',
        'spec.hostNetwork',
        'status.phase',
        'status.podIP',
        'status.nominatedNodeName',
      ],
    }),
    defineResource({
      group: '',
      version: 'v1',
      resource: 'nodes',
      kind: 'Node',
      namespaced: false,
      shortNames: ['no'],
      subresources: ['status'],
      fields: ['spec.unschedulable'],
    }),
    defineResource({
      group: '',
      version: 'v1',
      resource: 'namespaces',
      kind: 'Namespace',
      namespaced: false,
      shortNames: ['ns'],
      subresources: ['status'],
      returnDeletedObject: true,
      fields: ['status.phase'],
    }),
    events,
    defineResource({
      group: '',
      version: 'v1',
      resource: 'bindings',
      kind: 'Binding',
      namespaced: true,
      storage: '-bindings',
    }),
    eventsV1,
    defineResource({
      group: 'policy',
      version: 'v1',
      resource: 'poddisruptionbudgets',
      kind: 'PodDisruptionBudget',
      namespaced: true,
      shortNames: ['pdb'],
      subresources: ['status'],
      generation: 'spec',
      allowCreateOnUpdate: true,
    }),
    defineResource({
      group: '',
      version: 'v1',
      resource: 'persistentvolumes',
      kind: 'PersistentVolume',
      namespaced: false,
      shortNames: ['pv'],
      subresources: ['status'],
    }),
    defineResource({
      group: '',
      version: 'v1',
      resource: 'persistentvolumeclaims',
      kind: 'PersistentVolumeClaim',
      namespaced: true,
      shortNames: ['pvc'],
      subresources: ['status'],
    }),
    defineResource({
      group: 'storage.k8s.io',
      version: 'v1',
      resource: 'storageclasses',
      kind: 'StorageClass',
      namespaced: false,
      shortNames: ['sc'],
    }),
    defineResource({
      group: 'storage.k8s.io',
      version: 'v1',
      resource: 'csinodes',
      kind: 'CSINode',
      namespaced: false,
    }),
    defineResource({
      group: 'scheduling.k8s.io',
      version: 'v1',
      resource: 'priorityclasses',
      kind: 'PriorityClass',
      namespaced: false,
      shortNames: ['pc'],
    }),
    // usage: Prometheus reads its bearer token from a Secret.
    defineResource({
      group: '',
      version: 'v1',
      resource: 'secrets',
      kind: 'Secret',
      namespaced: true,
    }),
    defineResource({
      group: 'coordination.k8s.io',
      version: 'v1',
      resource: 'leases',
      kind: 'Lease',
      namespaced: true,
      allowCreateOnUpdate: true,
    }),
    defineResource({
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      kind: 'Deployment',
      namespaced: true,
      shortNames: ['deploy'],
      subresources: ['status'],
      generation: 'spec',
    }),
    defineResource({
      group: 'apps',
      version: 'v1',
      resource: 'replicasets',
      kind: 'ReplicaSet',
      namespaced: true,
      shortNames: ['rs'],
      subresources: ['status'],
      generation: 'spec',
    }),
  ];
}

/** A CustomResourceDefinition's served version, reduced to what the test server needs. */
export interface CustomResourceOptions {
  group: string;
  version: string;
  plural: string;
  kind: string;
  singular?: string;
  listKind?: string;
  scope: 'Cluster' | 'Namespaced';
  shortNames?: string[];
  /** Default true: spec/status split, generation on non-status changes. */
  statusSubresource?: boolean;
  /** openAPIV3Schema; when given its `default`s are applied to created and updated objects. */
  schema?: unknown;
}

export function customResource(options: CustomResourceOptions): ResourceDef {
  const status = options.statusSubresource ?? true;
  const input: DefInput = {
    group: options.group,
    version: options.version,
    resource: options.plural,
    kind: options.kind,
    namespaced: options.scope === 'Namespaced',
    shortNames: options.shortNames ?? [],
    subresources: status ? ['status'] : [],
    generation: 'nonMetadataNonStatus',
    allowUnconditionalUpdate: false,
    custom: true,
    schema: options.schema,
  };
  if (options.singular !== undefined) input.singular = options.singular;
  if (options.listKind !== undefined) input.listKind = options.listKind;
  return defineResource(input);
}

/** The project's own CRD, as served when no CRD is given: cluster-scoped, with a status subresource. */
export const REBALANCE_POLICY: CustomResourceOptions = {
  group: 'rebalancer.dev',
  version: 'v1alpha1',
  plural: 'rebalancepolicies',
  singular: 'rebalancepolicy',
  kind: 'RebalancePolicy',
  listKind: 'RebalancePolicyList',
  scope: 'Cluster',
  shortNames: ['rbp'],
  statusSubresource: true,
};

/**
 * A stand-in for metrics-server's aggregated API (metrics.k8s.io/v1beta1 NodeMetrics and PodMetrics), served as
 * custom resources: pass it in `customResources` and create the objects with `store.create`. Read-only in the real
 * API; here a test writes the usage it wants the operator to read. Its faults (404 for an absent APIService, 503 for
 * an unavailable one, 429 with Retry-After) come from `faults.failNext({ group: 'metrics.k8s.io', ... })`.
 */
export const METRICS_API: readonly CustomResourceOptions[] = [
  {
    group: 'metrics.k8s.io',
    version: 'v1beta1',
    plural: 'nodes',
    kind: 'NodeMetrics',
    listKind: 'NodeMetricsList',
    scope: 'Cluster',
    statusSubresource: false,
  },
  {
    group: 'metrics.k8s.io',
    version: 'v1beta1',
    plural: 'pods',
    kind: 'PodMetrics',
    listKind: 'PodMetricsList',
    scope: 'Namespaced',
    statusSubresource: false,
  },
];

/** Reads the served versions of a CustomResourceDefinition object (apiextensions.k8s.io/v1). */
export function customResourcesFromCrd(crd: unknown): CustomResourceOptions[] {
  if (!isObject(crd) || !isObject(crd.spec) || !isObject(crd.spec.names)) {
    throw new Error('not a CustomResourceDefinition: spec.names missing');
  }
  const spec = crd.spec;
  const names = crd.spec.names;
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  const result: CustomResourceOptions[] = [];
  for (const version of versions) {
    if (!isObject(version) || version.served === false || typeof version.name !== 'string') continue;
    const subresources = isObject(version.subresources) ? version.subresources : {};
    const schema = isObject(version.schema) ? version.schema.openAPIV3Schema : undefined;
    const options: CustomResourceOptions = {
      group: String(spec.group),
      version: version.name,
      plural: String(names.plural),
      kind: String(names.kind),
      scope: spec.scope === 'Namespaced' ? 'Namespaced' : 'Cluster',
      statusSubresource: 'status' in subresources,
    };
    if (typeof names.singular === 'string') options.singular = names.singular;
    if (typeof names.listKind === 'string') options.listKind = names.listKind;
    if (Array.isArray(names.shortNames)) options.shortNames = names.shortNames.map(String);
    if (schema !== undefined) options.schema = schema;
    result.push(options);
  }
  return result;
}

/** Applies the `default`s of an OpenAPI v3 (structural) schema in place, as the apiextensions server does. */
export function applySchemaDefaults(value: unknown, schema: unknown): void {
  if (!isObject(schema)) return;
  if (isObject(value) && isObject(schema.properties)) {
    for (const [key, propSchema] of Object.entries(schema.properties)) {
      if (!isObject(propSchema)) continue;
      if (value[key] === undefined && propSchema.default !== undefined)
        value[key] = structuredClone(propSchema.default);
      if (value[key] !== undefined) applySchemaDefaults(value[key], propSchema);
    }
  }
  if (isObject(value) && isObject(schema.additionalProperties)) {
    const known = isObject(schema.properties) ? schema.properties : {};
    for (const [key, item] of Object.entries(value)) {
      if (!(key in known)) applySchemaDefaults(item, schema.additionalProperties);
    }
  }
  if (Array.isArray(value) && isObject(schema.items)) {
    for (const item of value) applySchemaDefaults(item, schema.items);
  }
}

// ---- registry and discovery -----------------------------------------------------------------------------------

const VERBS_FULL = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export class ResourceRegistry {
  private readonly byPath = new Map<string, ResourceDef>();
  readonly all: ResourceDef[] = [];

  constructor(defs: ResourceDef[]) {
    for (const def of defs) this.add(def);
  }

  add(def: ResourceDef): void {
    const key = `${def.group}/${def.version}/${def.resource}`;
    if (this.byPath.has(key)) throw new Error(`resource ${key} defined twice`);
    this.byPath.set(key, def);
    this.all.push(def);
  }

  find(group: string, version: string, resource: string): ResourceDef | undefined {
    return this.byPath.get(`${group}/${version}/${resource}`);
  }

  /** The definition owning a storage collection (the first registered, e.g. core/v1 for events). */
  forStorage(storage: string): ResourceDef | undefined {
    return this.all.find((def) => def.storage === storage);
  }

  /** Finds by plural, `plural.group`, kind or short name: the name tests use with `store`. */
  lookup(name: string): ResourceDef | undefined {
    const lower = name.toLowerCase();
    return (
      this.all.find((def) => def.storage === name) ??
      this.all.find((def) => def.resource === lower || `${def.resource}.${def.group}` === lower) ??
      this.all.find((def) => def.kind.toLowerCase() === lower || def.shortNames.includes(lower))
    );
  }

  groupVersions(group: string): string[] {
    return [...new Set(this.all.filter((def) => def.group === group).map((def) => def.version))];
  }

  groups(): string[] {
    return [...new Set(this.all.map((def) => def.group).filter((group) => group !== ''))];
  }

  apiGroup(group: string): Record<string, unknown> | undefined {
    const versions = this.groupVersions(group);
    const first = versions[0];
    if (first === undefined) return undefined;
    const list = versions.map((version) => ({ groupVersion: `${group}/${version}`, version }));
    return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: list, preferredVersion: list[0] };
  }

  apiGroupList(): Record<string, unknown> {
    const groups = this.groups().map((group) => {
      const doc = this.apiGroup(group) ?? {};
      return { name: group, versions: doc.versions, preferredVersion: doc.preferredVersion };
    });
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }

  /** APIResourceList for one group/version, including subresources (`pods/eviction`, `pods/status`, ...). */
  resourceList(group: string, version: string): Record<string, unknown> | undefined {
    const defs = this.all.filter((def) => def.group === group && def.version === version);
    if (defs.length === 0) return undefined;
    const resources: Record<string, unknown>[] = [];
    for (const def of defs) {
      const verbs = def.resource === 'bindings' ? ['create'] : VERBS_FULL;
      const entry: Record<string, unknown> = {
        name: def.resource,
        singularName: def.singular,
        namespaced: def.namespaced,
        kind: def.kind,
        verbs,
      };
      if (def.shortNames.length > 0) entry.shortNames = def.shortNames;
      resources.push(entry);
      for (const sub of def.subresources) {
        if (sub === 'status') {
          resources.push({
            name: `${def.resource}/status`,
            singularName: '',
            namespaced: def.namespaced,
            kind: def.kind,
            verbs: ['get', 'patch', 'update'],
          });
        } else if (sub === 'eviction') {
          resources.push({
            name: `${def.resource}/eviction`,
            singularName: '',
            namespaced: def.namespaced,
            group: 'policy',
            version: 'v1',
            kind: 'Eviction',
            verbs: ['create'],
          });
        } else if (sub === 'binding') {
          resources.push({
            name: `${def.resource}/binding`,
            singularName: '',
            namespaced: def.namespaced,
            kind: 'Binding',
            verbs: ['create'],
          });
        }
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf({ group, version }), resources };
  }
}
