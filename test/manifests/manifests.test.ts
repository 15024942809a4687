// The install manifests (manifests/), the Dockerfile and the monitoring bundle: parsed and checked against what the
// operator needs and what src/metrics/names.ts exports.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { METRIC_DEFINITIONS, METRIC_LABELS } from '../../src/metrics/names.js';
import { DEFAULT_PROFILE } from '../../src/scheduling/profile.js';
import { parseSchedulerConfig } from '../../src/scheduling/schedulerConfig.js';

/** Parsed YAML or JSON (what `JSON.parse` returns): read freely here, the assertions check its shape. */
type Parsed = ReturnType<typeof JSON.parse>;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MANIFESTS = join(ROOT, 'manifests');
const NAMESPACE = 'kube-rebalancer';
const APP_LABELS = { 'app.kubernetes.io/name': 'kube-rebalancer' };

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((entry) => {
      const path = join(dir, entry);
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    })
    .sort();
}

function parseDocuments(path: string): Parsed[] {
  const documents = parseAllDocuments(readFileSync(path, 'utf8'));
  for (const document of documents) {
    if (document.errors.length > 0) throw new Error(`${path}: ${document.errors.map((e) => e.message).join('; ')}`);
  }
  return documents.map((document) => document.toJS()).filter((object) => object !== null);
}

const yamlPaths = filesUnder(MANIFESTS).filter((path) => path.endsWith('.yaml'));
const topLevelYaml = readdirSync(MANIFESTS)
  .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
  .sort();
const kustomization = parseDocuments(join(MANIFESTS, 'kustomization.yaml'))[0];
const installed: Parsed[] = (kustomization.resources as string[]).flatMap((file) =>
  parseDocuments(join(MANIFESTS, file)),
);

function installedObject(kind: string, name?: string): Parsed {
  const found = installed.filter(
    (object) => object.kind === kind && (name === undefined || object.metadata.name === name),
  );
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name ?? ''}, found ${found.length}`);
  return found[0];
}

function kubectlAvailable(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const CLUSTER_SCOPED = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding']);

// ---- PromQL: a small tokenizer that finds the metrics and labels a query names -------------------------------------

interface MetricRef {
  readonly name: string;
  readonly matcherLabels: readonly string[];
}

interface PromqlRefs {
  readonly metrics: readonly MetricRef[];
  readonly functions: readonly string[];
  /** Labels named in by/without/on/ignoring/group_left/group_right lists. */
  readonly groupingLabels: readonly string[];
}

type Token = { readonly kind: 'ident' | 'string' | 'number' | 'punct' | 'variable'; readonly text: string };

function tokenize(query: string): Token[] {
  const tokens: Token[] = [];
  const patterns: Array<[Token['kind'] | 'space', RegExp]> = [
    ['space', /^\s+/],
    ['string', /^"(?:[^"\\]|\\.)*"|^'(?:[^'\\]|\\.)*'|^`[^`]*`/],
    ['variable', /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/], // Grafana variables: $policy, ${datasource}, $__rate_interval
    ['number', /^[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?(?:ms|[smhdwy])?(?:[0-9]+(?:ms|[smhdwy]))*/i],
    ['ident', /^[A-Za-z_:][A-Za-z0-9_:]*/],
    ['punct', /^(?:=~|!~|!=|==|>=|<=|[-+*/%^(){}[\],=<>@])/],
  ];
  let rest = query;
  while (rest.length > 0) {
    const match = patterns.find(([, pattern]) => pattern.test(rest));
    if (match === undefined) throw new Error(`cannot tokenize ${JSON.stringify(rest)} in ${JSON.stringify(query)}`);
    const text = match[1].exec(rest)![0];
    if (match[0] !== 'space') tokens.push({ kind: match[0], text });
    rest = rest.slice(text.length);
  }
  return tokens;
}

const PROMQL_FUNCTIONS = new Set([
  'abs', 'absent', 'absent_over_time', 'avg_over_time', 'ceil', 'changes', 'clamp', 'clamp_max', 'clamp_min',
  'count_over_time', 'delta', 'deriv', 'exp', 'floor', 'histogram_quantile', 'idelta', 'increase', 'irate',
  'label_replace', 'label_join', 'last_over_time', 'ln', 'log2', 'log10', 'max_over_time', 'min_over_time',
  'predict_linear', 'quantile_over_time', 'rate', 'resets', 'round', 'scalar', 'sort', 'sort_desc',
  'sum_over_time', 'time', 'timestamp', 'vector',
]); // prettier-ignore
const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'stddev',
  'stdvar',
  'topk',
  'bottomk',
  'quantile',
  'count_values',
  'group',
]);
const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2']);

function promqlRefs(query: string): PromqlRefs {
  const tokens = tokenize(query);
  const metrics: MetricRef[] = [];
  const functions: string[] = [];
  const groupingLabels: string[] = [];
  /** Reads `( a, b )` starting at tokens[i] === '(' and returns the identifiers and the index after ')'. */
  const readList = (i: number): [string[], number] => {
    const names: string[] = [];
    let j = i + 1;
    while (j < tokens.length && tokens[j]!.text !== ')') {
      if (tokens[j]!.kind === 'ident') names.push(tokens[j]!.text);
      j += 1;
    }
    return [names, j + 1];
  };
  /** Reads label matchers `{ a="x", b=~"y" }` starting at tokens[i] === '{'. */
  const readMatchers = (i: number): [string[], number] => {
    const labels: string[] = [];
    let j = i + 1;
    while (j < tokens.length && tokens[j]!.text !== '}') {
      if (tokens[j]!.kind === 'ident' && ['=', '!=', '=~', '!~'].includes(tokens[j + 1]?.text ?? '')) {
        labels.push(tokens[j]!.text);
      }
      j += 1;
    }
    return [labels, j + 1];
  };
  let i = 0;
  while (i < tokens.length) {
    const token = tokens[i]!;
    const next = tokens[i + 1];
    if (token.text === '[') {
      while (i < tokens.length && tokens[i]!.text !== ']') i += 1; // range or subquery: durations and variables
      i += 1;
    } else if (token.kind === 'ident' && GROUPING.has(token.text)) {
      if (next?.text === '(') {
        const [names, after] = readList(i + 1);
        groupingLabels.push(...names);
        i = after;
      } else {
        i += 1;
      }
    } else if (token.kind === 'ident' && KEYWORDS.has(token.text)) {
      i += 1;
    } else if (token.kind === 'ident' && (next?.text === '(' || AGGREGATIONS.has(token.text))) {
      functions.push(token.text);
      i += 1;
    } else if (token.kind === 'ident') {
      if (next?.text === '{') {
        const [labels, after] = readMatchers(i + 1);
        metrics.push({ name: token.text, matcherLabels: labels });
        i = after;
      } else {
        metrics.push({ name: token.text, matcherLabels: [] });
        i += 1;
      }
    } else if (token.text === '{') {
      const [labels, after] = readMatchers(i); // a selector without a metric name
      metrics.push({ name: '', matcherLabels: labels });
      i = after;
    } else {
      i += 1;
    }
  }
  return { metrics, functions, groupingLabels };
}

/** Labels Prometheus (and the Prometheus Operator's ServiceMonitor) attach to every scraped series. */
const TARGET_LABELS = ['job', 'instance', 'namespace', 'pod', 'service', 'endpoint', 'container'];
const HISTOGRAMS = new Set(METRIC_DEFINITIONS.filter((m) => m.type === 'histogram').map((m) => m.name));

/** The labels a series name carries, or undefined when the operator exports no such series. */
function labelsOf(name: string): readonly string[] | undefined {
  if (name === 'up') return [];
  if (METRIC_LABELS[name] !== undefined) return METRIC_LABELS[name];
  const suffix = /_(bucket|sum|count)$/.exec(name);
  if (suffix !== null) {
    const base = name.slice(0, -suffix[0].length);
    if (HISTOGRAMS.has(base)) return suffix[1] === 'bucket' ? [...METRIC_LABELS[base]!, 'le'] : METRIC_LABELS[base];
  }
  return undefined;
}

/** Every problem with a query: unknown metric, function or label. Empty when the query is sound. */
function queryProblems(query: string): string[] {
  const refs = promqlRefs(query);
  const problems: string[] = [];
  const known = new Set(TARGET_LABELS);
  for (const metric of refs.metrics) {
    const labels = labelsOf(metric.name);
    if (labels === undefined) {
      problems.push(`unknown metric ${JSON.stringify(metric.name)}`);
      continue;
    }
    for (const label of labels) known.add(label);
    for (const label of metric.matcherLabels) {
      if (!labels.includes(label) && !TARGET_LABELS.includes(label))
        problems.push(`${metric.name} has no label ${label}`);
    }
  }
  for (const fn of refs.functions) {
    if (!PROMQL_FUNCTIONS.has(fn) && !AGGREGATIONS.has(fn)) problems.push(`unknown function ${fn}`);
  }
  for (const label of refs.groupingLabels) {
    if (!known.has(label)) problems.push(`no metric of the query has label ${label}`);
  }
  if (refs.metrics.length === 0) problems.push('names no metric');
  return problems;
}

/** Labels a query's result can carry (for templates such as {{ $labels.x }} and Grafana legends). */
function resultLabels(query: string): Set<string> {
  const refs = promqlRefs(query);
  if (refs.groupingLabels.length > 0 && /\bby\s*\(/.test(query)) return new Set(refs.groupingLabels);
  return new Set([...TARGET_LABELS, ...refs.metrics.flatMap((metric) => labelsOf(metric.name) ?? [])]);
}

// ---- Pod Security "restricted" -------------------------------------------------------------------------------------

const RESTRICTED_VOLUME_TYPES = new Set([
  'configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret',
]); // prettier-ignore

/** The Pod Security Standard "restricted" checks (plus a read-only root file system), as a list of violations. */
function restrictedViolations(podSpec: Parsed): string[] {
  const problems: string[] = [];
  const pod = podSpec.securityContext ?? {};
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC']) if (podSpec[field] === true) problems.push(field);
  for (const volume of podSpec.volumes ?? []) {
    const type = Object.keys(volume).find((key) => key !== 'name');
    if (type === undefined || !RESTRICTED_VOLUME_TYPES.has(type))
      problems.push(`volume ${volume.name} of type ${type}`);
  }
  const containers = [...(podSpec.initContainers ?? []), ...(podSpec.containers ?? [])];
  for (const container of containers) {
    const sc = container.securityContext ?? {};
    const where = `container ${container.name}`;
    if (sc.privileged === true) problems.push(`${where}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) problems.push(`${where}: allowPrivilegeEscalation must be false`);
    if ((sc.runAsNonRoot ?? pod.runAsNonRoot) !== true) problems.push(`${where}: runAsNonRoot must be true`);
    const user = sc.runAsUser ?? pod.runAsUser;
    if (user === undefined || user === 0) problems.push(`${where}: runAsUser must be set and non-zero`);
    const seccomp = (sc.seccompProfile ?? pod.seccompProfile)?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') problems.push(`${where}: seccompProfile`);
    if (!(sc.capabilities?.drop ?? []).includes('ALL')) problems.push(`${where}: capabilities must drop ALL`);
    for (const cap of sc.capabilities?.add ?? [])
      if (cap !== 'NET_BIND_SERVICE') problems.push(`${where}: adds ${cap}`);
    if (sc.readOnlyRootFilesystem !== true) problems.push(`${where}: readOnlyRootFilesystem must be true`);
    for (const port of container.ports ?? []) if (port.hostPort !== undefined) problems.push(`${where}: hostPort`);
  }
  return problems;
}

// ---- tests ---------------------------------------------------------------------------------------------------------

describe('manifests: files', () => {
  it.each(yamlPaths.map((path) => [relative(ROOT, path), path]))('%s parses into Kubernetes objects', (_, path) => {
    const objects = parseDocuments(path);
    expect(objects.length).toBeGreaterThan(0);
    for (const object of objects) {
      expect(typeof object.apiVersion).toBe('string');
      expect(typeof object.kind).toBe('string');
      // Kustomize files and a component's KubeSchedulerConfiguration (a file for a ConfigMap) are not API objects.
      if (!['Kustomization', 'Component', 'KubeSchedulerConfiguration'].includes(object.kind))
        expect(object.metadata?.name).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    }
  });

  it('kustomization.yaml lists every manifest file in manifests/, and each exists', () => {
    expect([...kustomization.resources].sort()).toEqual(topLevelYaml);
    for (const file of kustomization.resources) expect(existsSync(join(MANIFESTS, file)), file).toBe(true);
  });

  it('installs the CRD, namespace, RBAC, Deployment, Service and the monitoring bundle', () => {
    expect(installed.map((object) => object.kind).sort()).toEqual(
      [
        'ClusterRole',
        'ClusterRole',
        'ClusterRoleBinding',
        'ConfigMap',
        'CustomResourceDefinition',
        'Deployment',
        'Namespace',
        'PodDisruptionBudget',
        'PrometheusRule',
        'Role',
        'Role',
        'RoleBinding',
        'RoleBinding',
        'Service',
        'ServiceAccount',
        'ServiceMonitor',
      ].sort(),
    );
  });

  it('puts every namespaced object in the kube-rebalancer namespace', () => {
    for (const object of installed.filter((o) => !CLUSTER_SCOPED.has(o.kind))) {
      expect(object.metadata.namespace, `${object.kind} ${object.metadata.name}`).toBe(NAMESPACE);
    }
    expect(installedObject('Namespace').metadata.name).toBe(NAMESPACE);
  });

  it("tags the image with package.json's version", () => {
    const version = JSON.parse(read('package.json')).version;
    const container = installedObject('Deployment').spec.template.spec.containers[0];
    expect(container.image).toBe(`kube-rebalancer:${version}`);
    expect(kustomization.images).toEqual([{ name: 'kube-rebalancer', newTag: version }]);
  });

  const kubectl = (() => {
    try {
      execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  it.skipIf(!kubectl)('builds with kustomize (kubectl kustomize manifests)', () => {
    const output = execFileSync('kubectl', ['kustomize', MANIFESTS], { encoding: 'utf8' });
    const built = parseAllDocuments(output).map((document) => document.toJS());
    expect(built).toHaveLength(installed.length);
    const deployment = built.find((object) => object.kind === 'Deployment');
    expect(deployment.spec.template.spec.containers[0].image).toMatch(/^kube-rebalancer:/);
  });
});

describe('manifests: Deployment', () => {
  const deployment = installedObject('Deployment', 'kube-rebalancer');
  const podSpec = deployment.spec.template.spec;
  const container = podSpec.containers[0];

  it('runs two replicas selected by its own labels', () => {
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.selector.matchLabels).toEqual(APP_LABELS);
    expect(deployment.spec.template.metadata.labels).toMatchObject(APP_LABELS);
  });

  it('meets the restricted Pod Security Standard with a read-only root file system', () => {
    expect(restrictedViolations(podSpec)).toEqual([]);
    expect(podSpec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  it('catches an unrestricted pod (the check itself)', () => {
    const loose = structuredClone(podSpec);
    loose.hostNetwork = true;
    delete loose.containers[0].securityContext.capabilities;
    loose.containers[0].securityContext.allowPrivilegeEscalation = true;
    loose.volumes.push({ name: 'host', hostPath: { path: '/' } });
    expect(restrictedViolations(loose)).toEqual([
      'hostNetwork',
      'volume host of type hostPath',
      'container kube-rebalancer: allowPrivilegeEscalation must be false',
      'container kube-rebalancer: capabilities must drop ALL',
    ]);
  });

  it('runs the operator with leader election, metrics on :8443 (https), probes on :8081 and its own namespace', () => {
    expect(container.args).toEqual([
      'run',
      '--leader-elect',
      '--metrics-addr',
      ':8443',
      '--health-addr',
      ':8081',
      '--namespace',
      '$(POD_NAMESPACE)',
    ]);
    expect(container.command).toBeUndefined(); // the image's ENTRYPOINT is the CLI
  });

  it('gets POD_NAME (leader identity) and POD_NAMESPACE from the downward API', () => {
    const env = Object.fromEntries(container.env.map((e: Parsed) => [e.name, e]));
    expect(env.POD_NAME.valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    expect(env.POD_NAMESPACE.valueFrom.fieldRef.fieldPath).toBe('metadata.namespace');
  });

  it('probes /healthz and /readyz on the plain health port 8081; metrics on https-metrics 8443', () => {
    expect(container.ports).toEqual([
      { name: 'https-metrics', containerPort: 8443, protocol: 'TCP' },
      { name: 'health', containerPort: 8081, protocol: 'TCP' },
    ]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
  });

  it('requests and limits resources', () => {
    expect(container.resources.requests).toEqual({ cpu: '100m', memory: '256Mi' });
    expect(container.resources.limits.memory).toBe('1Gi');
  });

  it('spreads its replicas across hosts and claims no system priority', () => {
    expect(podSpec.topologySpreadConstraints).toContainEqual(
      expect.objectContaining({
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        labelSelector: { matchLabels: APP_LABELS },
      }),
    );
    expect(podSpec.priorityClassName).toBeUndefined();
  });

  it('runs as the ServiceAccount the RBAC bindings name', () => {
    const account = installedObject('ServiceAccount');
    expect(podSpec.serviceAccountName).toBe(account.metadata.name);
    const bindings = installed.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding');
    expect(bindings).toHaveLength(3);
    for (const binding of bindings) {
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: account.metadata.name, namespace: NAMESPACE }]);
    }
  });

  it('mounts a writable /tmp (the root file system is read-only)', () => {
    expect(container.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    expect(podSpec.volumes).toContainEqual(expect.objectContaining({ name: 'tmp', emptyDir: expect.any(Object) }));
  });

  it('keeps a replica through voluntary disruptions', () => {
    const pdb = installedObject('PodDisruptionBudget');
    expect(pdb.spec.selector.matchLabels).toEqual(APP_LABELS);
    expect(pdb.spec.maxUnavailable).toBe(1);
  });
});

describe('manifests: CronJob component (run --once)', () => {
  const COMPONENT = join(MANIFESTS, 'components/cronjob');
  const component = parseDocuments(join(COMPONENT, 'kustomization.yaml'))[0];
  const cronJob = parseDocuments(join(COMPONENT, 'cronjob.yaml'))[0];
  const job = cronJob.spec.jobTemplate.spec;
  const podSpec = job.template.spec;
  const container = podSpec.containers[0];
  const deleted = (component.patches as Array<{ patch: string }>).map((p) => parseAllDocuments(p.patch)[0]!.toJS());

  it('is a kustomize Component adding the CronJob, offered (commented out) by the main kustomization', () => {
    expect(component).toMatchObject({ apiVersion: 'kustomize.config.k8s.io/v1alpha1', kind: 'Component' });
    expect(component.resources).toEqual(['cronjob.yaml']);
    expect(read('manifests/kustomization.yaml')).toContain('# components:\n#   - components/cronjob\n');
  });

  it('removes the Deployment, its budget and everything serving or watching /metrics, each present in the install', () => {
    expect(deleted.map((d) => `${d.kind}/${d.metadata.name}`).sort()).toEqual(
      [
        'ConfigMap/kube-rebalancer-dashboard',
        'Deployment/kube-rebalancer',
        'PodDisruptionBudget/kube-rebalancer',
        'PrometheusRule/kube-rebalancer',
        'Service/kube-rebalancer',
        'ServiceMonitor/kube-rebalancer',
      ].sort(),
    );
    for (const d of deleted) {
      expect(d.$patch).toBe('delete');
      const target = installedObject(d.kind, d.metadata.name);
      expect([d.apiVersion, d.metadata.namespace]).toEqual([target.apiVersion, target.metadata.namespace]);
    }
  });

  it('runs one cycle of every policy per Job, never two Jobs at once, no retries, stopped before the next schedule', () => {
    expect(container.args).toEqual(['run', '--once', '--namespace', '$(POD_NAMESPACE)']);
    expect(cronJob.spec).toMatchObject({ schedule: '*/10 * * * *', concurrencyPolicy: 'Forbid' });
    expect(job.backoffLimit).toBe(0);
    expect(job.activeDeadlineSeconds).toBeLessThan(600);
    expect(podSpec.restartPolicy).toBe('Never');
    expect(cronJob.metadata.namespace).toBe(NAMESPACE);
  });

  it('runs like the operator: its ServiceAccount, image, restricted security, writable /tmp, never evicted', () => {
    const deployment = installedObject('Deployment').spec.template.spec;
    expect(restrictedViolations(podSpec)).toEqual([]);
    expect(podSpec.serviceAccountName).toBe(deployment.serviceAccountName);
    expect(podSpec.securityContext).toEqual(deployment.securityContext);
    expect(container.securityContext).toEqual(deployment.containers[0].securityContext);
    expect(container.image).toBe(deployment.containers[0].image);
    expect(container.env).toEqual(deployment.containers[0].env);
    expect(podSpec.volumes).toEqual(deployment.volumes);
    expect(job.template.metadata.annotations).toEqual({ 'rebalancer.dev/evict': 'never' });
  });

  it.skipIf(!kubectlAvailable())('builds with kustomize from an overlay next to the main install', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kustomize-'));
    try {
      const to = (path: string): string => relative(dir, path);
      writeFileSync(
        join(dir, 'kustomization.yaml'),
        `resources:\n  - ${to(MANIFESTS)}\ncomponents:\n  - ${to(COMPONENT)}\n`,
      );
      const output = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
      const kinds = parseAllDocuments(output).map((document) => document.toJS().kind as string);
      const removed = new Set(deleted.map((d) => d.kind as string));
      expect(kinds.sort()).toEqual(
        [...installed.map((o) => o.kind as string).filter((k) => !removed.has(k)), 'CronJob'].sort(),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('manifests: RBAC', () => {
  /** `group/resource:verb` for every permission a role grants. */
  const grants = (role: Parsed): string[] =>
    role.rules
      .flatMap((rule: Parsed) =>
        rule.apiGroups.flatMap((group: string) =>
          rule.resources.flatMap((resource: string) =>
            rule.verbs.map((verb: string) => `${group}/${resource}:${verb}`),
          ),
        ),
      )
      .sort();

  it('grants cluster-wide exactly what the operator uses', () => {
    // The informers only list and watch; status is written with a patch (test/e2e/rbac.test.ts derives this from
    // the requests the code makes).
    const expected = [
      ...['nodes', 'pods', 'namespaces', 'persistentvolumes', 'persistentvolumeclaims'].flatMap((r) =>
        ['list', 'watch'].map((v) => `/${r}:${v}`),
      ),
      ...['list', 'watch'].map((v) => `policy/poddisruptionbudgets:${v}`),
      ...['list', 'watch'].map((v) => `storage.k8s.io/storageclasses:${v}`),
      ...['list', 'watch'].map((v) => `storage.k8s.io/csinodes:${v}`),
      ...['list', 'watch'].map((v) => `scheduling.k8s.io/priorityclasses:${v}`),
      ...['list', 'watch'].map((v) => `rebalancer.dev/rebalancepolicies:${v}`),
      'metrics.k8s.io/nodes:list',
      'metrics.k8s.io/pods:list',
      '/pods/eviction:create',
      'rebalancer.dev/rebalancepolicies/status:patch',
      '/events:create',
      '/events:patch',
      'authentication.k8s.io/tokenreviews:create',
      'authorization.k8s.io/subjectaccessreviews:create',
    ].sort();
    const role = installedObject('ClusterRole', 'kube-rebalancer');
    expect(grants(role)).toEqual(expected);
    expect(
      role.rules.every((rule: Parsed) => rule.resourceNames === undefined && rule.nonResourceURLs === undefined),
    ).toBe(true);
  });

  it('offers a metrics-reader ClusterRole: get on /metrics, nothing else, bound to no one', () => {
    const reader = installedObject('ClusterRole', 'kube-rebalancer-metrics-reader');
    expect(reader.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    expect(installed.filter((o) => o.roleRef?.name === reader.metadata.name)).toEqual([]);
  });

  it('grants leases for leader election in its own namespace only', () => {
    const role = installedObject('Role', 'kube-rebalancer-leader-election');
    expect(role.metadata.namespace).toBe(NAMESPACE);
    expect(grants(role)).toEqual(['get', 'create', 'update'].map((v) => `coordination.k8s.io/leases:${v}`).sort());
  });

  it('grants get on Secrets (the Prometheus token of usage: Prometheus) in its own namespace only', () => {
    const role = installedObject('Role', 'kube-rebalancer-prometheus-token');
    expect(role.metadata.namespace).toBe(NAMESPACE);
    expect(grants(role)).toEqual(['/secrets:get']);
  });

  it('binds each role to the operator', () => {
    expect(installedObject('ClusterRoleBinding').roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: installedObject('ClusterRole', 'kube-rebalancer').metadata.name,
    });
    for (const name of ['kube-rebalancer-leader-election', 'kube-rebalancer-prometheus-token']) {
      expect(installedObject('RoleBinding', name).roleRef).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: installedObject('Role', name).metadata.name,
      });
    }
  });
});

describe('manifests: Service and ServiceMonitor', () => {
  it('exposes the pods’ https-metrics port, not the probes’ port', () => {
    const service = installedObject('Service');
    expect(service.spec.selector).toEqual(APP_LABELS);
    expect(service.spec.ports).toEqual([
      { name: 'https-metrics', port: 8443, targetPort: 'https-metrics', protocol: 'TCP' },
    ]);
  });

  it('scrapes /metrics of that Service, keeping the operator’s namespace label', () => {
    const monitor = installedObject('ServiceMonitor');
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor.spec.selector.matchLabels).toEqual(APP_LABELS);
    expect(installedObject('Service').metadata.labels).toMatchObject(APP_LABELS);
    expect(monitor.spec.endpoints).toEqual([
      expect.objectContaining({
        port: 'https-metrics',
        scheme: 'https',
        path: '/metrics',
        honorLabels: true,
        bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
        tlsConfig: { insecureSkipVerify: true },
      }),
    ]);
    // The choice is explained where it is made.
    expect(read('manifests/servicemonitor.yaml')).toMatch(/# insecureSkipVerify, because .*self-signed/);
  });
});

describe('PromQL reference check (the tokenizer)', () => {
  it('finds metrics, matcher labels, functions and grouping labels', () => {
    expect(
      promqlRefs(
        'histogram_quantile(0.95, sum by (le) (rate(rebalancer_cycle_duration_seconds_bucket{policy=~"$policy"}[$__rate_interval])))',
      ),
    ).toEqual({
      metrics: [{ name: 'rebalancer_cycle_duration_seconds_bucket', matcherLabels: ['policy'] }],
      functions: ['histogram_quantile', 'sum', 'rate'],
      groupingLabels: ['le'],
    });
    expect(promqlRefs('absent(up{job=~".*kube-rebalancer.*"} == 1) or absent(rebalancer_leader)').metrics).toEqual([
      { name: 'up', matcherLabels: ['job'] },
      { name: 'rebalancer_leader', matcherLabels: [] },
    ]);
    expect(promqlRefs('time() - max by (policy) (x) > 900 offset 5m').metrics.map((m) => m.name)).toEqual(['x']);
  });

  it.each([
    ['sum(rate(rebalancer_evictions{result="failed"}[5m]))', 'unknown metric "rebalancer_evictions"'],
    ['rebalancer_violations{result="x"}', 'rebalancer_violations has no label result'],
    ['sum by (result) (rebalancer_violations)', 'no metric of the query has label result'],
    ['rate(rebalancer_cycle_duration_seconds_total[5m])', 'unknown metric "rebalancer_cycle_duration_seconds_total"'],
    ['rebalancer_leader_bucket', 'unknown metric "rebalancer_leader_bucket"'],
    ['sum_by(rebalancer_leader)', 'unknown function sum_by'],
  ])('flags %s', (query, problem) => {
    expect(queryProblems(query)).toContain(problem);
  });

  it('accepts histogram series, target labels and up', () => {
    expect(queryProblems('sum by (le, pod) (rebalancer_cycle_duration_seconds_bucket)')).toEqual([]);
    expect(queryProblems('rebalancer_cycle_duration_seconds_sum / rebalancer_cycle_duration_seconds_count')).toEqual(
      [],
    );
    expect(queryProblems('up{job="kube-rebalancer", instance!=""}')).toEqual([]);
  });
});

describe('manifests: PrometheusRule', () => {
  const rule = installedObject('PrometheusRule');
  const alerts: Parsed[] = rule.spec.groups.flatMap((group: Parsed) => group.rules);
  const alert = (name: string): Parsed => alerts.find((a) => a.alert === name);

  it('has the alerts of DESIGN.md', () => {
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(alerts.map((a) => a.alert)).toEqual([
      'RebalancerSkewAboveMax',
      'RebalancerEvictionsFailing',
      'RebalancerPredictionsUnreliable',
      'RebalancerCycleStale',
      'RebalancerAbsent',
      'RebalancerNoLeader',
    ]);
  });

  it.each([
    'RebalancerSkewAboveMax',
    'RebalancerEvictionsFailing',
    'RebalancerPredictionsUnreliable',
    'RebalancerCycleStale',
    'RebalancerAbsent',
    'RebalancerNoLeader',
  ])('%s names only exported metrics and labels, and its annotations only labels of its result', (name) => {
    const { expr, labels, annotations } = alert(name);
    expect(queryProblems(expr)).toEqual([]);
    expect(['warning', 'critical']).toContain(labels.severity);
    expect(annotations.summary).toBeTruthy();
    expect(annotations.description).toBeTruthy();
    const available = resultLabels(expr);
    for (const text of Object.values<string>(annotations)) {
      for (const [, label] of text.matchAll(/\$labels\.([A-Za-z_][A-Za-z0-9_]*)/g)) {
        expect(available, `${name} uses $labels.${label}`).toContain(label);
      }
    }
  });

  it('fires on skew above maxSkew for 15m, per namespace, workload and topology key', () => {
    const { expr, for: duration } = alert('RebalancerSkewAboveMax');
    expect(duration).toBe('15m');
    expect(promqlRefs(expr).metrics.map((m) => m.name)).toEqual([
      'rebalancer_topology_skew',
      'rebalancer_topology_max_skew',
      'rebalancer_topology_actionable',
    ]);
    expect(promqlRefs(expr).groupingLabels).toEqual(['namespace', 'workload', 'topology_key']);
  });

  it('fires on hard (DoNotSchedule) constraints only: both series are selected by when_unsatisfiable', () => {
    const { expr } = alert('RebalancerSkewAboveMax');
    const selectors = expr.match(/rebalancer_topology_(?:max_)?skew\{[^}]*\}/g) ?? [];
    expect(selectors).toEqual([
      'rebalancer_topology_skew{when_unsatisfiable="DoNotSchedule"}',
      'rebalancer_topology_max_skew{when_unsatisfiable="DoNotSchedule"}',
    ]);
  });

  it('fires on failed evictions for 15m', () => {
    const { expr, for: duration } = alert('RebalancerEvictionsFailing');
    expect(duration).toBe('15m');
    expect(expr).toMatch(/rate\(rebalancer_evictions_total\{result="failed"\}\[5m\]\)/);
  });

  it('fires only for policies that were due and did not succeed since, for 30m, whatever their schedule', () => {
    const { expr, for: duration } = alert('RebalancerCycleStale');
    expect(duration).toBe('30m');
    expect(expr).not.toMatch(/\b900\b|time\(\)/);
    expect(new Set(promqlRefs(expr).metrics.map((m) => m.name))).toEqual(
      new Set(['rebalancer_cycle_due_timestamp_seconds', 'rebalancer_last_successful_cycle_timestamp_seconds']),
    );
  });

  it('fires when the operator is absent or leaderless for 10m', () => {
    expect(alert('RebalancerAbsent')).toMatchObject({ for: '10m', labels: { severity: 'critical' } });
    expect(alert('RebalancerAbsent').expr.trim()).toBe(
      'absent(up{job=~".*kube-rebalancer.*"} == 1) or absent(rebalancer_leader)',
    );
    expect(alert('RebalancerNoLeader')).toMatchObject({ for: '10m' });
    expect(alert('RebalancerNoLeader').expr.trim()).toBe('max(rebalancer_leader) == 0');
  });
});

describe('manifests: Grafana dashboard', () => {
  const DASHBOARD_JSON = 'manifests/grafana/kube-rebalancer-dashboard.json';
  const CONFIGMAP = 'manifests/grafana-dashboard.yaml';
  const json = read(DASHBOARD_JSON);
  const dashboard = JSON.parse(json);
  const targets: Parsed[] = dashboard.panels.flatMap((panel: Parsed) =>
    (panel.targets ?? []).map((target: Parsed) => ({ ...target, panel: panel.title })),
  );

  /** The ConfigMap is generated from the JSON file; UPDATE_MANIFESTS=1 rewrites it. */
  function renderConfigMap(text: string): string {
    // The top-level `data:` line, not the end of `metadata:`.
    const current = read(CONFIGMAP);
    const header = current.slice(0, current.indexOf('\ndata:\n') + 1);
    const indented = text
      .replace(/\n$/, '')
      .split('\n')
      .map((line) => (line === '' ? '' : `    ${line}`))
      .join('\n');
    return `${header}data:\n  kube-rebalancer-dashboard.json: |\n${indented}\n`;
  }

  it('is a ConfigMap for the Grafana sidecar that embeds the dashboard JSON identically', () => {
    if (process.env.UPDATE_MANIFESTS === '1') writeFileSync(join(ROOT, CONFIGMAP), renderConfigMap(json));
    const configMap = installedObject('ConfigMap', 'kube-rebalancer-dashboard');
    expect(configMap.metadata.labels.grafana_dashboard).toBe('1');
    expect(Object.keys(configMap.data)).toEqual(['kube-rebalancer-dashboard.json']);
    expect(
      configMap.data['kube-rebalancer-dashboard.json'] === json,
      `${CONFIGMAP} is out of date: UPDATE_MANIFESTS=1 npx vitest run test/manifests`,
    ).toBe(true);
  });

  it('is tidy JSON (two-space indentation, one trailing newline)', () => {
    expect(json).toBe(`${JSON.stringify(dashboard, null, 2)}\n`);
  });

  it('has a stable uid, unique panel ids and panels that do not overlap', () => {
    expect(dashboard.uid).toBe('kube-rebalancer');
    const ids = dashboard.panels.map((panel: Parsed) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const { gridPos, title } of dashboard.panels) {
      expect(gridPos.x + gridPos.w, title).toBeLessThanOrEqual(24);
      for (let x = gridPos.x; x < gridPos.x + gridPos.w; x += 1) {
        for (let y = gridPos.y; y < gridPos.y + gridPos.h; y += 1) {
          expect(cells.has(`${x},${y}`), `${title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
  });

  it('queries only exported metrics and labels, and legends only use labels of the result', () => {
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets) {
      expect(queryProblems(target.expr), `${target.panel}: ${target.expr}`).toEqual([]);
      const available = resultLabels(target.expr);
      for (const [, label] of (target.legendFormat ?? '').matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)) {
        expect(available, `${target.panel} legend {{${label}}}`).toContain(label);
      }
    }
  });

  it('takes its template variables from exported metrics and labels', () => {
    const queries = dashboard.templating.list.filter((variable: Parsed) => variable.type === 'query');
    expect(queries.map((variable: Parsed) => variable.name)).toEqual(['policy', 'namespace']);
    for (const variable of queries) {
      const match = /^label_values\((\w+),\s*(\w+)\)$/.exec(variable.query.query);
      expect(match, variable.name).not.toBeNull();
      expect(METRIC_LABELS[match![1]!], variable.name).toContain(match![2]);
    }
  });

  it.each([
    ['skew per workload over time', /rebalancer_topology_skew\{/],
    ['max skew vs allowed', /rebalancer_topology_max_skew/],
    ['evictions by result', /sum by \(result\) \(rate\(rebalancer_evictions_total/],
    ['cycle duration', /histogram_quantile\(0\.\d+, sum by \(le\) \(rate\(rebalancer_cycle_duration_seconds_bucket/],
    ['violations by strategy', /sum by \(strategy\) \(rebalancer_violations/],
    ['leader', /rebalancer_leader/],
    ['landings against the prediction', /sum by \(outcome\) \(increase\(rebalancer_landings_total/],
  ])('has a panel for %s', (_, pattern) => {
    expect(targets.some((target) => pattern.test(target.expr))).toBe(true);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const instructions = dockerfile
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: string[][] = [];
  for (const line of instructions) {
    if (/^FROM\s/i.test(line)) stages.push([line]);
    else stages.at(-1)?.push(line);
  }
  const finalStage = stages.at(-1)!;

  it('builds in stages from a Node LTS bookworm-slim image', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:(22|24)-bookworm-slim$/m);
    for (const stage of stages) expect(stage[0]).toMatch(/^FROM \$\{NODE_IMAGE\} AS \w+$/);
  });

  it('installs from the lockfile, builds, and installs production dependencies in a clean stage', () => {
    const build = stages.find((stage) => stage.some((line) => line === 'RUN npm run build'))!;
    expect(build.some((line) => /^RUN npm ci(\s|$)/.test(line) && !line.includes('--omit=dev'))).toBe(true);
    const deps = stages.find((stage) => stage.some((line) => /^RUN npm ci .*--omit=dev/.test(line)));
    expect(deps).toBeDefined();
    expect(deps).not.toBe(build);
  });

  it('ships only dist/ and production node_modules, as a numeric non-root user', () => {
    const copies = finalStage.filter((line) => line.startsWith('COPY'));
    expect(copies.every((line) => line.startsWith('COPY --from='))).toBe(true);
    expect(copies.some((line) => /\/app\/dist /.test(line))).toBe(true);
    expect(copies.some((line) => /node_modules/.test(line))).toBe(true);
    const user = finalStage.filter((line) => line.startsWith('USER')).at(-1);
    expect(user).toMatch(/^USER [1-9][0-9]*(:[0-9]+)?$/);
    expect(user).toBe('USER 65532:65532');
    expect(finalStage).toContain('ENV NODE_ENV=production');
  });

  it("starts the CLI from package.json's bin, running the operator by default", () => {
    const bin = JSON.parse(read('package.json')).bin['kube-rebalancer'];
    const entrypoint = finalStage.find((line) => line.startsWith('ENTRYPOINT '));
    const argv = JSON.parse(entrypoint!.slice('ENTRYPOINT '.length)) as string[];
    // node, its options (only options: the bench and the integration suites run the operator with them), the bin.
    expect(argv[0]).toBe('node');
    expect(argv.at(-1)).toBe(`/app/${bin}`);
    expect(argv.slice(1, -1).every((option) => option.startsWith('--'))).toBe(true);
    expect(finalStage.at(-1)).toBe('CMD ["run"]');
  });

  it('labels the image with OCI annotations', () => {
    for (const key of ['title', 'description', 'licenses', 'version', 'revision']) {
      expect(dockerfile).toContain(`org.opencontainers.image.${key}=`);
    }
  });

  it('keeps node_modules, dist, .git and tests out of the build context', () => {
    const ignore = read('.dockerignore')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    expect(ignore[0]).toBe('*'); // everything out, then only what the build needs back in
    const allowed = ignore.filter((line) => line.startsWith('!')).map((line) => line.slice(1));
    expect(allowed.sort()).toEqual([
      'package-lock.json',
      'package.json',
      'src/',
      'tsconfig.build.json',
      'tsconfig.json',
    ]);
    for (const line of finalStage.concat(...stages)) {
      const copied = /^COPY (?!--from)(.+) \S+$/.exec(line)?.[1]?.split(/\s+/) ?? [];
      for (const source of copied) {
        expect(
          allowed.some((entry) => entry.replace(/\/$/, '') === source),
          `${source} is in the context`,
        ).toBe(true);
      }
    }
  });
});

describe('manifests: scheduler-config component (--scheduler-config from a ConfigMap)', () => {
  const COMPONENT = join(MANIFESTS, 'components/scheduler-config');
  const component = parseDocuments(join(COMPONENT, 'kustomization.yaml'))[0];
  const MOUNT = '/etc/kube-rebalancer/scheduler';
  const ARG = `--scheduler-config=${MOUNT}/config.yaml`;

  it('is a Component generating the ConfigMap from a file kube-rebalancer reads as v1.26 defaults', () => {
    expect(component).toMatchObject({ apiVersion: 'kustomize.config.k8s.io/v1alpha1', kind: 'Component' });
    expect(component.configMapGenerator).toEqual([
      expect.objectContaining({
        name: 'kube-rebalancer-scheduler-config',
        namespace: NAMESPACE,
        files: ['config.yaml=scheduler-config.yaml'],
      }),
    ]);
    const result = parseSchedulerConfig(read('manifests/components/scheduler-config/scheduler-config.yaml'), 'f');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    // The example changes nothing until it is edited: it is the defaults, written out.
    expect({ ...result.profile, source: DEFAULT_PROFILE.source }).toEqual(DEFAULT_PROFILE);
  });

  /** `kubectl kustomize` of an overlay with the main install and these components. */
  function build(components: readonly string[]): Parsed[] {
    const dir = mkdtempSync(join(tmpdir(), 'kustomize-'));
    try {
      const to = (path: string): string => relative(dir, path);
      const list = components.map((c) => `  - ${to(join(MANIFESTS, 'components', c))}\n`).join('');
      writeFileSync(join(dir, 'kustomization.yaml'), `resources:\n  - ${to(MANIFESTS)}\ncomponents:\n${list}`);
      const output = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
      return parseAllDocuments(output).map((document) => document.toJS());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** The pod spec's container args and the ConfigMap its scheduler-config volume mounts there. */
  function wiring(podSpec: Parsed): { args: string[]; configMap: string | undefined } {
    const container = podSpec.containers[0];
    const mount = (container.volumeMounts as Parsed[]).find((m) => m.mountPath === MOUNT);
    const volume = (podSpec.volumes as Parsed[]).find((v) => v.name === mount?.name);
    expect(mount?.readOnly).toBe(true);
    return { args: container.args, configMap: volume?.configMap?.name };
  }

  it.skipIf(!kubectlAvailable())('mounts the ConfigMap into the Deployment and passes --scheduler-config', () => {
    const objects = build(['scheduler-config']);
    const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('kube-rebalancer-sch'));
    expect(configMap.metadata.namespace).toBe(NAMESPACE);
    expect(parseSchedulerConfig(configMap.data['config.yaml'], 'cm').ok).toBe(true);
    const deployment = objects.find((o) => o.kind === 'Deployment');
    const { args, configMap: mounted } = wiring(deployment.spec.template.spec);
    expect(args).toEqual([...installedObject('Deployment').spec.template.spec.containers[0].args, ARG]);
    expect(mounted).toBe(configMap.metadata.name);
    expect(restrictedViolations(deployment.spec.template.spec)).toEqual([]);
  });

  it.skipIf(!kubectlAvailable())('does the same to the CronJob when listed after the cronjob component', () => {
    const objects = build(['cronjob', 'scheduler-config']);
    const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('kube-rebalancer-sch'));
    const cronJob = objects.find((o) => o.kind === 'CronJob');
    const { args, configMap: mounted } = wiring(cronJob.spec.jobTemplate.spec.template.spec);
    expect(args).toEqual(['run', '--once', '--namespace', '$(POD_NAMESPACE)', ARG]);
    expect(mounted).toBe(configMap.metadata.name);
    expect(objects.some((o) => o.kind === 'Deployment')).toBe(false);
  });
});
