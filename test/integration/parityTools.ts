// What both scheduler parity suites (test/integration/schedulerParity.test.ts, small clusters, and
// schedulerParityScale.test.ts, 150-500 nodes) share: a seeded generator, so CI sees the same clusters every run, and
// the reading of kube-scheduler's -v=10 log into one attempt per scheduling try.

export interface Random {
  (): number;
  pick<T>(items: readonly T[]): T;
  int(lo: number, hi: number): number;
  chance(p: number): boolean;
}

/** mulberry32: small and good enough to make varied clusters; the seed is printed with every result. */
export function random(seed: number): Random {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r = (() => next()) as Random;
  r.pick = (items) => items[Math.floor(next() * items.length)]!;
  r.int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  r.chance = (p) => next() < p;
  return r;
}

export interface Attempt {
  readonly pod: string;
  /** Final score per node the scheduler scored (none when one node or none was feasible). */
  readonly finals: Map<string, number>;
  /** plugin → node → weighted score. */
  readonly plugins: Map<string, Map<string, number>>;
}

const ATTEMPT = /"Attempting to schedule pod" pod="([^"]+)"/;
const FINAL = /"Calculated node's final score for pod" pod="([^"]+)" node="([^"]+)" score=(-?\d+)/;
const PLUGIN = /"Plugin scored node for pod" pod="([^"]+)" plugin="([^"]+)" node="([^"]+)" score=(-?\d+)/;

/** Every scheduling attempt in a kube-scheduler -v=10 log, in order; a retried pod has one per try. */
export function parseAttempts(text: string): Attempt[] {
  const attempts: Attempt[] = [];
  const current = new Map<string, Attempt>();
  for (const line of text.split('\n')) {
    let m = ATTEMPT.exec(line);
    if (m) {
      const a: Attempt = { pod: m[1]!, finals: new Map(), plugins: new Map() };
      attempts.push(a);
      current.set(a.pod, a);
      continue;
    }
    m = FINAL.exec(line);
    if (m) {
      current.get(m[1]!)?.finals.set(m[2]!, Number(m[3]));
      continue;
    }
    m = PLUGIN.exec(line);
    const a = m ? current.get(m[1]!) : undefined;
    if (m && a !== undefined) {
      let perNode = a.plugins.get(m[2]!);
      if (perNode === undefined) a.plugins.set(m[2]!, (perNode = new Map()));
      perNode.set(m[3]!, Number(m[4]));
    }
  }
  return attempts;
}

type Answer = Promise<{ status: number; body: unknown }>;

/** The body of an API answer, or a thrown error naming the status: a probe cluster that failed to build is no result. */
export async function must(answer: Answer): Promise<unknown> {
  const a = await answer;
  if (a.status >= 300) throw new Error(`API answered ${a.status}: ${JSON.stringify(a.body)}`);
  return a.body;
}

/**
 * One empty ReplicaSet per workload that has one, named `<app>-<hash>` with the workload's labels as its selector:
 * the scheduler's default spreading finds a pod's siblings through it, so the probes' owners must exist.
 */
export async function createReplicaSets(
  request: (method: string, path: string, body: unknown) => Answer,
  namespace: string,
  workloads: ReadonlyArray<{ readonly name: string; readonly labels: Record<string, string> }>,
): Promise<void> {
  for (const { name, labels } of workloads) {
    await must(
      request('POST', `/apis/apps/v1/namespaces/${namespace}/replicasets`, {
        metadata: { name, labels },
        spec: {
          replicas: 0,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'main', image: 'registry.example/x:1' }] } },
        },
      }),
    );
  }
}

/**
 * The probes the scheduler has not decided on yet: not bound, and not marked unschedulable (a PodScheduled=False
 * condition is a decision too).
 */
export function undecidedProbes(
  pods: ReadonlyArray<Record<string, unknown>>,
  probes: readonly string[],
): Array<Record<string, unknown>> {
  return pods.filter((p) => {
    const name = (p['metadata'] as Record<string, unknown>)['name'] as string;
    if (!probes.includes(name) || (p['spec'] as Record<string, unknown>)['nodeName']) return false;
    const status = p['status'] as Record<string, unknown> | undefined;
    const conditions = (status?.['conditions'] as Array<Record<string, unknown>> | undefined) ?? [];
    return !conditions.some((k) => k['type'] === 'PodScheduled' && k['status'] === 'False');
  });
}
