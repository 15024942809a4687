// The selector, node-affinity, toleration and quantity semantics the whole analysis rests on (src/model/labels.ts,
// nodeAffinity.ts, taints.ts, quantity.ts), checked against the API's documented behaviour.
import { describe, expect, it } from 'vitest';
import { FieldError } from '../../src/errors.js';
import {
  andSelector,
  compileLabelSelector,
  labelKeyProblem,
  labelValueProblem,
  matchesSelector,
  selectorFromLabels,
  selectorText,
} from '../../src/model/labels.js';
import {
  matchesNodeSelectorTerm,
  matchesRequiredNodeAffinity,
  NO_NODE_REQUIREMENT,
} from '../../src/model/nodeAffinity.js';
import { parseQuantity, toMilli } from '../../src/model/quantity.js';
import {
  findUntoleratedTaint,
  isTolerated,
  taintText,
  toleratesTaint,
  DO_NOT_SCHEDULE_EFFECTS,
} from '../../src/model/taints.js';
import type { NodeSelectorRequirement, NodeSelectorTerm, Taint, Toleration } from '../../src/model/types.js';

describe('label selectors', () => {
  const web = { app: 'web', tier: 'frontend' };
  it.each([
    ['nil selector matches nothing', null, web, false],
    ['absent selector matches nothing', undefined, web, false],
    ['empty selector matches everything', {}, web, true],
    ['empty selector matches an unlabelled pod', {}, {}, true],
    ['matchLabels equal', { matchLabels: { app: 'web' } }, web, true],
    ['matchLabels different value', { matchLabels: { app: 'db' } }, web, false],
    ['matchLabels missing key', { matchLabels: { team: 'a' } }, web, false],
    [
      'In with the value',
      { matchExpressions: [{ key: 'tier', operator: 'In', values: ['backend', 'frontend'] }] },
      web,
      true,
    ],
    ['In without the key', { matchExpressions: [{ key: 'team', operator: 'In', values: ['a'] }] }, web, false],
    [
      'NotIn with another value',
      { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['backend'] }] },
      web,
      true,
    ],
    [
      'NotIn with the value',
      { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['frontend'] }] },
      web,
      false,
    ],
    [
      'NotIn on a missing key matches',
      { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['a'] }] },
      web,
      true,
    ],
    ['Exists', { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, web, true],
    ['Exists on a missing key', { matchExpressions: [{ key: 'team', operator: 'Exists' }] }, web, false],
    [
      'DoesNotExist on a missing key matches',
      { matchExpressions: [{ key: 'team', operator: 'DoesNotExist' }] },
      web,
      true,
    ],
    ['DoesNotExist on a present key', { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, web, false],
    [
      'matchLabels and matchExpressions are ANDed',
      { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['backend'] }] },
      web,
      false,
    ],
    ['prototype keys are not labels', { matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, {}, false],
    [
      'prototype keys: DoesNotExist matches',
      { matchExpressions: [{ key: 'toString', operator: 'DoesNotExist' }] },
      {},
      true,
    ],
  ])('%s', (_name, raw, labels, expected) => {
    expect(matchesSelector(compileLabelSelector(raw, 'sel'), labels)).toBe(expected);
  });

  it.each([
    [
      'unknown operator',
      { matchExpressions: [{ key: 'app', operator: 'Inn', values: ['web'] }] },
      'sel.matchExpressions[0].operator',
    ],
    [
      'In with no values',
      { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] },
      'sel.matchExpressions[0].values',
    ],
    [
      'NotIn without values',
      { matchExpressions: [{ key: 'app', operator: 'NotIn' }] },
      'sel.matchExpressions[0].values',
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'app', operator: 'Exists', values: ['x'] }] },
      'sel.matchExpressions[0].values',
    ],
    ['missing key', { matchExpressions: [{ operator: 'Exists' }] }, 'sel.matchExpressions[0].key'],
    ['invalid key', { matchExpressions: [{ key: '-app', operator: 'Exists' }] }, 'sel.matchExpressions[0].key'],
    [
      'invalid value',
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['a b'] }] },
      'sel.matchExpressions[0].values[0]',
    ],
    ['non-string matchLabels value', { matchLabels: { app: 5 } }, 'sel.matchLabels.app'],
    ['matchExpressions not a list', { matchExpressions: { key: 'app' } }, 'sel.matchExpressions'],
    ['selector not an object', 'app=web', 'sel'],
  ])('rejects %s with the field path', (_name, raw, field) => {
    expect(() => compileLabelSelector(raw, 'sel')).toThrow(FieldError);
    try {
      compileLabelSelector(raw, 'sel');
    } catch (e) {
      expect((e as FieldError).field).toBe(field);
    }
  });

  it('gives canonical text regardless of order and duplicates', () => {
    const a = compileLabelSelector(
      {
        matchLabels: { tier: 'frontend', app: 'web' },
        matchExpressions: [
          { key: 'legacy', operator: 'DoesNotExist' },
          { key: 'zone', operator: 'In', values: ['b', 'a', 'b'] },
        ],
      },
      's',
    );
    const b = compileLabelSelector(
      {
        matchExpressions: [
          { key: 'zone', operator: 'In', values: ['a', 'b'] },
          { key: 'app', operator: 'In', values: ['web'] },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
        matchLabels: { tier: 'frontend' },
      },
      's',
    );
    expect(selectorText(a)).toBe('app=web,!legacy,tier=frontend,zone in (a,b)');
    expect(selectorText(b)).toBe(selectorText(a));
    expect(selectorText(compileLabelSelector(null, 's'))).toBe('<none>');
  });

  it('ANDs extra requirements, and a nil selector stays nil', () => {
    const base = compileLabelSelector({ matchLabels: { app: 'web' } }, 's');
    const anded = andSelector(base, [{ key: 'pod-template-hash', operator: 'In', values: ['abc'] }]);
    expect(matchesSelector(anded, { app: 'web', 'pod-template-hash': 'abc' })).toBe(true);
    expect(matchesSelector(anded, { app: 'web', 'pod-template-hash': 'def' })).toBe(false);
    expect(andSelector(compileLabelSelector(null, 's'), [{ key: 'a', operator: 'Exists', values: [] }]).kind).toBe(
      'nothing',
    );
  });

  it('builds a selector from a label set', () => {
    expect(selectorText(selectorFromLabels({ b: '2', a: '1' }))).toBe('a=1,b=2');
  });

  it.each([
    ['app', undefined],
    ['app.kubernetes.io/name', undefined],
    ['kubernetes.io/hostname', undefined],
    ['', 'invalid'],
    ['-app', 'invalid'],
    ['Example.com/app', 'prefix'],
    ['a/b/c', 'invalid'],
    ['x'.repeat(64), 'invalid'],
  ])('label key %j', (key, problem) => {
    const found = labelKeyProblem(key);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  it.each([
    ['', true],
    ['web', true],
    ['v1.2_3-a', true],
    ['-web', false],
    ['web ', false],
    ['x'.repeat(64), false],
  ])('label value %j valid: %s', (value, valid) => {
    expect(labelValueProblem(value) === undefined).toBe(valid);
  });
});

describe('node affinity', () => {
  const node = { name: 'node-a1', labels: { zone: 'a', cpus: '16', gen: 'v5', disk: 'ssd' } };
  const req = (
    key: string,
    operator: NodeSelectorRequirement['operator'],
    values: string[] = [],
  ): NodeSelectorRequirement => ({
    key,
    operator,
    values,
  });
  const term = (
    matchExpressions: NodeSelectorRequirement[],
    matchFields: NodeSelectorRequirement[] = [],
  ): NodeSelectorTerm => ({
    matchExpressions,
    matchFields,
  });

  it.each([
    ['In with the value', req('zone', 'In', ['a', 'b']), true],
    ['In without the value', req('zone', 'In', ['b']), false],
    ['In on a missing key', req('rack', 'In', ['1']), false],
    ['NotIn with another value', req('zone', 'NotIn', ['b']), true],
    ['NotIn with the value', req('zone', 'NotIn', ['a']), false],
    ['NotIn on a missing key matches', req('rack', 'NotIn', ['1']), true],
    ['Exists', req('zone', 'Exists'), true],
    ['Exists on a missing key', req('rack', 'Exists'), false],
    ['DoesNotExist on a missing key matches', req('rack', 'DoesNotExist'), true],
    ['DoesNotExist on a present key', req('zone', 'DoesNotExist'), false],
    ['Gt greater', req('cpus', 'Gt', ['8']), true],
    ['Gt equal is not greater', req('cpus', 'Gt', ['16']), false],
    ['Lt less', req('cpus', 'Lt', ['32']), true],
    ['Lt equal is not less', req('cpus', 'Lt', ['16']), false],
    // labels.NewRequirement validates every value as a label value, so "-1" is a parse error and the term matches nothing.
    ['Gt with a negative value (not a label value) does not match', req('cpus', 'Gt', ['-1']), false],
    ['Gt on a non-integer label does not match', req('gen', 'Gt', ['1']), false],
    ['Lt on a non-integer label does not match', req('gen', 'Lt', ['100']), false],
    ['Gt on a missing key does not match', req('rack', 'Gt', ['1']), false],
    ['Gt with a non-integer value does not match', req('cpus', 'Gt', ['1.5']), false],
    ['Gt on a label beyond int64 does not match', req('big', 'Gt', ['1']), false],
  ])('%s', (_name, r, expected) => {
    const labelled = { ...node, labels: { ...node.labels, big: '99999999999999999999' } };
    expect(matchesNodeSelectorTerm(term([r]), labelled)).toBe(expected);
  });

  it.each([
    [
      'expressions in a term are ANDed (all match)',
      [term([req('zone', 'In', ['a']), req('disk', 'In', ['ssd'])])],
      true,
    ],
    [
      'expressions in a term are ANDed (one fails)',
      [term([req('zone', 'In', ['a']), req('disk', 'In', ['hdd'])])],
      false,
    ],
    ['terms are ORed (second matches)', [term([req('zone', 'In', ['b'])]), term([req('disk', 'In', ['ssd'])])], true],
    ['terms are ORed (none matches)', [term([req('zone', 'In', ['b'])]), term([req('disk', 'In', ['hdd'])])], false],
    ['an empty term matches nothing', [term([])], false],
    ['an empty term does not block another', [term([]), term([req('zone', 'Exists')])], true],
    ['matchFields metadata.name In', [term([], [req('metadata.name', 'In', ['node-a1'])])], true],
    ['matchFields metadata.name In another node', [term([], [req('metadata.name', 'In', ['node-b1'])])], false],
    ['matchFields metadata.name NotIn', [term([], [req('metadata.name', 'NotIn', ['node-b1'])])], true],
    [
      'fields and expressions are ANDed',
      [term([req('zone', 'In', ['b'])], [req('metadata.name', 'In', ['node-a1'])])],
      false,
    ],
    ['no terms at all matches nothing', [], false],
  ])('%s', (_name, terms, expected) => {
    expect(matchesRequiredNodeAffinity({ nodeSelector: undefined, terms, text: '' }, node)).toBe(expected);
  });

  it.each([
    ['nodeSelector all labels present', { zone: 'a', disk: 'ssd' }, true],
    ['nodeSelector one label differs', { zone: 'a', disk: 'hdd' }, false],
    ['nodeSelector label missing', { rack: '1' }, false],
    ['nodeSelector prototype key', { constructor: 'x' }, false],
  ])('%s', (_name, nodeSelector, expected) => {
    expect(matchesRequiredNodeAffinity({ nodeSelector, terms: undefined, text: '' }, node)).toBe(expected);
  });

  it('nodeSelector AND affinity terms', () => {
    const both = { nodeSelector: { zone: 'a' }, terms: [term([req('disk', 'In', ['hdd'])])], text: '' };
    expect(matchesRequiredNodeAffinity(both, node)).toBe(false);
    expect(matchesRequiredNodeAffinity(NO_NODE_REQUIREMENT, node)).toBe(true);
  });
});

describe('taints and tolerations', () => {
  const taint = (key: string, value: string, effect: Taint['effect']): Taint => ({ key, value, effect });
  const tol = (t: Partial<Toleration>): Toleration => ({ key: '', operator: 'Equal', value: '', effect: '', ...t });

  it.each([
    [
      'Equal with the same key, value and effect',
      tol({ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }),
      true,
    ],
    ['Equal with another value', tol({ key: 'dedicated', value: 'web', effect: 'NoSchedule' }), false],
    ['Equal with another effect', tol({ key: 'dedicated', value: 'batch', effect: 'NoExecute' }), false],
    ['empty effect matches every effect', tol({ key: 'dedicated', value: 'batch' }), true],
    ['Exists ignores the value', tol({ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }), true],
    ['Exists with another key', tol({ key: 'spot', operator: 'Exists' }), false],
    ['empty key with Exists tolerates everything', tol({ operator: 'Exists' }), true],
    ['empty key with Exists and an effect limits the effect', tol({ operator: 'Exists', effect: 'NoExecute' }), false],
  ])('%s', (_name, toleration, expected) => {
    expect(toleratesTaint(toleration, taint('dedicated', 'batch', 'NoSchedule'))).toBe(expected);
  });

  it('Equal against a taint without value needs an empty value', () => {
    expect(toleratesTaint(tol({ key: 'spot' }), taint('spot', '', 'PreferNoSchedule'))).toBe(true);
    expect(toleratesTaint(tol({ key: 'spot', value: 'yes' }), taint('spot', '', 'PreferNoSchedule'))).toBe(false);
  });

  it('finds the first untolerated NoSchedule/NoExecute taint and ignores PreferNoSchedule', () => {
    const taints = [taint('spot', '', 'PreferNoSchedule'), taint('a', '1', 'NoSchedule'), taint('b', '', 'NoExecute')];
    expect(findUntoleratedTaint(taints, [tol({ key: 'a', value: '1' })], DO_NOT_SCHEDULE_EFFECTS)).toEqual(taints[2]);
    expect(findUntoleratedTaint(taints, [tol({ operator: 'Exists' })], DO_NOT_SCHEDULE_EFFECTS)).toBeUndefined();
    expect(isTolerated(taints[0]!, [])).toBe(false);
    expect(taintText(taints[1]!)).toBe('a=1:NoSchedule');
    expect(taintText(taints[0]!)).toBe('spot:PreferNoSchedule');
  });
});

describe('quantities', () => {
  it.each([
    ['100m', 0.1, 100],
    ['0.5', 0.5, 500],
    ['1', 1, 1000],
    ['2k', 2000, 2_000_000],
    ['1e3', 1000, 1_000_000],
    ['1.5', 1.5, 1500],
    ['1n', 1e-9, 1],
    ['250u', 0.00025, 1],
    ['+2', 2, 2000],
    ['.5', 0.5, 500],
  ])('cpu %s = %d cores = %d millicores (rounded up)', (raw, value, milli) => {
    expect(parseQuantity(raw)).toBeCloseTo(value, 12);
    expect(toMilli(parseQuantity(raw)!)).toBe(milli);
  });

  it.each([
    ['1.5Gi', 1.5 * 2 ** 30],
    ['128974848', 128974848],
    ['129e6', 129e6],
    ['129M', 129e6],
    ['123Mi', 123 * 2 ** 20],
    ['1Ki', 1024],
    ['1E', 1e18],
    ['1Ei', 2 ** 60],
    ['5e-3', 0.005],
    [3, 3],
  ])('memory %s = %d bytes', (raw, bytes) => {
    expect(parseQuantity(raw)).toBeCloseTo(bytes, 6);
  });

  it.each([['1.5.5'], ['abc'], ['1 Gi'], ['1gi'], ['Gi'], [''], ['1e'], ['0x10'], [null], [{}], [Number.NaN]])(
    'rejects %j',
    (raw) => {
      expect(parseQuantity(raw)).toBeUndefined();
    },
  );
});
