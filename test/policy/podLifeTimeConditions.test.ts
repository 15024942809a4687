// spec.strategies.podLifeTime.conditions: what the parser reads, what it refuses (each problem naming its field), and
// that a policy with a bad filter stops `plan` with exit 2 and one paragraph naming the file, the object and the field.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { checkPolicy, parsePolicy } from '../../src/policy/parse.js';
import { makeNode, makePolicy } from '../builders.js';

type Json = Record<string, unknown>;

const lifetime = (conditions: unknown): Json => ({ strategies: { podLifeTime: { conditions } } });

describe('podLifeTime conditions: valid values', () => {
  it('reads each field, the minimum time in milliseconds; absent means an empty list (any conditions)', () => {
    const policy = parsePolicy(
      makePolicy(
        'p',
        lifetime([
          { type: 'Ready', status: 'False', reason: 'PodCompleted', minTimeSinceLastTransition: '4h' },
          { reason: 'X' },
        ]),
      ),
      { file: 'p.yaml' },
    );
    expect(policy.spec.strategies.podLifeTime.conditions).toEqual([
      { type: 'Ready', status: 'False', reason: 'PodCompleted', minTimeSinceLastTransitionMs: 4 * 3_600_000 },
      { reason: 'X' },
    ]);
    const bare = parsePolicy(makePolicy('p', { strategies: { podLifeTime: {} } }), { file: 'p.yaml' });
    expect(bare.spec.strategies.podLifeTime.conditions).toEqual([]);
  });
});

describe('podLifeTime conditions: invalid values name their field', () => {
  it.each<[string, unknown, string, RegExp]>([
    ['not a list', { type: 'Ready' }, 'spec.strategies.podLifeTime.conditions', /must be a list/],
    [
      'an empty filter (it would match every pod)',
      [{}],
      'spec.strategies.podLifeTime.conditions[0]',
      /at least one of type, status, reason/,
    ],
    [
      'a status no condition has',
      [{ type: 'Ready', status: 'true' }],
      'spec.strategies.podLifeTime.conditions[0].status',
      /one of True, False, Unknown/,
    ],
    [
      'a typo in a field name',
      [{ type: 'Ready', minTimeSinceLastTransitionSeconds: 60 }],
      'spec.strategies.podLifeTime.conditions[0].minTimeSinceLastTransitionSeconds',
      /unknown field/,
    ],
    [
      'a minimum time that is not a duration',
      [{ type: 'Ready', minTimeSinceLastTransition: 60 }],
      'spec.strategies.podLifeTime.conditions[0].minTimeSinceLastTransition',
      /duration/,
    ],
    [
      'a type that is not a string',
      [{ type: 3 }],
      'spec.strategies.podLifeTime.conditions[0].type',
      /must be a string/,
    ],
  ])('%s', (_name, conditions, field, problem) => {
    const problems = checkPolicy(makePolicy('p', lifetime(conditions))).problems;
    expect(problems.map((p) => p.field)).toContain(field);
    expect(problems.find((p) => p.field === field)!.problem).toMatch(problem);
  });
});

describe('podLifeTime conditions: bad input exits 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lifetime-conditions-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('plan with a policy whose filter has a status no condition has', async () => {
    const snapshot = join(dir, 'cluster.json');
    writeFileSync(snapshot, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [makeNode('n1').obj()] }));
    const policyFile = join(dir, 'policy.json');
    writeFileSync(policyFile, JSON.stringify(makePolicy('stale', lifetime([{ type: 'Ready', status: 'Maybe' }]))));
    let err = '';
    const code = await main(['plan', '--snapshot', snapshot, '--policy', policyFile], {
      stdout: () => undefined,
      stderr: (s) => (err += s),
    });
    expect(code).toBe(2);
    const lines = err
      .trimEnd()
      .split('\n')
      .filter((l) => !l.startsWith('warning: '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(policyFile);
    expect(lines[0]).toContain('stale');
    expect(lines[0]).toContain('spec.strategies.podLifeTime.conditions[0].status');
  });
});
