// `plan|simulate --snapshot F --kube-version V`: which Kubernetes minor's scheduler the landings follow. The snapshot
// is made so the minor shows in the plan: web's replicas need a node feature (a RestartAllContainers rule) that the
// only node of the empty zone does not declare, so the 1.36+ NodeDeclaredFeatures filter keeps the replacement out
// (nothing evicted) while 1.35, where that filter is off, moves one replica there.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { ZONE, listOf, makeNode, makePod } from '../builders.js';

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s) });
  return { code, out, err };
}

const dir = mkdtempSync(join(tmpdir(), 'kr-kubeversion-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SNAPSHOT = join(dir, 'needs-feature.json');
writeFileSync(
  SNAPSHOT,
  JSON.stringify(
    listOf([
      makeNode('a1').zone('zone-a'),
      makeNode('a2').zone('zone-a'),
      makeNode('b1').zone('zone-b'),
      ...[1, 2].map((i) =>
        makePod(`web-${i}`, 'shop')
          .deployment('web')
          .label('app', 'web')
          .node(`a${i}`)
          .restartAllContainersOn(42)
          .spread({ topologyKey: ZONE, maxSkew: 1, labelSelector: { matchLabels: { app: 'web' } } }),
      ),
    ]),
  ),
);

const evictions = (out: string): string[] =>
  (JSON.parse(out) as { evictions: Array<{ name: string; target?: string }> }).evictions.map(
    (e) => `${e.name}→${e.target ?? '?'}`,
  );

describe('--kube-version', () => {
  it.each([
    { flag: ['--kube-version', '1.37'], evictions: [], warning: undefined },
    { flag: ['--kube-version', 'v1.37.2'], evictions: [], warning: undefined },
    { flag: ['--kube-version', '1.36'], evictions: [], warning: undefined },
    { flag: ['--kube-version', '1.35'], evictions: ['web-2→b1'], warning: undefined },
    { flag: [], evictions: [], warning: undefined, note: 'default: the newest supported, 1.37' },
    {
      flag: ['--kube-version', '1.20'],
      evictions: ['web-2→b1'],
      warning:
        "warning: --kube-version 1.20 is outside the supported Kubernetes 1.35–1.37; landings are predicted as kube-scheduler 1.35's\n",
    },
    {
      flag: ['--kube-version', '1.40'],
      evictions: [],
      warning:
        "warning: --kube-version 1.40 is outside the supported Kubernetes 1.35–1.37; landings are predicted as kube-scheduler 1.37's\n",
    },
  ])('plan $flag → $evictions', async (c) => {
    const r = await run('plan', '--snapshot', SNAPSHOT, ...c.flag);
    expect(r.code).toBe(0);
    expect(evictions(r.out)).toEqual(c.evictions);
    expect(r.err).toBe(c.warning ?? '');
  });

  it('simulate takes it too', async () => {
    const r = await run('simulate', '--snapshot', SNAPSHOT, '--kube-version', '1.35');
    expect(r.code).toBe(0);
    const cycles = (JSON.parse(r.out) as { cycles: unknown[] }).cycles;
    expect(evictions(JSON.stringify(cycles[0]))).toEqual(['web-2→b1']);
  });

  it.each(['banana', '1', '1.x', ''])('%j is bad input: exit 2 naming the flag', async (value) => {
    const r = await run('plan', '--snapshot', SNAPSHOT, '--kube-version', value);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain('--kube-version');
    expect(r.err).toMatch(/must be a Kubernetes version such as 1\.37/);
  });
});
