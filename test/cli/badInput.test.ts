// Bad input that used to break through (issue "The operator keeps its promises…", point 9): every case exits 2 with
// one paragraph naming the file and the object, or exits 0, within 500 MB and without hanging, in a real process (so a signal
// or an out-of-memory kill would show). And a property: random nested JSON/YAML values put in any field of any
// object of a real snapshot never make the CLI exit 1.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { MAX_INPUT_BYTES, MAX_YAML_BYTES } from '../../src/snapshot/limits.js';
import { readFileSync } from 'node:fs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// Inside node_modules/.cache so the compiled CLI resolves its dependencies from the project's node_modules.
// node_modules/.cache does not exist on a fresh clone until something makes it.
mkdirSync(join(ROOT, 'node_modules/.cache'), { recursive: true });
const dir = mkdtempSync(join(ROOT, 'node_modules/.cache/kr-bad-input-'));
const cli = join(dir, 'dist/src/cli/main.js');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(() => {
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', join(dir, 'dist')],
    {
      cwd: ROOT,
      stdio: 'ignore',
    },
  );
}, 120_000);

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/**
 * The CLI in a child process with a 500 MB heap and a 25 s limit. The limit catches a hang (an input that makes the
 * parser loop or expand without end), not slowness: on a loaded shared machine a healthy run took over 5 s.
 */
function runCli(...args: string[]): { code: number | null; signal: NodeJS.Signals | null; stderr: string } {
  const r = spawnSync(process.execPath, ['--max-old-space-size=500', cli, ...args], {
    encoding: 'utf8',
    timeout: 25_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, signal: r.signal, stderr: r.stderr };
}

const NODE = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'a' } },
};

function pod(name: string, extra: string): string {
  const base = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'shop',
      labels: { app: 'web' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'rs', controller: true }],
    },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '1' } } }] },
    status: { phase: 'Running' },
  });
  return `${base.slice(0, -1)}${extra}}`;
}

const list = (...items: string[]): string => `{"apiVersion":"v1","kind":"List","items":[${items.join(',')}]}`;
const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** One paragraph: a single line on stderr (plus its newline), starting with `error: <file>`. */
function oneParagraph(stderr: string, path: string): void {
  // Warning lines about the input (a kind left off the kubectl command) may come first; the error is one line.
  const lines = stderr
    .trimEnd()
    .split('\n')
    .filter((l) => !l.startsWith('warning: '));
  expect(lines).toHaveLength(1);
  expect(lines[0]!.startsWith(`error: ${path}`)).toBe(true);
}

describe('bad input exits 2 with one paragraph, in a real process, within 500 MB and without hanging', () => {
  it.each<{ name: string; content: () => string; mentions: RegExp }>([
    {
      name: 'a policy whose cron range would expand to 200,000,000 entries',
      content: () =>
        list(
          JSON.stringify(NODE),
          JSON.stringify({
            apiVersion: 'rebalancer.dev/v1alpha1',
            kind: 'RebalancePolicy',
            metadata: { name: 'huge' },
            spec: { schedule: '0-200000000 * * * *' },
          }),
        ),
      mentions: /RebalancePolicy huge: spec\.schedule: .*minute "200000000" is out of range 0-59/,
    },
    {
      name: 'invalid JSON nested 10,000 deep',
      content: () => `${'['.repeat(10_000)}x`,
      mentions: /nested deeper than 256 levels at line 1/,
    },
    {
      name: 'two identical pods with a 6,000-deep ignored field',
      content: () => list(JSON.stringify(NODE), pod('p1', `,"x":${nested(6000)}`), pod('p2', `,"x":${nested(6000)}`)),
      mentions: /nested deeper than 256 levels/,
    },
    {
      name: 'YAML nested 5,000 deep in block style',
      content: () => Array.from({ length: 5000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1\n',
      mentions: /nested (deeper than 256 levels|too deeply)/,
    },
    {
      name: 'a policy naming a missing PriorityClass',
      content: () =>
        list(
          JSON.stringify(NODE),
          JSON.stringify({
            apiVersion: 'rebalancer.dev/v1alpha1',
            kind: 'RebalancePolicy',
            metadata: { name: 'strict' },
            spec: { eviction: { priorityThreshold: { className: 'no-such-class' } } },
          }),
        ),
      mentions:
        /RebalancePolicy strict: spec\.eviction\.priorityThreshold\.className: PriorityClass "no-such-class" does not exist/,
    },
    {
      name: 'a pod name with newlines that would fake a stack trace',
      content: () =>
        list(
          JSON.stringify(NODE),
          pod('evil\n    at Object.<anonymous> (/app/x.js:1:1)\nError: fake', ',"zzz":1').replace(
            '"cpu":"1"',
            '"cpu":"lots"',
          ),
        ),
      mentions: /Pod shop\/evil\\n {4}at Object/,
    },
    {
      name: 'a 1 MB bad cpu quantity',
      content: () => list(JSON.stringify(NODE), pod('big', '').replace('"cpu":"1"', `"cpu":"${'9x'.repeat(500_000)}"`)),
      mentions: /cpu/,
    },
  ])('$name', ({ content, mentions }) => {
    const path = file('input.json', content());
    const r = runCli('plan', '--snapshot', path);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    oneParagraph(r.stderr, path);
    expect(r.stderr).toMatch(mentions);
    expect(r.stderr.length).toBeLessThan(3000);
  });

  it('an oversized YAML snapshot is refused before parsing, with advice', () => {
    const podYaml = toYaml({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'x' }, spec: {} });
    const doc = `---\n${podYaml}`;
    const path = file('huge.yaml', doc.repeat(Math.ceil((MAX_YAML_BYTES + 1) / doc.length)));
    const r = runCli('plan', '--snapshot', path);
    rmSync(path);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    oneParagraph(r.stderr, path);
    expect(r.stderr).toMatch(/YAML input too large: .* save the cluster as JSON/);
  });

  it('a file larger than any snapshot is refused before it is read', () => {
    const path = join(dir, 'sparse.json');
    // Sparse: the size is there, the bytes are not (nothing is written, nothing must be read).
    writeFileSync(path, '');
    truncateSync(path, MAX_INPUT_BYTES + 1);
    const r = runCli('plan', '--snapshot', path);
    rmSync(path);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    oneParagraph(r.stderr, path);
    expect(r.stderr).toMatch(/file too large: 512\.0 MiB, the limit is 512\.0 MiB/);
  });
});

describe('--scheduler-config: a bad KubeSchedulerConfiguration exits 2 naming the file and the field', () => {
  const MOST_ALLOCATED = [
    'apiVersion: kubescheduler.config.k8s.io/v1',
    'kind: KubeSchedulerConfiguration',
    'profiles:',
    '- pluginConfig:',
    '  - name: NodeResourcesFit',
    '    args:',
    '      scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 101}]}',
    '',
  ].join('\n');

  it.each([['plan'], ['simulate'], ['run']])('%s', (command) => {
    const path = file('scheduler.yaml', MOST_ALLOCATED);
    const snapshot = command === 'run' ? [] : ['--snapshot', join(ROOT, 'examples/zone-skew.yaml')];
    const r = runCli(command, ...snapshot, '--scheduler-config', path);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    oneParagraph(r.stderr, path);
    expect(r.stderr).toContain(
      `${path}: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: ` +
        'must be between 1 and 100 (got 101)',
    );
  });

  it.each([['plan'], ['run']])('%s: a schedulerName given to two profiles (issue 29)', (command) => {
    const twice = [
      'apiVersion: kubescheduler.config.k8s.io/v1',
      'kind: KubeSchedulerConfiguration',
      'profiles: [{schedulerName: default-scheduler}, {schedulerName: batch}, {schedulerName: batch}]',
      '',
    ].join('\n');
    const path = file('scheduler-twice.yaml', twice);
    const snapshot = command === 'run' ? [] : ['--snapshot', join(ROOT, 'examples/zone-skew.yaml')];
    const r = runCli(command, ...snapshot, '--scheduler-config', path);
    expect(r.code).toBe(2);
    oneParagraph(r.stderr, path);
    expect(r.stderr).toContain(
      `${path}: KubeSchedulerConfiguration: profiles[2].schedulerName: duplicate value "batch"`,
    );
  });

  it('a valid file is read (plan exits 0)', () => {
    const path = file('scheduler-ok.yaml', MOST_ALLOCATED.replace('weight: 101', 'weight: 1'));
    const r = runCli('plan', '--snapshot', join(ROOT, 'examples/zone-skew.yaml'), '--scheduler-config', path);
    expect(r.code).toBe(0);
  });

  it('a missing file names it', () => {
    const path = join(dir, 'no-such-scheduler.yaml');
    const r = runCli('plan', '--snapshot', join(ROOT, 'examples/zone-skew.yaml'), '--scheduler-config', path);
    expect(r.code).toBe(2);
    oneParagraph(r.stderr, path);
    expect(r.stderr).toContain('cannot read file: no such file');
  });
});

// ---- the property ---------------------------------------------------------------------------------------------

const SNAPSHOT = parseYaml(readFileSync(join(ROOT, 'examples/zone-skew.yaml'), 'utf8')) as { items: unknown[] };

/** Every path (object keys and array indexes) in a value, the empty path included. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...prefix, i])));
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  }
  return out;
}

function setAt(
  root: unknown,
  path: ReadonlyArray<string | number>,
  value: unknown,
  extraKey: string | undefined,
): unknown {
  if (path.length === 0) return extraKey === undefined ? value : root;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (extraKey !== undefined && typeof node[last] === 'object' && node[last] !== null && !Array.isArray(node[last])) {
    (node[last] as Record<string, unknown>)[extraKey] = value;
  } else node[last] = value;
  return copy;
}

describe('random nested values in any field of any object', () => {
  it('never make plan exit 1 (only 0 or 2), as JSON or YAML', async () => {
    const itemPaths = SNAPSHOT.items.map((item) => paths(item));
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: SNAPSHOT.items.length - 1 }),
        fc.nat(),
        fc.jsonValue({ maxDepth: 6 }),
        fc.option(fc.constantFrom('extra', 'metadata', 'spec', 'items', 'kind', '__proto__'), { nil: undefined }),
        fc.boolean(),
        async (index, pick, value, extraKey, yaml) => {
          const candidates = itemPaths[index]!;
          const path = candidates[pick % candidates.length]!;
          const items = [...SNAPSHOT.items];
          items[index] = setAt(items[index], path, value, extraKey);
          const doc = { ...SNAPSHOT, items };
          const content = yaml ? toYaml(doc) : JSON.stringify(doc);
          const target = file(yaml ? 'prop.yaml' : 'prop.json', content);
          let err = '';
          const code = await main(['plan', '--snapshot', target], {
            stdout: () => undefined,
            stderr: (s) => (err += s),
          });
          if (code !== 0 && code !== 2) throw new Error(`exit ${code}: ${err}`);
          if (code === 2) {
            expect(
              err
                .trimEnd()
                .split('\n')
                .filter((l) => !l.startsWith('warning: ')),
            ).toHaveLength(1);
          }
        },
      ),
      { numRuns: 300 },
    );
  }, 120_000);
});
