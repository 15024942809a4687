// What the NodePorts, NodeVolumeLimits and VolumeRestrictions filters read from a snapshot: pods' host ports, CSINode
// attach limits joined to their nodes, and the CSI volumes and ReadWriteOncePod claims resolved per pod. Bad values
// are InputErrors naming the file, the object and the field.
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import {
  loadObjects,
  makeCsiNode,
  makeNode,
  makePersistentVolume,
  makePod,
  makePvc,
  makeStorageClass,
} from '../builders.js';

type Json = Record<string, unknown>;
type Buildable = Json | { obj(): Json };

function problem(objects: readonly Buildable[]): string {
  try {
    loadObjects(objects);
  } catch (e) {
    if (e instanceof InputError) return e.message;
    throw e;
  }
  throw new Error('expected an InputError');
}

describe('host ports', () => {
  it('keeps the ports with a hostPort, defaulting the address and the protocol', () => {
    const pod = makePod('p').hostPort(80).hostPort(53, { protocol: 'UDP', hostIP: '10.0.0.1' });
    const raw = pod.obj();
    // A port without hostPort binds nothing on the node.
    ((raw['spec'] as { containers: Json[] }).containers[0]!['ports'] as Json[]).push({ containerPort: 8080 });
    const p = loadObjects([raw]).snapshot.pods[0]!;
    expect(p.hostPorts).toEqual([
      { hostIP: '0.0.0.0', protocol: 'TCP', port: 80 },
      { hostIP: '10.0.0.1', protocol: 'UDP', port: 53 },
    ]);
    expect(loadObjects([makePod('q')]).snapshot.pods[0]!.hostPorts).toEqual([]);
  });

  it.each([
    [{ hostPort: 70000 }, 'spec.containers[0].ports[0].hostPort: must be between 1 and 65535'],
    [{ hostPort: '80' }, 'spec.containers[0].ports[0].hostPort: must be an integer'],
    [{ hostPort: 80, protocol: 'ICMP' }, 'spec.containers[0].ports[0].protocol: must be one of TCP, UDP, SCTP'],
  ])('%j is rejected', (port, message) => {
    expect(problem([makePod('p').set('spec.containers', [{ name: 'c', ports: [port] }])])).toContain(message);
  });
});

describe('CSINode attach limits', () => {
  it('join their node; drivers without a count set none', () => {
    const { snapshot } = loadObjects([
      makeNode('a1'),
      makeNode('a2'),
      makeCsiNode('a1', { 'ebs.csi.example': 25, 'efs.csi.example': undefined }),
    ]);
    expect(snapshot.nodes.map((n) => [n.name, n.csiVolumeLimits])).toEqual([
      ['a1', { 'ebs.csi.example': 25 }],
      ['a2', undefined],
    ]);
  });

  it('a negative count names the CSINode and the field', () => {
    expect(problem([makeNode('a1'), makeCsiNode('a1', { x: -1 })])).toContain(
      'CSINode a1: spec.drivers[0].allocatable.count: must be 0 or more',
    );
  });

  it('CSINode is a known kind (no "ignored" warning)', () => {
    const warnings: string[] = [];
    loadObjects([makeNode('a1'), makeCsiNode('a1', { x: 1 })], { warn: (w) => warnings.push(w) });
    expect(warnings).toEqual([]);
  });
});

describe('CSI volumes and ReadWriteOncePod claims of a pod', () => {
  it('bound claims take the PV spec.csi, unbound ones their class provisioner; in-tree volumes are not counted', () => {
    const { snapshot } = loadObjects([
      makePod('db-0', 'shop').node('a1').pvc('bound').pvc('unbound').pvc('intree').pvc('rwop'),
      makePvc('bound', 'shop').boundTo('pv-1'),
      makePersistentVolume('pv-1').csi('ebs.csi.example', 'vol-1'),
      makePvc('unbound', 'shop').storageClass('gp3'),
      makeStorageClass('gp3'),
      makePvc('intree', 'shop').boundTo('pv-2'),
      makePersistentVolume('pv-2'),
      makePvc('rwop', 'shop').accessModes(['ReadWriteOncePod']).boundTo('pv-3'),
      makePersistentVolume('pv-3').csi('ebs.csi.example', 'vol-3'),
    ]);
    const pod = snapshot.pods[0]!;
    expect(pod.csiVolumes).toEqual([
      { driver: 'ebs.csi.example', handle: 'vol-1' },
      { driver: 'ebs.csi.example', handle: 'shop-unbound' },
      { driver: 'ebs.csi.example', handle: 'vol-3' },
    ]);
    expect(pod.readWriteOncePodClaims).toEqual(['rwop']);
  });

  it('a PV whose spec.csi has no volumeHandle names the field', () => {
    const pv = makePersistentVolume('pv-1').set('spec.csi', { driver: 'ebs.csi.example' });
    expect(problem([pv])).toContain('PersistentVolume pv-1: spec.csi.volumeHandle: is required');
  });
});
