// Table cases for the filters the landing prediction lacked (issue 19): NodePorts, NodeVolumeLimits (CSI) and
// VolumeRestrictions (ReadWriteOncePod). In each, the old model (these filters absent) sent the replacement to a node
// kube-scheduler refuses; the control row of each case, without the blocking object, shows that node is where the
// model goes when nothing blocks it, and the case row that it no longer goes there.
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import { planCycle, type PlanOutcome } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { ClusterState } from '../../src/scheduling/clusterState.js';
import { portAndVolumeProblem } from '../../src/scheduling/plugins/registry.js';
import { portsClash } from '../../src/scheduling/plugins/nodePorts/filter.js';
import {
  ZONE,
  buildSnapshot,
  makeCsiNode,
  makeNode,
  makePersistentVolume,
  makePod,
  makePolicy,
  makePvc,
  makeStorageClass,
  type PodBuilder,
} from '../builders.js';

type Json = Record<string, unknown>;
type Buildable = Json | { obj(): Json };

const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };

const POLICY = parsePolicy(makePolicy('test', { eviction: LARGE }), { file: 'test-policy.yaml' });

function plan(objects: readonly Buildable[]): PlanOutcome {
  return planCycle(buildSnapshot(objects), POLICY);
}

/** What the three filters say about a replacement of `podName` (evicted from its node) on `nodeName`. */
function problemOn(objects: readonly Buildable[], podName: string, nodeName: string): string | undefined {
  const state = new ClusterState(analyze(buildSnapshot(objects), POLICY.spec));
  const pod = state.snapshotPods().find((p) => p.name === podName)!;
  const evicted = { pod, node: state.nodes.get(pod.nodeName!)! };
  return portAndVolumeProblem({ state, pod, evicted }, state.nodes.get(nodeName)!);
}

/** Where each evicted pod's replacement goes, `pod→node`, sorted; `skipped` lists the skipped pods' reasons. */
function outcome(r: PlanOutcome): { moves: string[]; skipped: string[] } {
  return {
    moves: r.plan.evictions.map((e) => `${e.name}→${e.target ?? '?'}`).sort(),
    skipped: r.plan.skipped.map((s) => `${s.name}: ${s.reason}`),
  };
}

/**
 * Deployment `web` over two zones, maxSkew 1: both replicas on node a1 and a2 in zone-a, none in zone-b, whose node
 * b1 is the obvious landing. `pod` shapes each replica; `extra` adds what may block b1.
 */
function zoneSkew(
  pod: (p: PodBuilder, i: number) => PodBuilder,
  extra: readonly Buildable[],
  b1: Buildable = makeNode('b1').zone('zone-b'),
): Buildable[] {
  return [
    makeNode('a1').zone('zone-a'),
    makeNode('a2').zone('zone-a'),
    b1,
    ...[1, 2].map((i) =>
      pod(
        makePod(`web-${i}`, 'shop')
          .deployment('web')
          .label('app', 'web')
          .node(`a${i}`)
          .createdAt(`2024-06-01T11:0${i}:00Z`)
          .spread({ topologyKey: ZONE, maxSkew: 1, labelSelector: { matchLabels: { app: 'web' } } }),
        i,
      ),
    ),
    ...extra,
  ];
}

const agent = (hostPort: number | undefined, node = 'b1'): Buildable => {
  const p = makePod(`agent-${node}`, 'infra').daemonSet('agent').label('app', 'agent').node(node);
  return hostPort === undefined ? p : p.hostPort(hostPort);
};

describe('NodePorts: a replacement binding a host port never goes where the port is taken', () => {
  it.each([
    {
      scenario: 'control: b1 runs an agent without host ports → web moves to b1',
      objects: zoneSkew((p) => p.hostPort(8080), [agent(undefined)]),
      moves: ['web-2→b1'],
    },
    {
      scenario: 'b1 runs an agent on hostPort 8080 → no eviction (old model: web-2→b1)',
      objects: zoneSkew((p) => p.hostPort(8080), [agent(8080)]),
      moves: [],
      refused: /NodePorts: host port 8080\/TCP is taken by pod infra\/agent-b1/,
    },
    {
      scenario: 'b1 taken, b2 in the same zone free → web moves to b2',
      objects: zoneSkew((p) => p.hostPort(8080), [agent(8080), makeNode('b2').zone('zone-b')]),
      moves: ['web-2→b2'],
      refused: /NodePorts/,
    },
    {
      scenario: 'the agent binds 8080/UDP → no clash, web moves to b1',
      objects: zoneSkew(
        (p) => p.hostPort(8080),
        [makePod('agent-b1', 'infra').daemonSet('agent').node('b1').hostPort(8080, { protocol: 'UDP' })],
      ),
      moves: ['web-2→b1'],
    },
  ])('$scenario', (c) => {
    expect(outcome(plan(c.objects)).moves).toEqual(c.moves);
    // The node the old model chose, and why the scheduler refuses it.
    if (c.refused) expect(problemOn(c.objects, 'web-2', 'b1')).toMatch(c.refused);
    else expect(problemOn(c.objects, 'web-2', 'b1')).toBeUndefined();
  });

  it('the evicted pod still holds its port while it terminates: its replacement cannot take its own node', () => {
    const objects = zoneSkew((p) => p.hostPort(8080), []);
    expect(problemOn(objects, 'web-2', 'a2')).toMatch(/NodePorts: host port 8080\/TCP is taken by pod shop\/web-2/);
    expect(
      problemOn(
        zoneSkew((p) => p, []),
        'web-2',
        'a2',
      ),
    ).toBeUndefined();
  });

  it.each([
    ['0.0.0.0', '10.0.0.1', true],
    ['10.0.0.1', '0.0.0.0', true],
    ['10.0.0.1', '10.0.0.1', true],
    ['10.0.0.1', '10.0.0.2', false],
  ])('hostIP %s against %s on the same port and protocol: clash %s', (a, b, clash) => {
    const port = (hostIP: string) => ({ hostIP, protocol: 'TCP' as const, port: 80 });
    expect(portsClash(port(a), port(b))).toBe(clash);
    expect(portsClash(port(a), { ...port(b), port: 81 })).toBe(false);
  });
});

describe('NodeVolumeLimits: a replacement never goes where its CSI driver can attach no more volumes', () => {
  const DRIVER = 'ebs.csi.example';
  /** Each web replica mounts its own CSI volume (claim data-web-i bound to pv-i); b1 runs a pod with one attached. */
  const withVolumes = (csiNode: Buildable[], otherVolumes = 1, b1?: Buildable): Buildable[] =>
    zoneSkew(
      (p, i) => p.pvc(`data-web-${i}`),
      [
        ...[1, 2].flatMap((i) => [
          makePvc(`data-web-${i}`, 'shop').boundTo(`pv-web-${i}`),
          makePersistentVolume(`pv-web-${i}`).csi(DRIVER, `vol-web-${i}`),
        ]),
        ...Array.from({ length: otherVolumes }, (_, k) => [
          makePvc(`data-db-${k}`, 'shop').boundTo(`pv-db-${k}`),
          makePersistentVolume(`pv-db-${k}`).csi(DRIVER, `vol-db-${k}`),
        ]).flat(),
        Array.from({ length: otherVolumes }, (_, k) => k).reduce(
          (p, k) => p.pvc(`data-db-${k}`),
          makePod('db-0', 'shop').label('app', 'db').node('b1'),
        ),
        ...csiNode,
      ],
      b1,
    );

  it.each([
    {
      scenario: 'control: b1 can attach 2, has 1 → web moves to b1',
      objects: withVolumes([makeCsiNode('b1', { [DRIVER]: 2 })]),
      moves: ['web-2→b1'],
    },
    {
      scenario: 'b1 can attach 1 and has 1 (CSINode) → no eviction (old model: web-2→b1)',
      objects: withVolumes([makeCsiNode('b1', { [DRIVER]: 1 })]),
      moves: [],
      refused: /NodeVolumeLimits: node can attach 1 ebs.csi.example volume and has 1/,
    },
    {
      scenario: 'the limit from node allocatable attachable-volumes-csi-<driver> → no eviction',
      objects: withVolumes(
        [],
        1,
        makeNode('b1')
          .zone('zone-b')
          .allocatable({ [`attachable-volumes-csi-${DRIVER}`]: 1 }),
      ),
      moves: [],
      refused: /NodeVolumeLimits/,
    },
    {
      scenario: 'a CSINode driver without a count sets no limit → web moves to b1',
      objects: withVolumes([makeCsiNode('b1', { [DRIVER]: undefined })]),
      moves: ['web-2→b1'],
    },
    {
      scenario: 'an unbound claim counts under its StorageClass provisioner → no eviction',
      objects: zoneSkew(
        (p, i) => p.pvc(`data-web-${i}`),
        [
          makeStorageClass('gp3'),
          ...[1, 2].map((i) => makePvc(`data-web-${i}`, 'shop').storageClass('gp3')),
          makePvc('data-db', 'shop').boundTo('pv-db'),
          makePersistentVolume('pv-db').csi(DRIVER, 'vol-db'),
          makePod('db-0', 'shop').node('b1').pvc('data-db'),
          makeCsiNode('b1', { [DRIVER]: 1 }),
        ],
      ),
      moves: [],
      refused: /NodeVolumeLimits/,
    },
  ])('$scenario', (c) => {
    expect(outcome(plan(c.objects)).moves).toEqual(c.moves);
    // The node the old model chose, and why the scheduler refuses it.
    if (c.refused) expect(problemOn(c.objects, 'web-2', 'b1')).toMatch(c.refused);
    else expect(problemOn(c.objects, 'web-2', 'b1')).toBeUndefined();
  });

  it('a volume already attached to the node is not counted twice', () => {
    // db-0 on b1 mounts web-2's volume too (ReadWriteMany): moving web-2 there attaches nothing new.
    const objects = withVolumes([makeCsiNode('b1', { [DRIVER]: 1 })], 0).map((o) => o);
    objects.push(makePod('reader', 'shop').node('b1').pvc('data-web-2'), makeNode('spare')); // no zone: not a domain
    const o = outcome(plan(objects));
    expect(o.moves).toEqual(['web-2→b1']);
  });
});

describe('VolumeRestrictions: a ReadWriteOncePod claim in use by another pod blocks the replacement everywhere', () => {
  const claims = (mode: 'ReadWriteOnce' | 'ReadWriteOncePod', sharedWith?: string): Buildable[] =>
    zoneSkew(
      (p, i) => p.pvc(`data-web-${i}`),
      [
        ...[1, 2].map((i) => makePvc(`data-web-${i}`, 'shop').accessModes([mode]).boundTo(`pv-web-${i}`)),
        ...[1, 2].map((i) => makePersistentVolume(`pv-web-${i}`)),
        // A pod bound straight to a node (spec.nodeName, as a scheduler-less tool does) that mounts web-2's claim.
        ...(sharedWith === undefined ? [] : [makePod('backup', 'shop').node(sharedWith).pvc('data-web-2')]),
      ],
    );

  it.each([
    {
      scenario: 'control: ReadWriteOnce claim also used by another pod → web-2 moves to b1',
      objects: claims('ReadWriteOnce', 'a1'),
      moves: ['web-2→b1'],
    },
    {
      scenario: 'ReadWriteOncePod claim used by another pod → web-2 not evicted (old model: web-2→b1)',
      objects: claims('ReadWriteOncePod', 'a1'),
      moves: ['web-1→b1'],
      refused: /VolumeRestrictions: claim shop\/data-web-2 is ReadWriteOncePod and pod shop\/backup uses it/,
    },
    {
      scenario: 'only the evicted pod uses its ReadWriteOncePod claim → it moves (Pending until the old pod is gone)',
      objects: claims('ReadWriteOncePod'),
      moves: ['web-2→b1'],
    },
  ])('$scenario', (c) => {
    expect(outcome(plan(c.objects)).moves).toEqual(c.moves);
    if (c.refused) expect(problemOn(c.objects, 'web-2', 'b1')).toMatch(c.refused);
    else expect(problemOn(c.objects, 'web-2', 'b1')).toBeUndefined();
  });

  it('both replicas share one ReadWriteOncePod claim held by another pod → nothing moves, the reason names it', () => {
    const objects = claims('ReadWriteOncePod', 'a1');
    objects.push(makePod('backup-2', 'shop').node('a2').pvc('data-web-1'));
    const o = outcome(plan(objects));
    expect(o.moves).toEqual([]);
    expect(o.skipped.join('\n')).toMatch(
      /VolumeRestrictions: claim shop\/data-web-\d is ReadWriteOncePod and pod shop\/backup/,
    );
  });
});
