// What the harness reads from the binaries of a release (no binaries needed): the version line, and the feature
// gates a component offers, as kube-apiserver v1.26 (plain names) and v1.3x (names prefixed `kube:`) print them.
import { describe, expect, it } from 'vitest';
import { featureGateArgs, parseGateHelp, parseVersionLine } from './assets.js';

const HELP_1_26 = `      --feature-gates mapStringBool   A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:
                                      APIListChunking=true|false (BETA - default=true)
                                      MatchLabelKeysInPodTopologySpread=true|false (ALPHA - default=false)
                                      MinDomainsInPodTopologySpread=true|false (BETA - default=false)
      --help                          help for kube-apiserver
`;
const HELP_1_37 = `      --feature-gates colonSeparatedMultimapStringString
                kube:AllAlpha=true|false (ALPHA - default=false)
                kube:DRAExtendedResource=true|false (ALPHA - default=false)
                kube:SomeOldGate=true|false (DEPRECATED - default=false)
`;

describe('release of the binaries', () => {
  it.each([
    ['Kubernetes v1.26.0', { gitVersion: 'v1.26.0', major: 1, minor: 26 }],
    ['Kubernetes v1.37.2\n', { gitVersion: 'v1.37.2', major: 1, minor: 37 }],
    ['Kubernetes v1.35.0-rc.1', { gitVersion: 'v1.35.0-rc.1', major: 1, minor: 35 }],
  ])('reads %j', (line, version) => {
    expect(parseVersionLine(line)).toEqual(version);
  });

  it('reads no version from a line without one', () => {
    expect(parseVersionLine('Kubernetes unknown')).toBeUndefined();
  });
});

describe('feature gates a release offers', () => {
  it('lists the alpha, beta and deprecated gates of either help format', () => {
    expect([...parseGateHelp(HELP_1_26)]).toEqual([
      'APIListChunking',
      'MatchLabelKeysInPodTopologySpread',
      'MinDomainsInPodTopologySpread',
    ]);
    expect([...parseGateHelp(HELP_1_37)]).toEqual(['AllAlpha', 'DRAExtendedResource', 'SomeOldGate']);
  });

  it('passes a gate the release offers, either way', () => {
    const offered = parseGateHelp(HELP_1_26);
    expect(featureGateArgs('kube-apiserver', { MinDomainsInPodTopologySpread: true }, offered)).toEqual([
      '--feature-gates=MinDomainsInPodTopologySpread=true',
    ]);
    expect(
      featureGateArgs('kube-apiserver', { APIListChunking: false, MinDomainsInPodTopologySpread: true }, offered),
    ).toEqual(['--feature-gates=APIListChunking=false,MinDomainsInPodTopologySpread=true']);
  });

  it('leaves out a gate turned on that the release no longer offers (GA: on anyway)', () => {
    const offered = parseGateHelp(HELP_1_37);
    expect(featureGateArgs('kube-apiserver', { MinDomainsInPodTopologySpread: true }, offered)).toEqual([]);
    expect(featureGateArgs('kube-apiserver', {}, offered)).toEqual([]);
  });

  it('refuses a gate turned off that the release no longer offers', () => {
    const offered = parseGateHelp(HELP_1_37);
    expect(() => featureGateArgs('kube-apiserver', { MinDomainsInPodTopologySpread: false }, offered)).toThrow(
      /offers no feature gate MinDomainsInPodTopologySpread/,
    );
  });
});
