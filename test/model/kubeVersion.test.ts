// The Kubernetes version the model follows: parsing what users and API servers write, and the nearest supported minor.
import { describe, expect, it } from 'vitest';
import {
  modelledVersion,
  parseKubeRelease,
  releaseFromServerVersion,
  schedulerFeatures,
} from '../../src/model/kubeVersion.js';

describe('parseKubeRelease', () => {
  it.each([
    ['1.37', { major: 1, minor: 37 }],
    ['v1.37.2', { major: 1, minor: 37 }],
    ['1.35.0-rc.1', { major: 1, minor: 35 }],
    ['v1.36.3+k3s1', { major: 1, minor: 36 }],
    ['v1.35.4-eks-4096722', { major: 1, minor: 35 }],
    ['banana', undefined],
    ['1', undefined],
    ['1.x', undefined],
    ['', undefined],
    ['v1.37.2 extra', undefined],
  ])('%j → %j', (text, release) => {
    expect(parseKubeRelease(text)).toEqual(release);
  });
});

describe('releaseFromServerVersion (GET /version)', () => {
  it.each([
    {
      scenario: 'gitVersion',
      info: { major: '1', minor: '37', gitVersion: 'v1.37.2' },
      release: { major: 1, minor: 37 },
    },
    {
      scenario: 'provider minor with +, no usable gitVersion',
      info: { major: '1', minor: '36+', gitVersion: 'custom' },
      release: { major: 1, minor: 36 },
    },
    { scenario: 'nothing usable', info: { major: '', minor: '' }, release: undefined },
    { scenario: 'not an object', info: 'v1.37.2', release: undefined },
  ])('$scenario', (c) => {
    expect(releaseFromServerVersion(c.info)).toEqual(c.release);
  });
});

describe('modelledVersion: the nearest supported minor, with one warning outside the range', () => {
  it.each([
    { release: { major: 1, minor: 35 }, version: '1.35', warns: false },
    { release: { major: 1, minor: 36 }, version: '1.36', warns: false },
    { release: { major: 1, minor: 37 }, version: '1.37', warns: false },
    { release: { major: 1, minor: 26 }, version: '1.35', warns: true },
    { release: { major: 1, minor: 34 }, version: '1.35', warns: true },
    { release: { major: 1, minor: 38 }, version: '1.37', warns: true },
    { release: { major: 2, minor: 0 }, version: '1.37', warns: true },
  ])('$release.major.$release.minor → $version', (c) => {
    const m = modelledVersion(c.release, 'the API server');
    expect(m.version).toBe(c.version);
    expect(m.warning !== undefined).toBe(c.warns);
    if (c.warns) expect(m.warning).toContain(`kube-scheduler ${c.version}'s`);
  });
});

describe('schedulerFeatures: gate defaults read in each release', () => {
  it.each([
    ['1.35', false],
    ['1.36', true],
    ['1.37', true],
  ] as const)('%s: NodeDeclaredFeatures filter %s; Lt/Gt tolerations off', (version, ndf) => {
    expect(schedulerFeatures(version)).toEqual({ nodeDeclaredFeatures: ndf, tolerationComparisonOperators: false });
  });
});
