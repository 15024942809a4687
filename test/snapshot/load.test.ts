// The snapshot loader: file formats kubectl produces, ignored kinds, and every kind of bad input surfacing as an
// InputError that names the file, the object and the field.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { selectorText } from '../../src/model/labels.js';
import { loadSnapshotFile, parseDocuments, snapshotFromObjects } from '../../src/snapshot/load.js';
import { makeNode, makePod, NOW } from '../builders.js';

const fixture = (name: string): string => join(import.meta.dirname, '..', 'fixtures', name);

function inputError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw new Error(`expected an InputError, got ${String(e)}`);
  }
  throw new Error('expected an InputError, nothing was thrown');
}

const tempDir = mkdtempSync(join(tmpdir(), 'rebalancer-load-'));
afterAll(() => rmSync(tempDir, { recursive: true, force: true }));

function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tempDir, 'case-'));
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('a kubectl get -A -o yaml|json List', () => {
  it.each([['kubectl-get-all.yaml'], ['kubectl-get-all.json']])('%s converts every used kind', (name) => {
    const warnings: string[] = [];
    const { snapshot, policies } = loadSnapshotFile(fixture(name), { now: NOW, warn: (l) => warnings.push(l) });

    expect(snapshot.now).toBe(NOW);
    expect(snapshot.nodes.map((n) => n.name)).toEqual(['node-a1', 'node-b1', 'node-c1']);
    expect(snapshot.nodes.map((n) => n.ready)).toEqual([true, true, false]);
    expect(snapshot.nodes[2]).toMatchObject({ unschedulable: true });
    expect(snapshot.nodes[0]!.allocatable).toMatchObject({ cpu: 3920, memory: 15147784 * 1024, pods: 58 });
    expect(snapshot.nodes[1]!.allocatable['nvidia.com/gpu']).toBe(1);

    const pods = new Map(snapshot.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
    expect([...pods.keys()]).toEqual([
      'shop/web-6d4cf56db6-x2x9k',
      'shop/web-6d4cf56db6-q8r7s',
      'shop/web-6d4cf56db6-zz001',
      'shop/db-0',
      'kube-system/kube-proxy-node-a1',
      'monitoring/node-exporter-4kq2x',
      'shop/report-28619820-7hjkl',
    ]);
    const web = pods.get('shop/web-6d4cf56db6-x2x9k')!;
    expect(web).toMatchObject({
      nodeName: 'node-a1',
      workload: { kind: 'Deployment', name: 'web' },
      qos: 'Burstable',
      requests: { cpu: 250, memory: 256 * 2 ** 20 },
      createdAt: Date.parse('2024-05-31T10:00:00Z'),
    });
    expect(selectorText(web.spreadConstraints[0]!.selector)).toBe('app=web,pod-template-hash=6d4cf56db6');
    expect(pods.get('shop/web-6d4cf56db6-zz001')!.terminating).toBe(true);
    expect(pods.get('shop/db-0')).toMatchObject({
      priority: 1000,
      qos: 'Guaranteed',
      pvc: true,
      workload: { kind: 'StatefulSet', name: 'db' },
    });
    expect(pods.get('shop/db-0')!.protectedBy).toContain('karpenter.sh/do-not-disrupt');
    expect(pods.get('kube-system/kube-proxy-node-a1')).toMatchObject({
      mirror: true,
      localStorage: true,
      priority: 2000001000,
    });
    expect(pods.get('monitoring/node-exporter-4kq2x')).toMatchObject({ daemonSet: true, qos: 'BestEffort' });
    expect(pods.get('monitoring/node-exporter-4kq2x')!.requiredNodeAffinity.text).toBe(
      'affinity: field:metadata.name=node-a1',
    );
    expect(pods.get('shop/report-28619820-7hjkl')).toMatchObject({
      phase: 'Succeeded',
      workload: { kind: 'Job', name: 'report-28619820' },
    });

    expect(snapshot.pdbs.map((p) => [p.namespace, p.name, p.statusAllowed])).toEqual([
      ['shop', 'db', 0],
      ['shop', 'web', 1],
    ]);
    expect(snapshot.pdbs[1]!.maxUnavailable).toEqual({ kind: 'percent', value: 34 });
    expect(snapshot.priorityClasses.map((c) => c.name)).toEqual([
      'system-cluster-critical',
      'system-node-critical',
      'business-critical',
    ]);
    // monitoring has pods but no Namespace object: it is implied, with the name label.
    expect(snapshot.namespaces).toEqual([
      { name: 'shop', labels: { 'kubernetes.io/metadata.name': 'shop', team: 'checkout' } },
      { name: 'kube-system', labels: { 'kubernetes.io/metadata.name': 'kube-system' } },
      { name: 'monitoring', labels: { 'kubernetes.io/metadata.name': 'monitoring' } },
    ]);

    expect(policies).toHaveLength(1);
    expect(policies[0]!.object).toBe('RebalancePolicy production');
    expect(policies[0]!.raw).toMatchObject({ spec: { mode: 'Evict' } });

    expect(warnings).toEqual([
      `warning: ${fixture(name)}: ignored 3 objects of other kinds (Service ×2, ConfigMap ×1)`,
    ]);
  });

  it('YAML and JSON give the same snapshot', () => {
    const yaml = loadSnapshotFile(fixture('kubectl-get-all.yaml'), { now: NOW });
    const json = loadSnapshotFile(fixture('kubectl-get-all.json'), { now: NOW });
    expect(json.snapshot).toEqual(yaml.snapshot);
  });

  it("reads kubectl's own indentation (sequences not indented under their key)", () => {
    const path = tempFile(
      'kubectl.yaml',
      [
        'apiVersion: v1',
        'items:',
        '- apiVersion: v1',
        '  kind: Node',
        '  metadata:',
        '    labels:',
        '      topology.kubernetes.io/zone: zone-a',
        '    name: node-a1',
        '  spec:',
        '    taints:',
        '    - effect: NoSchedule',
        '      key: dedicated',
        'kind: List',
        'metadata:',
        '  resourceVersion: ""',
        '',
      ].join('\n'),
    );
    const { snapshot } = loadSnapshotFile(path, { now: NOW });
    expect(snapshot.nodes[0]).toMatchObject({
      name: 'node-a1',
      taints: [{ key: 'dedicated', value: '', effect: 'NoSchedule' }],
    });
  });
});

describe('other layouts', () => {
  it('plain multi-document YAML, typed lists whose items have no kind, nested Lists, empty documents', () => {
    const warnings: string[] = [];
    const { snapshot } = loadSnapshotFile(fixture('multi-document.yaml'), { now: NOW, warn: (l) => warnings.push(l) });
    expect(snapshot.nodes.map((n) => [n.name, n.ready])).toEqual([
      ['node-1', true],
      ['node-2', false],
    ]);
    expect(snapshot.pods.map((p) => [p.name, p.phase, p.nodeName])).toEqual([
      ['api-1', 'Running', 'node-1'],
      ['api-2', 'Pending', undefined],
    ]);
    // The globalDefault class (in a List nested in a List) applies to pods without spec.priority.
    expect(snapshot.pods.map((p) => p.priority)).toEqual([100, 100]);
    expect(warnings).toEqual([
      `warning: ${fixture('multi-document.yaml')}: ignored 1 object of another kind (Deployment ×1)`,
    ]);
  });

  it('several concatenated JSON documents (one kubectl -o json per kind)', () => {
    const nodes = { apiVersion: 'v1', kind: 'List', items: [makeNode('a1').obj()] };
    const pods = { apiVersion: 'v1', kind: 'List', items: [makePod('p1').obj()] };
    const path = tempFile('two.json', `${JSON.stringify(nodes, null, 2)}\n${JSON.stringify(pods, null, 2)}\n`);
    const { snapshot } = loadSnapshotFile(path, { now: NOW });
    expect(snapshot.nodes).toHaveLength(1);
    expect(snapshot.pods).toHaveLength(1);
  });

  it('a single bare object', () => {
    const path = tempFile('node.json', JSON.stringify(makeNode('a1').obj()));
    expect(loadSnapshotFile(path, { now: NOW }).snapshot.nodes[0]!.name).toBe('a1');
  });

  it('text that starts like JSON is JSON, not YAML flow style', () => {
    expect(parseDocuments(' {"kind": "Node"}', 'f.json')).toEqual([{ kind: 'Node' }]);
    expect(() => parseDocuments('{kind: Node}', 'f.yaml')).toThrow(/invalid JSON at line 1, column 2/);
  });

  it('a byte-order mark is ignored', () => {
    const path = tempFile('bom.yaml', `\uFEFFapiVersion: v1\nkind: Node\nmetadata: {name: a1}\n`);
    expect(loadSnapshotFile(path, { now: NOW }).snapshot.nodes).toHaveLength(1);
  });

  it('now defaults to the current time', () => {
    const before = Date.now();
    const { snapshot } = snapshotFromObjects([makeNode('a1').obj()], { file: 'x' });
    expect(snapshot.now).toBeGreaterThanOrEqual(before);
  });

  it('no warning when every object is used', () => {
    const warnings: string[] = [];
    snapshotFromObjects([makeNode('a1').obj()], { file: 'x', warn: (l) => warnings.push(l) });
    expect(warnings).toEqual([]);
  });
});

describe('bad input', () => {
  it.each([
    ['broken YAML', 'broken-yaml.txt', 'document 1', undefined, /invalid YAML at line \d+, column \d+/],
    [
      'broken JSON',
      'broken-json.txt',
      undefined,
      undefined,
      /invalid JSON at line 8, column 39: Expected double-quoted property name/,
    ],
    [
      'a document that is not an object',
      'not-an-object.yaml',
      'document 2',
      undefined,
      /must be a Kubernetes object \(got a list\)/,
    ],
    ['a missing kind', 'missing-kind.yaml', 'document 1, items[1]', 'kind', /is required/],
    ['an empty file', 'empty.yaml', undefined, undefined, /contains no Kubernetes objects/],
    [
      'a Pod missing metadata.name',
      'pod-missing-name.yaml',
      'Pod at document 1, items[1]',
      'metadata.name',
      /is required/,
    ],
    [
      'a malformed label selector (operator Inn)',
      'bad-selector-operator.yaml',
      'Pod shop/web-1',
      'spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator',
      /must be one of In, NotIn, Exists, DoesNotExist/,
    ],
    [
      'a malformed label selector (In with no values)',
      'bad-selector-no-values.yaml',
      'PodDisruptionBudget shop/web',
      'spec.selector.matchExpressions[0].values',
      /must be non-empty when operator is In/,
    ],
    ['maxSkew 0', 'maxskew-zero.yaml', 'Pod shop/web-2', 'spec.topologySpreadConstraints[1].maxSkew', /integer ≥ 1/],
    ['a bad quantity', 'bad-quantity.yaml', 'Node node-1', 'status.allocatable.cpu', /quantity/],
  ])('%s', (_name, file, object, field, problem) => {
    const error = inputError(() => loadSnapshotFile(fixture(file), { now: NOW }));
    expect(error.code).toBe('E_INPUT');
    expect(error.file).toBe(fixture(file));
    expect(error.object).toBe(object);
    expect(error.field).toBe(field);
    expect(error.problem).toMatch(problem);
    expect(error.message.startsWith(fixture(file))).toBe(true);
  });

  it('an unreadable file', () => {
    const error = inputError(() => loadSnapshotFile(fixture('does-not-exist.yaml')));
    expect(error).toMatchObject({ file: fixture('does-not-exist.yaml'), object: undefined, field: undefined });
    expect(error.problem).toBe('cannot read file: no such file');
  });

  it('a directory', () => {
    const error = inputError(() => loadSnapshotFile(join(import.meta.dirname, '..', 'fixtures')));
    expect(error.problem).toContain('directory');
  });

  it.runIf(process.getuid?.() !== 0)('a file without read permission', () => {
    const path = tempFile('secret.yaml', 'kind: Node\n');
    chmodSync(path, 0o000);
    expect(inputError(() => loadSnapshotFile(path)).problem).toContain('permission denied');
  });

  it.each([
    [
      'truncated JSON',
      '{"kind": "List", "items": [',
      /invalid JSON at line 1, column 28: Unexpected end of JSON input/,
    ],
    ['a bad token in JSON', '{\n  "kind": tru\n}', /invalid JSON at line 2, column 11: Unexpected token/],
    ['a bad token in a second JSON document', '{"kind": "Node"}\n[1, 2,, 3]', /invalid JSON at line 2, column 7/],
    ['a bad escape in JSON', '{"kind": "a\\qb"}', /invalid JSON at line 1, column 1[0-9]/],
    ['a tab-indented YAML', 'kind: Node\nmetadata:\n\tname: a\n', /invalid YAML at line 3, column 1/],
    ['a duplicate key', 'kind: Node\nkind: Pod\n', /invalid YAML at line 2, column 1: Map keys must be unique/],
  ])('%s', (_name, text, problem) => {
    const path = tempFile('bad.txt', text);
    const error = inputError(() => loadSnapshotFile(path));
    expect(error.file).toBe(path);
    expect(error.problem).toMatch(problem);
    expect(error.problem).not.toContain('\n');
  });

  it.each([
    ['a scalar document', ['just text'], 'document 1', undefined, /got a string/],
    ['a null item in a List', [{ kind: 'List', items: [null] }], 'document 1, items[0]', undefined, /got null/],
    ['items that are not a list', [{ kind: 'List', items: {} }], 'document 1', 'items', /must be a list/],
    ['an empty kind', [{ kind: '', metadata: { name: 'x' } }], 'document 1', 'kind', /is required/],
    [
      'a nested List item without kind',
      [{ kind: 'List', items: [{ kind: 'List', items: [{}] }] }],
      'document 1, items[0].items[0]',
      'kind',
      /is required/,
    ],
    ['an empty List', [{ kind: 'List', items: [] }], undefined, undefined, /no Kubernetes objects/],
    [
      'two pods with one name',
      [makePod('p', 'shop').obj(), makePod('p', 'shop').obj()],
      'Pod shop/p',
      undefined,
      /appears twice \(document 1 and document 2\)/,
    ],
  ])('%s', (_name, objects, object, field, problem) => {
    const error = inputError(() => snapshotFromObjects(objects, { file: 'in.yaml' }));
    expect(error).toMatchObject({ file: 'in.yaml', object, field });
    expect(error.problem).toMatch(problem);
  });

  it('pods with the same name in different namespaces are fine', () => {
    const { snapshot } = snapshotFromObjects([makePod('p', 'a').obj(), makePod('p', 'b').obj()], { file: 'x' });
    expect(snapshot.pods).toHaveLength(2);
  });

  it('never lets anything but InputError out for junk input', () => {
    const junk = [
      '',
      '---',
      'null',
      '[]',
      '{}',
      '"x"',
      '1',
      'a: [',
      '{"a":',
      'kind: 5',
      'kind: List\nitems: 5',
      '\u0000',
    ];
    for (const text of junk) {
      const path = tempFile('junk.yaml', text);
      expect(() => loadSnapshotFile(path), JSON.stringify(text)).toThrow(InputError);
    }
  });
});
