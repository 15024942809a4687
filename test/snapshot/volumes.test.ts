// PersistentVolumes, PersistentVolumeClaims and StorageClasses in snapshots: converted with field-exact errors, and
// resolved into each pod's volume topology (the nodes its bound volumes can be reached from).
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import type { PodInfo } from '../../src/model/types.js';
import { volumesReachable } from '../../src/model/volumes.js';
import {
  HOSTNAME,
  ZONE,
  loadObjects,
  makeNode,
  makePersistentVolume,
  makePod,
  makePvc,
  makeStorageClass,
} from '../builders.js';

type Json = Record<string, unknown>;
type Buildable = Json | { obj(): Json };

function podOf(objects: readonly Buildable[], name = 'db-0'): PodInfo {
  const pod = loadObjects(objects).snapshot.pods.find((p) => p.name === name);
  if (pod === undefined) throw new Error(`no pod ${name}`);
  return pod;
}

const db = (): ReturnType<typeof makePod> => makePod('db-0', 'shop').owner('StatefulSet', 'db').node('a1').pvc('data');

describe('volume topology of a pod', () => {
  const cases: ReadonlyArray<{
    scenario: string;
    objects: Buildable[];
    expected: Array<{ claim: string; source: string; text: string }>;
  }> = [
    {
      scenario: 'bound to a PV with zonal node affinity',
      objects: [db(), makePvc('data', 'shop').boundTo('pv-1'), makePersistentVolume('pv-1').zone('zone-a')],
      expected: [{ claim: 'data', source: 'PersistentVolume pv-1', text: `${ZONE}=zone-a` }],
    },
    {
      scenario: 'bound to a PV without node affinity whose class lists allowedTopologies',
      objects: [
        db(),
        makePvc('data', 'shop').boundTo('pv-1'),
        makePersistentVolume('pv-1').storageClass('zonal'),
        makeStorageClass('zonal', { binding: 'Immediate', zones: ['zone-b', 'zone-a'] }),
      ],
      expected: [{ claim: 'data', source: 'PersistentVolume pv-1', text: `${ZONE} in (zone-a,zone-b)` }],
    },
    {
      scenario: 'unbound, WaitForFirstConsumer class: nothing',
      objects: [db(), makePvc('data', 'shop').storageClass('wffc'), makeStorageClass('wffc', { zones: ['zone-a'] })],
      expected: [],
    },
    {
      scenario: 'unbound, Immediate class with allowedTopologies: bound there',
      objects: [
        db(),
        makePvc('data', 'shop').storageClass('zonal'),
        makeStorageClass('zonal', { binding: 'Immediate', zones: ['zone-c'] }),
      ],
      expected: [{ claim: 'data', source: 'StorageClass zonal', text: `${ZONE}=zone-c` }],
    },
    {
      scenario: 'bound to a PV that is not in the snapshot: nothing known',
      objects: [db(), makePvc('data', 'shop').boundTo('pv-9')],
      expected: [],
    },
    {
      scenario: 'a claim of another namespace is not the pod’s',
      objects: [db(), makePvc('data', 'other').boundTo('pv-1'), makePersistentVolume('pv-1').zone('zone-a')],
      expected: [],
    },
    {
      scenario: 'an ephemeral volume’s claim is <pod>-<volume>',
      objects: [
        makePod('db-0', 'shop').node('a1').ephemeral('scratch'),
        makePvc('db-0-scratch', 'shop').boundTo('pv-2'),
        makePersistentVolume('pv-2').nodeAffinityIn(HOSTNAME, ['a1']),
      ],
      expected: [{ claim: 'db-0-scratch', source: 'PersistentVolume pv-2', text: `${HOSTNAME}=a1` }],
    },
  ];

  it.each(cases.map((c) => [c.scenario, c] as const))('%s', (_name, c) => {
    const pod = podOf(c.objects);
    expect(pod.volumeTopology.map(({ claim, source, text }) => ({ claim, source, text }))).toEqual(c.expected);
  });

  it('two claims: a node must reach both volumes', () => {
    const pod = podOf([
      db().pvc('logs'),
      makePvc('data', 'shop').boundTo('pv-1'),
      makePersistentVolume('pv-1').zone('zone-a'),
      makePvc('logs', 'shop').boundTo('pv-2'),
      makePersistentVolume('pv-2').nodeAffinityIn(HOSTNAME, ['a2']),
    ]);
    expect(pod.claims).toEqual(['data', 'logs']);
    const node = (name: string, zone: string) => loadObjects([makeNode(name).zone(zone)]).snapshot.nodes[0]!;
    expect(volumesReachable(pod, node('a2', 'zone-a'))).toBe(true);
    expect(volumesReachable(pod, node('a1', 'zone-a'))).toBe(false);
    expect(volumesReachable(pod, node('a2', 'zone-b'))).toBe(false);
  });

  it('the volume kinds are used, not ignored with a warning', () => {
    const warnings: string[] = [];
    loadObjects(
      [db(), makePvc('data', 'shop').boundTo('pv-1'), makePersistentVolume('pv-1'), makeStorageClass('wffc')],
      { warn: (line) => warnings.push(line) },
    );
    expect(warnings).toEqual([]);
  });
});

describe('volume objects: bad input names the file, the object and the field', () => {
  const bad: ReadonlyArray<readonly [string, Buildable, RegExp]> = [
    [
      'a PV whose required node affinity has no term',
      makePersistentVolume('pv-1').set('spec.nodeAffinity', { required: { nodeSelectorTerms: [] } }),
      /PersistentVolume pv-1: spec\.nodeAffinity\.required\.nodeSelectorTerms: must have at least one/,
    ],
    [
      'a PV node affinity operator that does not exist',
      makePersistentVolume('pv-1').set('spec.nodeAffinity', {
        required: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'Inn', values: ['a'] }] }] },
      }),
      /PersistentVolume pv-1: spec\.nodeAffinity\.required\.nodeSelectorTerms\[0\]\.matchExpressions\[0\]\.operator: must be one of/,
    ],
    [
      'a PVC without a name',
      makePvc('x', 'shop').set('metadata.name', undefined),
      /PersistentVolumeClaim at .*: metadata\.name/,
    ],
    [
      'a StorageClass binding mode that does not exist',
      { ...makeStorageClass('sc'), volumeBindingMode: 'Later' },
      /StorageClass sc: volumeBindingMode: must be one of Immediate, WaitForFirstConsumer/,
    ],
    [
      'allowedTopologies without values',
      { ...makeStorageClass('sc'), allowedTopologies: [{ matchLabelExpressions: [{ key: ZONE, values: [] }] }] },
      /StorageClass sc: allowedTopologies\[0\]\.matchLabelExpressions\[0\]\.values: must be non-empty/,
    ],
  ];

  it.each(bad)('%s', (_name, object, message) => {
    let error: unknown;
    try {
      loadObjects([object]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toMatch(message);
  });
});
