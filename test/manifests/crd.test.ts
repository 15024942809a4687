// The RebalancePolicy CRD: its schema must be one the API server (1.26+) accepts, must carry the defaults and
// validations of DESIGN.md, and must accept every sample in manifests/samples/ and reject every one in
// manifests/samples/invalid/.
//
// The OpenAPI part is checked with ajv after converting the Kubernetes dialect to JSON Schema. CEL rules cannot be
// run without an API server (and no CEL library is a dependency), so each rule is paired below with a TypeScript
// function stating its intent, keyed by the rule's message; the tests assert that the CRD's rules are exactly these.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  crd,
  CRD_PATH,
  crdText,
  makeAjv,
  nodeAt,
  nodes,
  openApi,
  policyObject as policy,
  ROOT,
  toJsonSchema,
  version,
  type Parsed,
  type Schema,
} from './crdSchema.js';
import { INVALID_SAMPLES } from './invalidSamples.js';

const CRD_COPY_PATH = 'manifests/crd.yaml';
const CHART_CRD_PATH = 'charts/kube-rebalancer/crds/rebalancer.dev_rebalancepolicies.yaml';
const SAMPLES = 'manifests/samples';
const INVALID = 'manifests/samples/invalid';

// ---- the spec with every default, as DESIGN.md writes it ----------------------------------------------------------
// A strategy registered after DESIGN.md's five adds its own section: the defaulted spec must contain these, and
// test/policy/crdMirror.test.ts holds every section, these and later ones, to its strategy's defaults.

const DEFAULT_SPEC = {
  schedule: '*/5 * * * *',
  suspend: false,
  mode: 'DryRun',
  namespaces: { include: [], exclude: ['kube-system'] },
  podSelector: {},
  strategies: {
    topologySpread: { enabled: true, includeSoftConstraints: false, defaultConstraints: [] },
    podAntiAffinity: { enabled: true },
    podAffinity: { enabled: true },
    nodeAffinity: { enabled: true, required: true, preferred: false },
    // includedTaints: beyond DESIGN.md's list, the descheduler's argument of that name (convert carries it over).
    nodeTaints: { enabled: true, includePreferNoSchedule: false, excludedTaints: [], includedTaints: [] },
  },
  eviction: {
    priorityThreshold: { className: 'system-cluster-critical' },
    maxPerCycle: 10,
    maxPerNode: 2,
    maxPerNamespace: 5,
    maxPerWorkload: 1,
    minPodAge: '5m',
    evictLocalStoragePods: false,
    evictBarePods: false,
    evictPodsWithPVC: true,
    nodeFit: true,
    waitForReplacement: true,
    replacementTimeout: '5m',
    cooldown: '30m',
  },
  triggers: { nodeChanges: true, debounce: '2s' },
  windows: [],
  timeZone: 'UTC',
};

/**
 * DESIGN.md's spec as the CRD defaults an empty one: without strategies, since what a policy names is what runs and
 * the CRD must not default an absent section into existence (the operator then runs topologySpread alone).
 */
const { strategies: DESIGN_SECTIONS, ...DESIGN_SPEC } = DEFAULT_SPEC;

// ---- CEL rules and their intent -----------------------------------------------------------------------------------

interface CelIntent {
  /** Where the rule sits in the schema (`[*]` for list items). */
  readonly path: string;
  readonly rule: string;
  /** What the rule means, in TypeScript: true when `self` is valid. */
  readonly intent: (self: Parsed) => boolean;
}

const has = (object: Parsed, field: string): boolean =>
  object !== null && typeof object === 'object' && field in object;

/** The schedules' rule: 5 or 6 fields, numbers of at most two digits (RE2 and JavaScript read it alike). */
const CRON_REGEX = String.raw`^\s*(?:[0-9]{1,2}(?:[A-Za-z*/,?#-][0-9]{0,2})*|(?:[A-Za-z*/,?#-][0-9]{0,2})+)(\s+(?:[0-9]{1,2}(?:[A-Za-z*/,?#-][0-9]{0,2})*|(?:[A-Za-z*/,?#-][0-9]{0,2})+)){4,5}\s*$`;

/** Keyed by the rule's message, which is what a user sees. */
const CEL_INTENTS: Readonly<Record<string, CelIntent>> = {
  'namespaces.include and namespaces.exclude must not share a namespace': {
    path: '.spec.namespaces',
    rule: '!has(self.include) || !has(self.exclude) || self.include.all(n, !(n in self.exclude))',
    intent: (self) =>
      !has(self, 'include') || !has(self, 'exclude') || !self.include.some((n: string) => self.exclude.includes(n)),
  },
  'values must be non-empty for operators In and NotIn': {
    path: '.spec.podSelector.matchExpressions[*]',
    rule: "!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",
    intent: (self) => !['In', 'NotIn'].includes(self.operator) || (has(self, 'values') && self.values.length > 0),
  },
  'values must be empty for operators Exists and DoesNotExist': {
    path: '.spec.podSelector.matchExpressions[*]',
    rule: "!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",
    intent: (self) =>
      !['Exists', 'DoesNotExist'].includes(self.operator) || !has(self, 'values') || self.values.length === 0,
  },
  'nodeSelector values must be non-empty for operators In and NotIn': {
    path: '.spec.nodeSelector.matchExpressions[*]',
    rule: "!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",
    intent: (self) => !['In', 'NotIn'].includes(self.operator) || (has(self, 'values') && self.values.length > 0),
  },
  'nodeSelector values must be empty for operators Exists and DoesNotExist': {
    path: '.spec.nodeSelector.matchExpressions[*]',
    rule: "!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",
    intent: (self) =>
      !['Exists', 'DoesNotExist'].includes(self.operator) || !has(self, 'values') || self.values.length === 0,
  },
  'must be a cron expression with 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, each number at most two digits':
    {
      path: '.spec.schedule',
      rule: `self.matches(r'${CRON_REGEX}')`,
      intent: (self) => new RegExp(CRON_REGEX).test(self),
    },
  "a window's schedule must be a cron expression with 5 fields, or 6 with seconds first, each number at most two digits":
    {
      path: '.spec.windows[*].schedule',
      rule: `self.matches(r'${CRON_REGEX}')`,
      intent: (self) => new RegExp(CRON_REGEX).test(self),
    },
  'namespaces.labelSelector values must be non-empty for operators In and NotIn': {
    path: '.spec.namespaces.labelSelector.matchExpressions[*]',
    rule: "!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",
    intent: (self) => !['In', 'NotIn'].includes(self.operator) || (has(self, 'values') && self.values.length > 0),
  },
  'namespaces.labelSelector values must be empty for operators Exists and DoesNotExist': {
    path: '.spec.namespaces.labelSelector.matchExpressions[*]',
    rule: "!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",
    intent: (self) =>
      !['Exists', 'DoesNotExist'].includes(self.operator) || !has(self, 'values') || self.values.length === 0,
  },
  'minDomains may only be set when whenUnsatisfiable is DoNotSchedule': {
    path: '.spec.strategies.topologySpread.defaultConstraints[*]',
    rule: "!has(self.minDomains) || self.whenUnsatisfiable == 'DoNotSchedule'",
    intent: (self) => !has(self, 'minDomains') || self.whenUnsatisfiable === 'DoNotSchedule',
  },
  "a window's duration must be positive": {
    path: '.spec.windows[*].duration',
    rule: "duration(self) > duration('0s')",
    // The schema's pattern admits only unit-suffixed Go durations, so "positive" means some digit is not 0.
    intent: (self) => /[1-9]/.test(self),
  },
  'thresholds and targetThresholds must name the same resources': {
    path: '.spec.strategies.lowNodeUtilization',
    rule: '!has(self.thresholds) || !has(self.targetThresholds) || (self.thresholds.all(k, k in self.targetThresholds) && self.targetThresholds.all(k, k in self.thresholds))',
    intent: (self) => {
      if (!has(self, 'thresholds') || !has(self, 'targetThresholds')) return true;
      const low = Object.keys(self.thresholds).sort();
      const high = Object.keys(self.targetThresholds).sort();
      return low.join(',') === high.join(',');
    },
  },
  'thresholds must not be above targetThresholds unless useDeviationThresholds is set': {
    path: '.spec.strategies.lowNodeUtilization',
    rule: '!has(self.thresholds) || !has(self.targetThresholds) || (has(self.useDeviationThresholds) && self.useDeviationThresholds) || self.thresholds.all(k, !(k in self.targetThresholds) || self.thresholds[k] <= self.targetThresholds[k])',
    intent: (self) =>
      !has(self, 'thresholds') ||
      !has(self, 'targetThresholds') ||
      self.useDeviationThresholds === true ||
      Object.keys(self.thresholds).every(
        (k) => !(k in self.targetThresholds) || self.thresholds[k] <= self.targetThresholds[k],
      ),
  },
  'protectedStorageClasses protects only with evictPodsWithPVC false': {
    path: '.spec.eviction',
    rule:
      '!has(self.protectedStorageClasses) || size(self.protectedStorageClasses) == 0 || ' +
      '(has(self.evictPodsWithPVC) && !self.evictPodsWithPVC)',
    intent: (self) =>
      !Array.isArray(self['protectedStorageClasses']) ||
      self['protectedStorageClasses'].length === 0 ||
      self['evictPodsWithPVC'] === false,
  },
  'usage: Prometheus needs prometheus.url and prometheus.query': {
    path: '.spec.strategies.lowNodeUtilization',
    rule: "!has(self.usage) || self.usage != 'Prometheus' || (has(self.prometheus) && has(self.prometheus.url) && has(self.prometheus.query))",
    intent: (self) =>
      self.usage !== 'Prometheus' ||
      (has(self, 'prometheus') && has(self.prometheus, 'url') && has(self.prometheus, 'query')),
  },
  "with usage: Prometheus, thresholds and targetThresholds name only MetricResource (the query's value in percent); without it, neither names it":
    {
      path: '.spec.strategies.lowNodeUtilization',
      rule: "(has(self.usage) && self.usage == 'Prometheus') ? ((!has(self.thresholds) || (self.thresholds.size() == 1 && 'MetricResource' in self.thresholds)) && (!has(self.targetThresholds) || (self.targetThresholds.size() == 1 && 'MetricResource' in self.targetThresholds))) : ((!has(self.thresholds) || !('MetricResource' in self.thresholds)) && (!has(self.targetThresholds) || !('MetricResource' in self.targetThresholds)))",
      intent: (self) =>
        ['thresholds', 'targetThresholds'].every((key) => {
          if (!has(self, key)) return true;
          const names = Object.keys(self[key]);
          return self.usage === 'Prometheus'
            ? names.length === 1 && names[0] === 'MetricResource'
            : !names.includes('MetricResource');
        }),
    },
  'priorityThreshold must set exactly one of value and className': {
    path: '.spec.eviction.priorityThreshold',
    rule: 'has(self.value) != has(self.className)',
    intent: (self) => has(self, 'value') !== has(self, 'className'),
  },
};

const ajv = makeAjv();
const validateOpenApi: ValidateFunction = ajv.compile(toJsonSchema(openApi));

/** Evaluates the CEL intents over a (defaulted) object, as the API server evaluates the rules. */
function celErrors(schema: Schema, value: unknown, path: string): string[] {
  const errors: string[] = [];
  for (const validation of schema['x-kubernetes-validations'] ?? []) {
    const intent = CEL_INTENTS[validation.message];
    if (intent === undefined) errors.push(`${path}: rule without a test intent: ${validation.message}`);
    else if (!intent.intent(value)) errors.push(`${path}: ${validation.message}`);
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) => errors.push(...celErrors(schema.items, item, `${path}[${i}]`)));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const childSchema =
        schema.properties?.[key] ??
        (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (childSchema !== undefined) errors.push(...celErrors(childSchema, child, `${path}.${key}`));
    }
  }
  return errors;
}

interface Outcome {
  readonly openApi: ErrorObject[];
  readonly cel: string[];
  readonly defaulted: Parsed;
}

/** Defaulting, then OpenAPI validation, then the rules (which the API server runs only on schema-valid objects). */
function admit(object: unknown): Outcome {
  const defaulted = structuredClone(object);
  const valid = validateOpenApi(defaulted);
  const openApiErrors = valid ? [] : [...(validateOpenApi.errors ?? [])];
  return { openApi: openApiErrors, cel: valid ? celErrors(openApi, defaulted, '') : [], defaulted };
}

const yamlFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir))
    .filter((file) => file.endsWith('.yaml'))
    .sort();

const readSample = (dir: string, file: string): Parsed => parseYaml(readFileSync(join(ROOT, dir, file), 'utf8'));

// ---- tests ---------------------------------------------------------------------------------------------------------

describe('RebalancePolicy CRD: identity', () => {
  it('is rebalancer.dev RebalancePolicy, cluster-scoped, short name rbp', () => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.kind).toBe('CustomResourceDefinition');
    expect(crd.metadata.name).toBe('rebalancepolicies.rebalancer.dev');
    expect(crd.spec.group).toBe('rebalancer.dev');
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.names).toMatchObject({
      kind: 'RebalancePolicy',
      listKind: 'RebalancePolicyList',
      plural: 'rebalancepolicies',
      singular: 'rebalancepolicy',
    });
    expect(crd.spec.names.shortNames).toContain('rbp');
    expect(crd.spec.names.categories).toContain('rebalancer');
  });

  it('serves and stores v1alpha1 with a status subresource', () => {
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
  });

  it('prints mode, schedule, status (Ready/OutsideWindow/Invalid/Degraded/Suspended), last run, last evictions, last dry-run evictions, max skew, landing and age', () => {
    const columns = version.additionalPrinterColumns as Array<{ name: string; priority?: number; jsonPath: string }>;
    expect(columns.filter((column) => (column.priority ?? 0) === 0).map((column) => column.name)).toEqual([
      'Mode',
      'Schedule',
      'Status',
      'Last Run',
      'Last Evictions',
      'Last Dry-Run',
      'Max Skew',
      'Landing',
      'Age',
    ]);
    expect(columns.find((c) => c.name === 'Last Dry-Run')?.jsonPath).toBe('.status.lastPlan.dryRunEvictions');
    expect(columns.find((c) => c.name === 'Status')?.jsonPath).toBe('.status.conditions[?(@.type=="Ready")].reason');
  });

  it('points every printer column at a schema field of a matching type', () => {
    const columnTypes: Record<string, string[]> = {
      string: ['string'],
      integer: ['integer'],
      number: ['number', 'integer'],
      boolean: ['boolean'],
      date: ['string'],
    };
    for (const column of version.additionalPrinterColumns) {
      expect(Object.keys(columnTypes), column.name).toContain(column.type);
      if (column.jsonPath === '.metadata.creationTimestamp') continue;
      // `.status.conditions[?(@.type=="Ready")].status` → `.status.conditions[*].status`
      const path = (column.jsonPath as string).replace(/\[\?\(.*?\)\]/g, '[*]');
      expect(columnTypes[column.type], column.name).toContain(nodeAt(path).type);
    }
  });

  it('is copied byte for byte into manifests/crd.yaml for kustomize', () => {
    const copyPath = join(ROOT, CRD_COPY_PATH);
    if (process.env.UPDATE_MANIFESTS === '1') writeFileSync(copyPath, crdText);
    expect(existsSync(copyPath), `${CRD_COPY_PATH} is missing: cp ${CRD_PATH} ${CRD_COPY_PATH}`).toBe(true);
    const copy = readFileSync(copyPath, 'utf8');
    expect(copy === crdText, `${CRD_COPY_PATH} differs from ${CRD_PATH}: cp ${CRD_PATH} ${CRD_COPY_PATH}`).toBe(true);
  });

  // helm installs a chart's crds/ as they are (never templated), so the chart carries its own copy; a stale one
  // installs a schema without the newer status fields and printer columns.
  it('is copied byte for byte into the Helm chart (charts/kube-rebalancer/crds/)', () => {
    const copyPath = join(ROOT, CHART_CRD_PATH);
    if (process.env.UPDATE_MANIFESTS === '1') writeFileSync(copyPath, crdText);
    expect(existsSync(copyPath), `${CHART_CRD_PATH} is missing: cp ${CRD_PATH} ${CHART_CRD_PATH}`).toBe(true);
    const copy = readFileSync(copyPath, 'utf8');
    expect(copy === crdText, `${CHART_CRD_PATH} differs from ${CRD_PATH}: cp ${CRD_PATH} ${CHART_CRD_PATH}`).toBe(true);
  });
});

describe('RebalancePolicy CRD: a structural schema the API server accepts', () => {
  const KNOWN_KEYWORDS = new Set([
    'type',
    'format',
    'description',
    'default',
    'enum',
    'pattern',
    'minimum',
    'maximum',
    'minLength',
    'maxLength',
    'minItems',
    'maxItems',
    'minProperties',
    'maxProperties',
    'required',
    'properties',
    'items',
    'additionalProperties',
    'nullable',
    'x-kubernetes-list-type',
    'x-kubernetes-list-map-keys',
    'x-kubernetes-map-type',
    'x-kubernetes-validations',
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-int-or-string',
  ]);

  it.each(nodes.map((node) => [node.path || '(root)', node]))('%s has a type and only known keywords', (_, node) => {
    const { schema } = node;
    const typed =
      schema['x-kubernetes-int-or-string'] === true || schema['x-kubernetes-preserve-unknown-fields'] === true;
    if (!typed) expect(['object', 'array', 'string', 'integer', 'number', 'boolean']).toContain(schema.type);
    for (const key of Object.keys(schema)) expect(KNOWN_KEYWORDS, `keyword ${key}`).toContain(key);
    // Forbidden in structural schemas, or in CRDs at all.
    expect(schema.properties !== undefined && schema.additionalProperties !== undefined).toBe(false);
    expect(schema.uniqueItems).toBeUndefined();
    if (schema.type === 'array') expect(schema.items, 'arrays need items').toBeDefined();
    if (schema.enum !== undefined) {
      for (const value of schema.enum) expect(typeof value).toBe(schema.type === 'integer' ? 'number' : schema.type);
    }
    if (schema.required !== undefined) {
      for (const field of schema.required) expect(Object.keys(schema.properties ?? {})).toContain(field);
    }
  });

  it('needs x-kubernetes-preserve-unknown-fields nowhere', () => {
    expect(nodes.filter((node) => node.schema['x-kubernetes-preserve-unknown-fields'] !== undefined)).toEqual([]);
  });

  it('leaves metadata unconstrained and sets no default at the root, in metadata or in status', () => {
    expect(nodeAt('.metadata')).toEqual({ type: 'object' });
    expect(openApi.default).toBeUndefined();
    const misplaced = nodes.filter(
      (node) => node.schema.default !== undefined && /^\.(metadata|status)(\.|\[|$)/.test(node.path),
    );
    expect(misplaced.map((node) => node.path)).toEqual([]);
  });

  it('gives every default a value its own schema accepts', () => {
    for (const node of nodes.filter((n) => n.schema.default !== undefined)) {
      const { default: value, ...withoutDefault } = toJsonSchema(node.schema);
      const check = makeAjv().compile(withoutDefault);
      expect(check(structuredClone(value)), `${node.path}: ${JSON.stringify(check.errors)}`).toBe(true);
      const cel = celErrors(node.schema, value, node.path);
      expect(cel, node.path).toEqual([]);
    }
  });

  it('keys list-type map lists on required scalar fields and keeps set lists scalar', () => {
    for (const { path, schema } of nodes) {
      if (schema['x-kubernetes-list-type'] === 'map') {
        const keys: string[] = schema['x-kubernetes-list-map-keys'];
        expect(keys.length, path).toBeGreaterThan(0);
        for (const key of keys) {
          expect(schema.items.required, `${path} key ${key}`).toContain(key);
          expect(['string', 'integer', 'boolean']).toContain(schema.items.properties[key].type);
        }
      }
      if (schema['x-kubernetes-list-type'] === 'set')
        expect(['string', 'integer', 'boolean']).toContain(schema.items.type);
      if (schema['x-kubernetes-list-map-keys'] !== undefined) expect(schema['x-kubernetes-list-type']).toBe('map');
    }
  });

  it('bounds every list, map and string of the spec, so CEL cost estimates stay small', () => {
    const unbounded = nodes
      .filter((node) => node.path.startsWith('.spec'))
      .filter(({ schema }) => {
        if (schema.type === 'array') return schema.maxItems === undefined;
        if (schema.type === 'string') return schema.maxLength === undefined;
        if (schema.type === 'object' && typeof schema.additionalProperties === 'object') {
          return schema.maxProperties === undefined;
        }
        return false;
      })
      .map((node) => node.path);
    expect(unbounded).toEqual([]);
  });

  it('bounds every list a rule is nested in, and the status condition list', () => {
    for (const node of nodes.filter((n) => n.schema['x-kubernetes-validations'] !== undefined)) {
      for (const ancestor of node.ancestors.filter((a) => a.type === 'array')) {
        expect(ancestor.maxItems, node.path).toBeGreaterThan(0);
      }
    }
    expect(nodeAt('.status.conditions').maxItems).toBeGreaterThan(0);
  });
});

describe('RebalancePolicy CRD: fields, defaults and enums of DESIGN.md', () => {
  it('defaults an empty spec to exactly the spec DESIGN.md writes', () => {
    expect(admit(policy({})).defaulted.spec).toEqual(DESIGN_SPEC);
    expect(
      admit({ apiVersion: 'rebalancer.dev/v1alpha1', kind: 'RebalancePolicy', metadata: {} }).defaulted.spec,
    ).toEqual(DESIGN_SPEC);
  });

  it('defaults a section present to the values DESIGN.md writes, on, and adds no section the spec does not name', () => {
    const named = Object.fromEntries(Object.keys(DESIGN_SECTIONS).map((key) => [key, {}]));
    expect(admit(policy({ strategies: named })).defaulted.spec.strategies).toEqual(DESIGN_SECTIONS);
    expect(admit(policy({ strategies: { lowNodeUtilization: {} } })).defaulted.spec.strategies).toEqual({
      lowNodeUtilization: expect.objectContaining({ enabled: true }),
    });
    expect(admit(policy({ strategies: { nodeTaints: { enabled: false } } })).defaulted.spec.strategies).toEqual({
      nodeTaints: { enabled: false, includePreferNoSchedule: false, excludedTaints: [], includedTaints: [] },
    });
  });

  it('defaults the fields a partial spec leaves out, and no more', () => {
    const { defaulted, openApi: errors } = admit(
      policy({ namespaces: { include: ['shop'] }, eviction: { priorityThreshold: { value: 100 }, maxPerCycle: 0 } }),
    );
    expect(errors).toEqual([]);
    expect(defaulted.spec.namespaces).toEqual({ include: ['shop'], exclude: ['kube-system'] });
    expect(defaulted.spec.eviction.priorityThreshold).toEqual({ value: 100 });
    expect(defaulted.spec.eviction.maxPerCycle).toBe(0);
    expect(defaulted.spec.eviction.maxPerNode).toBe(2);
  });

  it('has a schema node for every spec field of DESIGN.md', () => {
    const leaves = (value: Parsed, path: string): string[] =>
      value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0
        ? Object.entries(value).flatMap(([k, v]) => leaves(v, `${path}.${k}`))
        : [path];
    for (const path of leaves(DEFAULT_SPEC, '.spec')) expect(() => nodeAt(path), path).not.toThrow();
    for (const path of [
      '.spec.eviction.priorityThreshold.value',
      '.spec.podSelector.matchLabels',
      '.spec.podSelector.matchExpressions[*].operator',
      '.spec.strategies.topologySpread.defaultConstraints[*].minDomains',
    ]) {
      expect(() => nodeAt(path), path).not.toThrow();
    }
  });

  it.each([
    ['.spec.mode', ['DryRun', 'Evict']],
    ['.spec.strategies.topologySpread.defaultConstraints[*].whenUnsatisfiable', ['DoNotSchedule', 'ScheduleAnyway']],
    ['.spec.strategies.topologySpread.defaultConstraints[*].nodeAffinityPolicy', ['Honor', 'Ignore']],
    ['.spec.strategies.topologySpread.defaultConstraints[*].nodeTaintsPolicy', ['Honor', 'Ignore']],
    ['.spec.podSelector.matchExpressions[*].operator', ['In', 'NotIn', 'Exists', 'DoesNotExist']],
    ['.status.conditions[*].status', ['True', 'False', 'Unknown']],
  ])('%s is one of %j', (path, values) => {
    expect(nodeAt(path).enum).toEqual(values);
  });

  it.each([
    ['.spec.strategies.topologySpread.defaultConstraints[*].maxSkew', 1],
    ['.spec.strategies.topologySpread.defaultConstraints[*].minDomains', 1],
    ['.spec.eviction.maxPerCycle', 0],
    ['.spec.eviction.maxPerNode', 0],
    ['.spec.eviction.maxPerNamespace', 0],
    ['.spec.eviction.maxPerWorkload', 0],
  ])('%s is an int32 of at least %d', (path, minimum) => {
    expect(nodeAt(path)).toMatchObject({ type: 'integer', format: 'int32', minimum });
  });

  it('gives defaultConstraints no labelSelector (the workload is counted)', () => {
    const item = nodeAt('.spec.strategies.topologySpread.defaultConstraints[*]');
    expect(Object.keys(item.properties)).not.toContain('labelSelector');
    expect(item.required).toEqual(['maxSkew', 'topologyKey', 'whenUnsatisfiable']);
  });

  it('describes status: conditions keyed by type, run times, last plan and totals', () => {
    const conditions = nodeAt('.status.conditions');
    expect(conditions['x-kubernetes-list-type']).toBe('map');
    expect(conditions['x-kubernetes-list-map-keys']).toEqual(['type']);
    expect(Object.keys(conditions.items.properties).sort()).toEqual(
      ['lastTransitionTime', 'message', 'observedGeneration', 'reason', 'status', 'type'].sort(),
    );
    expect(Object.keys(nodeAt('.status.lastPlan').properties)).toEqual([
      'evictions',
      'dryRunEvictions',
      'skipped',
      'violations',
      'maxSkewObserved',
      'maxSkewBefore',
      'stoppedBy',
      'skippedReasons',
    ]);
    expect(Object.keys(nodeAt('.status.totals').properties)).toEqual(['evicted', 'failed']);
    for (const path of [
      '.status.lastRunTime',
      '.status.lastSuccessfulRunTime',
      '.status.conditions[*].lastTransitionTime',
    ]) {
      expect(nodeAt(path)).toMatchObject({ type: 'string', format: 'date-time' });
    }
    expect(nodeAt('.status.observedGeneration')).toMatchObject({ type: 'integer', format: 'int64' });
  });

  it('accepts a status as the operator writes it', () => {
    const object = {
      ...(policy({}) as object),
      status: {
        observedGeneration: 3,
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'CycleSucceeded',
            message: '2 evictions planned',
            lastTransitionTime: '2025-01-01T00:00:00Z',
            observedGeneration: 3,
          },
        ],
        lastRunTime: '2025-01-01T00:05:00Z',
        lastSuccessfulRunTime: '2025-01-01T00:05:00Z',
        lastPlan: {
          evictions: 2,
          skipped: 1,
          violations: 3,
          maxSkewObserved: 4,
          skippedReasons: [{ reason: 'PodDisruptionBudget allows 0 disruptions', count: 1 }],
        },
        totals: { evicted: 10, failed: 0 },
        cooldowns: [{ workload: 'shop/Deployment/web', until: '2025-01-01T00:35:00Z', reason: 'landed back' }],
        pause: {
          pod: 'shop/web-abc',
          podUid: 'u-1',
          workload: 'shop/Deployment/web',
          since: '2025-01-01T00:05:00Z',
          reason: 'ReplacementPending',
          message: 'replacement shop/web-abc is still Pending',
        },
        lastRunResult: { result: 'Aborted', reason: 'SpecChanged' },
        landing: {
          recent: ['target', 'tied', 'elsewhere', 'elsewhere', 'elsewhere'],
          share: '2/5',
          lastMiss: {
            pod: 'shop/web-abc',
            replacement: 'shop/web-def',
            predicted: ['node-b1', 'node-b2'],
            actual: 'node-a1',
            time: '2025-01-01T00:05:00Z',
          },
          unreliable: {
            since: '2025-01-01T00:05:00Z',
            generation: 3,
            schedulerConfig: 'default',
            message: '3 of the last 5 replacements landed elsewhere than predicted',
          },
        },
      },
    };
    expect(admit(object).openApi).toEqual([]);
    const bad = structuredClone(object);
    bad.status.conditions[0]!.status = 'Yes';
    expect(admit(bad).openApi).not.toEqual([]);
  });
});

describe('RebalancePolicy CRD: value formats', () => {
  const accepts = (spec: unknown): boolean => {
    const outcome = admit(policy(spec));
    return outcome.openApi.length === 0 && outcome.cel.length === 0;
  };

  it.each([
    ['*/5 * * * *', true],
    ['0 */15 * * * *', true], // 6 fields: seconds first
    ['0 3 * * MON-FRI', true],
    ['0,30 8-18 1,15 * *', true],
    ['*/5 * * *', false], // 4 fields
    ['0 0 0 * * * *', false], // 7 fields
    ['every 5 minutes', false],
    ['', false],
    // node-cron expands ranges into arrays: a number of more than two digits never reaches it.
    ['0-200000000 * * * *', false],
    ['0 0-100000000 * * *', false],
    ['*/100 * * * *', false],
    ['0 0 1 1 *', true],
    ['59 23 31 12 7', true],
  ])('schedule %j accepted: %s', (schedule, ok) => {
    expect(accepts({ schedule })).toBe(ok);
  });

  it.each([
    ['0', true],
    ['0s', true],
    ['90s', true],
    ['5m', true],
    ['1h30m', true],
    ['1.5h', true],
    ['250ms', true],
    ['10us', true],
    ['10µs', true],
    ['5', false], // a number without unit
    ['5 minutes', false],
    ['-5m', false], // negative
    ['5d', false], // Go has no day unit
    ['m', false],
  ])('duration %j accepted: %s', (minPodAge, ok) => {
    expect(accepts({ eviction: { minPodAge } })).toBe(ok);
    expect(accepts({ eviction: { cooldown: minPodAge } })).toBe(ok);
    expect(accepts({ eviction: { replacementTimeout: minPodAge } })).toBe(ok);
  });

  it.each([
    ['dedicated', true],
    ['dedicated=gpu', true],
    ['node.kubernetes.io/unschedulable', true],
    ['example.com/maintenance=planned', true],
    ['key=', true], // empty value
    ['=value', false],
    ['dedicated=gpu=a100', false],
    ['Bad_Prefix.example/key', false],
    ['key=value with spaces', false],
  ])('excludedTaints entry %j accepted: %s', (taint, ok) => {
    expect(accepts({ strategies: { nodeTaints: { excludedTaints: [taint] } } })).toBe(ok);
  });

  it('rejects duplicate set entries and unknown fields', () => {
    expect(accepts({ namespaces: { include: ['shop', 'shop'] } })).toBe(false);
    expect(accepts({ strategies: { topologySpread: { enabld: true } } })).toBe(false);
    expect(
      accepts({
        strategies: {
          topologySpread: {
            defaultConstraints: [
              { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: {} },
            ],
          },
        },
      }),
    ).toBe(false);
  });

  it('keeps priorityThreshold.value within int32', () => {
    expect(accepts({ eviction: { priorityThreshold: { value: 2_000_000_000 } } })).toBe(true);
    expect(accepts({ eviction: { priorityThreshold: { value: -5 } } })).toBe(true);
    expect(accepts({ eviction: { priorityThreshold: { value: 2 ** 31 } } })).toBe(false);
    expect(accepts({ eviction: { priorityThreshold: { value: 1.5 } } })).toBe(false);
  });

  it('accepts a LabelSelector podSelector and rejects unknown operators', () => {
    expect(
      accepts({
        podSelector: {
          matchLabels: { app: 'web', 'app.kubernetes.io/part-of': 'shop' },
          matchExpressions: [
            { key: 'tier', operator: 'NotIn', values: ['batch'] },
            { key: 'legacy', operator: 'DoesNotExist' },
          ],
        },
      }),
    ).toBe(true);
    expect(accepts({ podSelector: { matchExpressions: [{ key: 'tier', operator: 'Gt', values: ['1'] }] } })).toBe(
      false,
    );
    expect(accepts({ podSelector: { matchLabels: { app: 'not a label value' } } })).toBe(false);
  });
});

describe('RebalancePolicy CRD: CEL rules', () => {
  const rules = nodes.flatMap((node) =>
    ((node.schema['x-kubernetes-validations'] ?? []) as Schema[]).map((validation) => ({
      path: node.path,
      validation,
    })),
  );

  it('has exactly the rules of the intent table, at their paths, with rule and message only (1.26)', () => {
    expect(rules.map(({ path, validation }) => ({ path, rule: validation.rule, message: validation.message }))).toEqual(
      expect.arrayContaining(Object.entries(CEL_INTENTS).map(([message, { path, rule }]) => ({ path, rule, message }))),
    );
    expect(rules).toHaveLength(Object.keys(CEL_INTENTS).length);
    for (const { validation } of rules) expect(Object.keys(validation).sort()).toEqual(['message', 'rule']);
  });

  it.each([
    [{ className: 'system-cluster-critical' }, true],
    [{ value: 1000 }, true],
    [{ value: 1000, className: 'high' }, false],
    [{}, false],
  ])('priorityThreshold %j is valid: %s', (threshold, ok) => {
    expect(CEL_INTENTS['priorityThreshold must set exactly one of value and className']!.intent(threshold)).toBe(ok);
  });

  it.each<readonly [Record<string, unknown>, boolean]>([
    [{ evictPodsWithPVC: true }, true],
    [{ evictPodsWithPVC: true, protectedStorageClasses: [] }, true],
    [{ evictPodsWithPVC: false, protectedStorageClasses: ['fast-ssd'] }, true],
    [{ evictPodsWithPVC: true, protectedStorageClasses: ['fast-ssd'] }, false],
  ])('eviction %j is valid: %s', (eviction, ok) => {
    const intent = CEL_INTENTS['protectedStorageClasses protects only with evictPodsWithPVC false']!;
    expect(intent.intent(eviction)).toBe(ok);
  });

  it.each([
    ['DoNotSchedule', 3, true],
    ['DoNotSchedule', undefined, true],
    ['ScheduleAnyway', undefined, true],
    ['ScheduleAnyway', 3, false],
  ])('whenUnsatisfiable %s with minDomains %s is valid: %s', (whenUnsatisfiable, minDomains, ok) => {
    const constraint = { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable, ...(minDomains ? { minDomains } : {}) };
    expect(CEL_INTENTS['minDomains may only be set when whenUnsatisfiable is DoNotSchedule']!.intent(constraint)).toBe(
      ok,
    );
  });

  it.each([
    ['In', ['a'], true],
    ['NotIn', ['a', 'b'], true],
    ['In', undefined, false],
    ['NotIn', [], false],
    ['Exists', undefined, true],
    ['DoesNotExist', [], true],
    ['Exists', ['a'], false],
    ['DoesNotExist', ['a'], false],
    // An unknown operator is the enum's to report: no rule adds a false line about values.
    ['Inn', ['a'], true],
    ['Inn', undefined, true],
  ])('operator %s with values %j is valid: %s', (operator, values, ok) => {
    const requirement = { key: 'app', operator, ...(values ? { values } : {}) };
    const rules = [
      CEL_INTENTS['values must be non-empty for operators In and NotIn']!,
      CEL_INTENTS['values must be empty for operators Exists and DoesNotExist']!,
    ];
    expect(rules.every((r) => r.intent(requirement))).toBe(ok);
  });

  it('answers a bad schedule in words, never with the regex', () => {
    const { openApi, cel } = admit(policy({ schedule: '*/5 * * *' }));
    expect(openApi).toEqual([]);
    expect(cel).toEqual([
      '.spec.schedule: must be a cron expression with 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, each number at most two digits',
    ]);
  });

  it.each([
    [{ include: [], exclude: ['kube-system'] }, true],
    [{ include: ['shop'], exclude: ['kube-system'] }, true],
    [{ include: ['kube-system'], exclude: [] }, true],
    [{ include: ['shop', 'kube-system'], exclude: ['kube-system'] }, false],
  ])('namespaces %j are valid: %s', (namespaces, ok) => {
    expect(
      CEL_INTENTS['namespaces.include and namespaces.exclude must not share a namespace']!.intent(namespaces),
    ).toBe(ok);
  });

  it('applies the rules after defaulting, as the API server does', () => {
    // exclude defaults to [kube-system], so including kube-system needs an explicit exclude.
    expect(admit(policy({ namespaces: { include: ['kube-system'] } })).cel).toEqual([
      '.spec.namespaces: namespaces.include and namespaces.exclude must not share a namespace',
    ]);
    expect(admit(policy({ namespaces: { include: ['kube-system'], exclude: [] } })).cel).toEqual([]);
  });
});

describe('RebalancePolicy samples', () => {
  it.each(yamlFiles(SAMPLES))('%s is accepted', (file) => {
    const sample = readSample(SAMPLES, file);
    expect(sample.apiVersion).toBe('rebalancer.dev/v1alpha1');
    expect(sample.kind).toBe('RebalancePolicy');
    const outcome = admit(sample);
    expect(outcome.openApi).toEqual([]);
    expect(outcome.cel).toEqual([]);
  });

  it('default-dryrun.yaml is the default policy, written out', () => {
    const sample = readSample(SAMPLES, 'default-dryrun.yaml');
    expect(sample.metadata.name).toBe('default');
    // The one section that runs without strategies, written out.
    expect(sample.spec).toEqual({ ...DESIGN_SPEC, strategies: { topologySpread: DESIGN_SECTIONS.topologySpread } });
    expect(sample.spec.mode).toBe('DryRun');
  });

  it('has the samples the README promises', () => {
    expect(yamlFiles(SAMPLES)).toEqual(
      expect.arrayContaining(['default-dryrun.yaml', 'taints-and-affinity.yaml', 'zone-balance-evict.yaml']),
    );
  });

  it('lists every file of samples/invalid/ in the table below', () => {
    expect(yamlFiles(INVALID)).toEqual(Object.keys(INVALID_SAMPLES).sort());
  });

  it.each(Object.entries(INVALID_SAMPLES))('%s is rejected', (file, expected) => {
    const outcome = admit(readSample(INVALID, file));
    if ('openApi' in expected) {
      expect(outcome.openApi.map((error) => error.instancePath)).toContain(expected.openApi);
    } else {
      // The schema alone accepts it: the rule is what rejects it.
      expect(outcome.openApi).toEqual([]);
      expect(outcome.cel).toEqual([expected.cel]);
    }
  });
});
