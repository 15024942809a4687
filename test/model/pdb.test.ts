// PodDisruptionBudget coverage and allowances (src/model/pdb.ts), as the Eviction API and the disruption controller
// see them.
import { describe, expect, it } from 'vitest';
import { allowedDisruptions, computeAllowances, pdbKey, pdbsForPod, scaledValue } from '../../src/model/pdb.js';
import { buildSnapshot, makePdb, makePod, type PdbBuilder, type PodBuilder } from '../builders.js';

/** `n` Ready replicas of app=web in shop, plus `notReady` unready ones. */
function replicas(n: number, notReady = 0): PodBuilder[] {
  const pods: PodBuilder[] = [];
  for (let i = 0; i < n + notReady; i++) {
    const pod = makePod(`web-${i}`, 'shop').deployment('web').label('app', 'web').node('a1');
    pods.push(i < n ? pod : pod.notReady());
  }
  return pods;
}

function allowance(pdb: PdbBuilder, pods: PodBuilder[]): number {
  const snapshot = buildSnapshot([...pods, pdb]);
  return computeAllowances(snapshot).get('shop/web')!;
}

const web = (): PdbBuilder => makePdb('web', 'shop').selector({ app: 'web' });

describe('computeAllowances', () => {
  it.each([
    ['status wins over spec: 2 allowed by the controller', web().minAvailable(1).allowed(2), replicas(3), 2],
    ['status 0 blocks although spec would allow', web().maxUnavailable(3).allowed(0), replicas(3), 0],
    ['minAvailable 2 of 3 healthy ⇒ 1', web().minAvailable(2), replicas(3), 1],
    ['minAvailable 3 of 3 healthy ⇒ 0', web().minAvailable(3), replicas(3), 0],
    ['minAvailable 2, 3 pods of which 1 not Ready ⇒ 0', web().minAvailable(2), replicas(2, 1), 0],
    ['minAvailable above the pod count ⇒ 0', web().minAvailable(5), replicas(3), 0],
    ['minAvailable 0 ⇒ every healthy pod', web().minAvailable(0), replicas(3), 3],
    ['minAvailable 50% of 3 ⇒ desired 2 (rounded up) ⇒ 1', web().minAvailable('50%'), replicas(3), 1],
    ['minAvailable 100% ⇒ 0', web().minAvailable('100%'), replicas(4), 0],
    ['maxUnavailable 1 of 3 ⇒ 1', web().maxUnavailable(1), replicas(3), 1],
    ['maxUnavailable 1 with one pod already unready ⇒ 0', web().maxUnavailable(1), replicas(2, 1), 0],
    ['maxUnavailable 34% of 3 ⇒ 2 (rounded up) ⇒ 2', web().maxUnavailable('34%'), replicas(3), 2],
    ['maxUnavailable 10% of 4 ⇒ 1 (rounded up)', web().maxUnavailable('10%'), replicas(4), 1],
    ['maxUnavailable 0 ⇒ 0', web().maxUnavailable(0), replicas(3), 0],
    ['maxUnavailable larger than the pods ⇒ every healthy pod', web().maxUnavailable(10), replicas(3), 3],
    ['neither set (policy/v1 has no default) ⇒ 0', web(), replicas(3), 0],
    ['no matching pods ⇒ 0', web().maxUnavailable(1), [], 0],
    ['nil selector matches no pods ⇒ 0', makePdb('web', 'shop').selector(null).maxUnavailable(1), replicas(3), 0],
    ['empty selector covers the whole namespace', makePdb('web', 'shop').selector({}).minAvailable(1), replicas(3), 2],
  ])('%s', (_name, pdb, pods, expected) => {
    expect(allowance(pdb, pods)).toBe(expected);
  });

  it('terminating and finished pods are neither expected nor healthy', () => {
    const pods = [
      ...replicas(2),
      makePod('web-old', 'shop').label('app', 'web').terminating(),
      makePod('web-done', 'shop').label('app', 'web').phase('Succeeded'),
      makePod('web-failed', 'shop').label('app', 'web').phase('Failed').notReady(),
    ];
    // maxUnavailable 1 of expected 2 ⇒ desired 1 ⇒ 2 healthy − 1 = 1
    expect(allowance(web().maxUnavailable(1), pods)).toBe(1);
  });

  it('pods of other namespaces and labels do not count', () => {
    const pods = [
      ...replicas(1),
      makePod('web-x', 'other').label('app', 'web'),
      makePod('db', 'shop').label('app', 'db'),
    ];
    expect(allowance(web().minAvailable(1), pods)).toBe(0);
  });

  it('keys every budget by namespace/name', () => {
    const snapshot = buildSnapshot([
      ...replicas(2),
      web().minAvailable(1),
      makePdb('db', 'shop').selector({ app: 'db' }).allowed(1),
      makePdb('web', 'other').selector({ app: 'web' }).maxUnavailable(1),
    ]);
    expect(computeAllowances(snapshot)).toEqual(
      new Map([
        ['shop/web', 1],
        ['shop/db', 1],
        ['other/web', 0],
      ]),
    );
  });
});

describe('allowedDisruptions and scaledValue', () => {
  it.each([
    [{ kind: 'int' as const, value: 3 }, 10, 3],
    [{ kind: 'percent' as const, value: 25 }, 10, 3],
    [{ kind: 'percent' as const, value: 50 }, 0, 0],
    [{ kind: 'percent' as const, value: 1 }, 1, 1],
  ])('scaledValue(%j, %d) = %d', (value, total, expected) => {
    expect(scaledValue(value, total)).toBe(expected);
  });

  it('expected 0 allows nothing even with minAvailable 0', () => {
    const pdb = {
      namespace: 'a',
      name: 'b',
      selector: { kind: 'nothing' as const },
      statusAllowed: undefined,
      maxUnavailable: undefined,
    };
    expect(allowedDisruptions({ ...pdb, minAvailable: { kind: 'int', value: 0 } }, 0, 0)).toBe(0);
  });
});

describe('pdbsForPod', () => {
  const snapshot = buildSnapshot([
    makePod('web-1', 'shop').labels({ app: 'web', tier: 'frontend' }),
    makePdb('web', 'shop').selector({ app: 'web' }).minAvailable(1),
    makePdb('frontend', 'shop').selector({ tier: 'frontend' }).minAvailable(1),
    makePdb('all', 'shop').selector({}).minAvailable(1),
    makePdb('none', 'shop').selector(null).minAvailable(1),
    makePdb('web', 'other').selector({ app: 'web' }).minAvailable(1),
    makePdb('db', 'shop').selector({ app: 'db' }).minAvailable(1),
  ]);

  it('returns the same-namespace budgets whose selector matches', () => {
    expect(pdbsForPod(snapshot.pods[0]!, snapshot.pdbs).map(pdbKey)).toEqual(['shop/web', 'shop/frontend', 'shop/all']);
  });

  it('returns nothing for an unlabelled pod except an empty-selector budget', () => {
    expect(pdbsForPod({ namespace: 'shop', labels: {} }, snapshot.pdbs).map(pdbKey)).toEqual(['shop/all']);
  });
});
