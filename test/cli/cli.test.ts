// The command line as a user meets it: exit codes, stable JSON, readable tables, and one clear paragraph for
// every kind of bad input (never a stack trace).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { VERSION } from '../../src/version.js';
import pkg from '../../package.json' with { type: 'json' };

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s) });
  return { code, out, err };
}

const dir = mkdtempSync(join(tmpdir(), 'kr-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const NODE = 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {topology.kubernetes.io/zone: a}\n';

describe('kube-rebalancer CLI', () => {
  it('version prints the package version', async () => {
    expect(VERSION).toBe(pkg.version);
    const r = await run('version');
    expect(r).toEqual({ code: 0, out: `kube-rebalancer ${VERSION}\n`, err: '' });
  });

  it('plan -o json prints the RebalancePlan contract', async () => {
    const r = await run('plan', '--snapshot', 'examples/zone-skew.yaml');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.out);
    expect(plan).toMatchObject({
      apiVersion: 'rebalancer.dev/v1alpha1',
      kind: 'RebalancePlan',
      policy: 'zone-balance',
    });
    expect(Object.keys(plan)).toEqual([
      'apiVersion',
      'kind',
      'policy',
      'evictions',
      'skipped',
      'topology',
      'violations',
      'summary',
    ]);
    const web = plan.topology.find((t: { selector: string }) => t.selector.includes('app=web'));
    expect(web).toMatchObject({
      namespace: 'shop',
      topologyKey: 'topology.kubernetes.io/zone',
      maxSkew: 1,
      skew: 5,
      domains: { 'zone-a': 6, 'zone-b': 2, 'zone-c': 1 },
    });
    expect(plan.evictions[0]).toMatchObject({
      namespace: 'shop',
      strategy: 'TopologySpread',
      node: expect.stringMatching(/^node-a/),
    });
    expect(plan.summary).toMatchObject({ nodes: 6, evictions: plan.evictions.length, skipped: plan.skipped.length });
  });

  it.each([
    ['without the CRD (the second command printed nothing)', ''],
    [
      'with the CRD',
      'apiVersion: v1\nkind: List\nitems:\n- apiVersion: rebalancer.dev/v1alpha1\n  kind: RebalancePolicy\n  metadata:\n    name: saved\n  spec: {}\n',
    ],
  ])("loads the README's two-command snapshot %s", async (_name, second) => {
    const path = file(
      `readme-${second.length}.yaml`,
      `${readFileSync('examples/new-taint.yaml', 'utf8')}---\n${second}`,
    );
    // The example carries its own policy, so the saved one is picked by name.
    const r = await run(
      'plan',
      '--snapshot',
      path,
      '-o',
      'table',
      ...(second === '' ? [] : ['--policy-name', 'saved']),
    );
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(second === '' ? /^Policy taints \(/ : /^Policy saved \(DryRun\)/);
  });

  it('plan -o table shows skew before and after per workload', async () => {
    const r = await run('plan', '--snapshot', 'examples/zone-skew.yaml', '-o', 'table');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/shop\s+Deployment\/web\s+topology\.kubernetes\.io\/zone\s+hard\s+1\s+5!\s+3/);
    expect(r.out).toContain('EVICTIONS (2)');
  });

  it('simulate converges on every example, within maxSkew and without hard violations', async () => {
    for (const example of ['zone-skew', 'node-affinity-label-change', 'new-taint', 'anti-affinity-broken']) {
      const r = await run('simulate', '--snapshot', `examples/${example}.yaml`);
      expect(r.code, example).toBe(0);
      const result = JSON.parse(r.out);
      for (const t of result.final.topology)
        if (t.whenUnsatisfiable === 'DoNotSchedule') expect(t.skew, example).toBeLessThanOrEqual(t.maxSkew);
      expect(
        result.final.violations.filter((v: { soft?: boolean }) => !v.soft),
        example,
      ).toEqual([]);
      expect(result.cycles.at(-1).evictions, example).toEqual([]);
    }
  });

  it('the zonal-volume example moves only the pod whose volume every zone reaches, and names the others’ volumes', async () => {
    const r = await run('plan', '--snapshot', 'examples/statefulset-zonal-volumes.yaml');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.out);
    expect(plan.evictions.map((e: { name: string }) => e.name)).toEqual(['db-3']);
    for (const s of plan.skipped) expect(s.reason).toMatch(/^its volume shop\/data-db-[0-2] \(PersistentVolume pvc-/);
    expect(plan.topology[0]).toMatchObject({ skew: 4, skewAfter: 2, unrepairable: expect.any(String) });
    const sim = JSON.parse((await run('simulate', '--snapshot', 'examples/statefulset-zonal-volumes.yaml')).out);
    const evicted = sim.cycles.flatMap((c: { evictions: Array<{ name: string }> }) => c.evictions.map((e) => e.name));
    expect(evicted).toEqual(['db-3']);
  });

  it('simulate on the zone example uses the fewest evictions: web 6/2/1 needs 3, api 4/1/1 needs 2', async () => {
    const r = await run('simulate', '--snapshot', 'examples/zone-skew.yaml');
    const result = JSON.parse(r.out);
    const evicted = result.cycles.flatMap((c: { evictions: Array<{ name: string }> }) =>
      c.evictions.map((e) => e.name),
    );
    expect(evicted.filter((n: string) => n.startsWith('web-'))).toHaveLength(3);
    expect(evicted.filter((n: string) => n.startsWith('api-'))).toHaveLength(2);
  });

  it('simulate -o table shows skew per workload per cycle', async () => {
    const r = await run('simulate', '--snapshot', 'examples/zone-skew.yaml', '-o', 'table', '--cycles', '10');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Deployment\/web\s+topology\.kubernetes\.io\/zone\s+1\s+5\s+3\s+2\s+0/);
    expect(r.out).toContain('converged');
  });

  describe('--policy-name', () => {
    const policyDoc = (name: string, mode: string): string =>
      `---\napiVersion: rebalancer.dev/v1alpha1\nkind: RebalancePolicy\nmetadata:\n  name: ${name}\nspec:\n  mode: ${mode}\n`;
    const two = (): string =>
      file('two-policies.yaml', `${NODE}${policyDoc('zeta', 'Evict')}${policyDoc('alpha', 'DryRun')}`);

    it.each(['plan', 'simulate'])('%s picks the policy named, not the alphabetically first', async (command) => {
      const r = await run(command, '--snapshot', two(), '--policy-name', 'zeta');
      expect(r.code, r.err).toBe(0);
      const plan = JSON.parse(r.out) as { policy?: string; cycles?: { policy: string }[] };
      expect(plan.policy ?? plan.cycles?.[0]?.policy).toBe('zeta');
    });

    it.each(['plan', 'simulate'])('%s with several policies and no name exits 2 listing them', async (command) => {
      const r = await run(command, '--snapshot', two());
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain('has 2 RebalancePolicies (zeta, alpha); choose one with --policy-name NAME');
    });

    it('a name the cluster lacks exits 2 naming the ones it has', async () => {
      const r = await run('plan', '--snapshot', two(), '--policy-name', 'beta');
      expect(r.code).toBe(2);
      expect(r.err).toContain('RebalancePolicy beta: not found (--policy-name); it has zeta, alpha');
    });

    it('the only policy needs no name', async () => {
      const r = await run(
        'plan',
        '--snapshot',
        file('one-policy.yaml', `${NODE}${policyDoc('solo', 'Evict')}`),
        '-o',
        'table',
      );
      expect(r.code, r.err).toBe(0);
      expect(r.out).toMatch(/^Policy solo \(Evict\)/);
    });
  });

  it('--policy overrides the snapshot policy', async () => {
    const policy = file(
      'p.yaml',
      'apiVersion: rebalancer.dev/v1alpha1\nkind: RebalancePolicy\nmetadata: {name: tight}\nspec:\n  eviction: {maxPerCycle: 0}\n',
    );
    const r = await run('plan', '--snapshot', 'examples/zone-skew.yaml', '--policy', policy);
    const plan = JSON.parse(r.out);
    expect(plan.policy).toBe('tight');
    expect(plan.evictions).toEqual([]);
    expect(plan.skipped.some((s: { reason: string }) => s.reason.includes('maxPerCycle'))).toBe(true);
  });

  it.each<{ name: string; args: () => string[]; mentions: RegExp[] }>([
    {
      name: 'unreadable file',
      args: () => ['plan', '--snapshot', join(dir, 'missing.yaml')],
      mentions: [/missing\.yaml/],
    },
    {
      name: 'broken YAML',
      args: () => ['plan', '--snapshot', file('broken.yaml', 'kind: List\nitems: [\n  - {a: 1\n')],
      mentions: [/broken\.yaml/, /line/i],
    },
    {
      name: 'broken JSON',
      args: () => ['plan', '--snapshot', file('broken.json', '{"kind": "List", "items": [ }')],
      mentions: [/broken\.json/],
    },
    {
      name: 'an object missing a required field',
      args: () => [
        'plan',
        '--snapshot',
        file(
          'noname.yaml',
          `${NODE}---\napiVersion: v1\nkind: Pod\nmetadata:\n  namespace: shop\nspec: {containers: [{name: a}]}\n`,
        ),
      ],
      mentions: [/noname\.yaml/, /Pod/, /metadata\.name/],
    },
    {
      name: 'a malformed label selector',
      args: () => [
        'plan',
        '--snapshot',
        file(
          'selector.yaml',
          `${NODE}---\napiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: shop}\nspec:\n  containers: [{name: a}]\n  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: topology.kubernetes.io/zone\n    whenUnsatisfiable: DoNotSchedule\n    labelSelector: {matchExpressions: [{key: app, operator: Inn, values: [web]}]}\n`,
        ),
      ],
      mentions: [
        /selector\.yaml/,
        /shop\/web-1/,
        /topologySpreadConstraints\[0\]\.labelSelector\.matchExpressions\[0\]\.operator/,
      ],
    },
    {
      name: 'an invalid policy',
      args: () => [
        'plan',
        '--snapshot',
        'examples/zone-skew.yaml',
        '--policy',
        file(
          'bad-policy.yaml',
          'apiVersion: rebalancer.dev/v1alpha1\nkind: RebalancePolicy\nmetadata: {name: bad}\nspec: {schedule: "every now and then", eviction: {maxPerCycle: -1}}\n',
        ),
      ],
      mentions: [/bad-policy\.yaml/, /spec\.schedule/, /spec\.eviction\.maxPerCycle/],
    },
    {
      name: 'an unknown flag',
      args: () => ['plan', '--snapshot', 'examples/zone-skew.yaml', '--frobnicate'],
      mentions: [/frobnicate/],
    },
    {
      name: 'an unknown output format',
      args: () => ['plan', '--snapshot', 'examples/zone-skew.yaml', '-o', 'xml'],
      mentions: [/xml/],
    },
    {
      name: 'a bad --cycles value',
      args: () => ['simulate', '--snapshot', 'examples/zone-skew.yaml', '--cycles', 'zero'],
      mentions: [/cycles/],
    },
    {
      name: 'pods and no node (`nodes` left off the kubectl command)',
      args: () => [
        'plan',
        '--snapshot',
        file(
          'no-nodes.yaml',
          'apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: shop}\nspec: {nodeName: n1}\n',
        ),
      ],
      mentions: [/no-nodes\.yaml/, /1 Pod but no Node/, /nothing can be planned/],
    },
  ])('bad input exits 2 with a clear message: $name', async ({ args, mentions }) => {
    const r = await run(...args());
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    for (const m of mentions) expect(r.err).toMatch(m);
    expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
  });

  describe('snapshots that are surely mistakes plan with a warning on stderr', () => {
    const POD = (name: string, node: string): string =>
      `---\napiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: shop}\nspec: {nodeName: ${node}}\nstatus: {phase: Running}\n`;
    it.each([
      {
        name: 'pods on nodes the snapshot does not hold',
        content: NODE + POD('web-1', 'n1') + POD('web-2', 'n7') + POD('web-3', 'n8'),
        warning: /warning: .*stranded\.yaml: 2 Pod\(s\) run on nodes that are not in the snapshot \(n7, n8\)/,
      },
      {
        name: 'nodes and no pod (`pods` left off the kubectl command)',
        content: NODE,
        warning: /warning: .*stranded\.yaml: holds 1 Node\(s\) but no Pod/,
      },
    ])('$name', async ({ content, warning }) => {
      const r = await run('plan', '--snapshot', file('stranded.yaml', content));
      expect(r.code).toBe(0);
      expect(r.err).toMatch(warning);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(JSON.parse(r.out).kind).toBe('RebalancePlan');
    });

    it('a complete snapshot gets no warning', async () => {
      const r = await run('plan', '--snapshot', 'examples/zone-skew.yaml');
      expect(r.err).toBe('');
    });
  });
});
