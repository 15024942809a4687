// The alert rules as Prometheus itself evaluates them: the rule groups of manifests/prometheusrule.yaml are written
// out as a rule file, checked with `promtool check rules`, and unit-tested with `promtool test rules` against series
// for each alert (Debian's prometheus package, promtool 2.42). Each case also has to catch a rule written wrong: the
// rules are mutated one way at a time (the DoNotSchedule filter dropped, the per-workload `max by` dropped, ...) and
// `promtool test rules` must then fail, naming the alert.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { findOnPath, PROMTOOL_HINT, shippedRuleFile, type Rule, type RuleFile } from './promtool.js';

const rulesOf = (file: RuleFile): Rule[] => file.groups.flatMap((g) => g.rules);

/** The annotations Prometheus renders for an alert (the few template forms the rules use). */
function rendered(rule: Rule, labels: Record<string, string>, value: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, text] of Object.entries(rule.annotations ?? {})) {
    out[key] = text
      .replace(/\{\{ \$labels\.([a-z_]+) \}\}/g, (_, name: string) => labels[name] ?? '')
      .replace(/\{\{ \$value \}\}/g, String(value));
  }
  return out;
}

interface Case {
  /** What the case shows, for the reader and the failure message. */
  readonly name: string;
  readonly series: ReadonlyArray<{ series: string; values: string }>;
  readonly checks: ReadonlyArray<{
    at: string;
    alert: string;
    /** Expected firing alerts: their labels (besides alertname and the rule's labels) and the value. */
    firing: ReadonlyArray<{ labels: Record<string, string>; value: number }>;
  }>;
}

const SKEW = 'rebalancer_topology_skew';
const MAX = 'rebalancer_topology_max_skew';
const ACT = 'rebalancer_topology_actionable';
const web = 'namespace="shop",workload="Deployment/web",topology_key="topology.kubernetes.io/zone"';
const webLabels = { namespace: 'shop', workload: 'Deployment/web', topology_key: 'topology.kubernetes.io/zone' };
const hard = (extra = ''): string => `{${web},when_unsatisfiable="DoNotSchedule"${extra}}`;
const soft = `{${web},when_unsatisfiable="ScheduleAnyway"}`;
const LANDINGS = (policy: string, outcome: string): string =>
  `rebalancer_landings_total{policy="${policy}",outcome="${outcome}"}`;
const up = (instance: string, values: string) => ({
  series: `up{job="kube-rebalancer",instance="${instance}"}`,
  values,
});

/** Two replicas, both scraped, leading as given. */
const replicas = (a: 0 | 1, b: 0 | 1) => [
  { series: 'rebalancer_leader{instance="a"}', values: `${a}x30` },
  { series: 'rebalancer_leader{instance="b"}', values: `${b}x30` },
  up('a', '1x30'),
  up('b', '1x30'),
];

const CASES: readonly Case[] = [
  {
    name: 'hard skew fires after its for',
    series: [
      { series: SKEW + hard(), values: '3x40' },
      { series: MAX + hard(), values: '1x40' },
      { series: ACT + hard(), values: '1x40' },
    ],
    checks: [
      { at: '14m', alert: 'RebalancerSkewAboveMax', firing: [] },
      { at: '16m', alert: 'RebalancerSkewAboveMax', firing: [{ labels: webLabels, value: 2 }] },
    ],
  },
  {
    name: 'soft skew never fires',
    series: [
      { series: SKEW + soft, values: '5x60' },
      { series: MAX + soft, values: '1x60' },
      { series: ACT + soft, values: '1x60' },
    ],
    checks: [
      { at: '20m', alert: 'RebalancerSkewAboveMax', firing: [] },
      { at: '59m', alert: 'RebalancerSkewAboveMax', firing: [] },
    ],
  },
  {
    name: 'a repaired skew resolves',
    series: [
      { series: SKEW + hard(), values: '3x20 1x20' },
      { series: MAX + hard(), values: '1x40' },
      { series: ACT + hard(), values: '1x40' },
    ],
    checks: [
      { at: '18m', alert: 'RebalancerSkewAboveMax', firing: [{ labels: webLabels, value: 2 }] },
      { at: '25m', alert: 'RebalancerSkewAboveMax', firing: [] },
    ],
  },
  {
    name: 'two replicas exporting during a leader change give one alert',
    series: ['a', 'b'].flatMap((pod) => [
      { series: SKEW + hard(`,instance="${pod}",pod="${pod}"`), values: '3x40' },
      { series: MAX + hard(`,instance="${pod}",pod="${pod}"`), values: '1x40' },
      { series: ACT + hard(`,instance="${pod}",pod="${pod}"`), values: '1x40' },
    ]),
    checks: [{ at: '20m', alert: 'RebalancerSkewAboveMax', firing: [{ labels: webLabels, value: 2 }] }],
  },
  {
    name: 'DryRun or unrepairable skew (not actionable) does not page',
    series: [
      { series: SKEW + hard(), values: '6x40' },
      { series: MAX + hard(), values: '1x40' },
      { series: ACT + hard(), values: '0x40' },
    ],
    checks: [{ at: '30m', alert: 'RebalancerSkewAboveMax', firing: [] }],
  },
  {
    name: 'no leader',
    series: replicas(0, 0),
    checks: [
      { at: '9m', alert: 'RebalancerNoLeader', firing: [] },
      { at: '11m', alert: 'RebalancerNoLeader', firing: [{ labels: {}, value: 0 }] },
    ],
  },
  {
    name: 'a leader and a follower are fine',
    series: replicas(1, 0),
    checks: [
      { at: '20m', alert: 'RebalancerNoLeader', firing: [] },
      { at: '20m', alert: 'RebalancerAbsent', firing: [] },
    ],
  },
  {
    name: 'absent: nothing scraped at all',
    series: [{ series: 'up{job="something-else"}', values: '1x30' }],
    checks: [
      { at: '9m', alert: 'RebalancerAbsent', firing: [] },
      { at: '11m', alert: 'RebalancerAbsent', firing: [{ labels: {}, value: 1 }] },
    ],
  },
  {
    name: 'absent: the target is there but every scrape fails',
    series: [up('a', '0x30')],
    checks: [{ at: '11m', alert: 'RebalancerAbsent', firing: [{ labels: {}, value: 1 }] }],
  },
  {
    name: 'stale cycles: a policy that failed since it was due, and one that never ran',
    series: [
      // Due at t=1000 s, last success at 500 s: every cycle since failed.
      { series: 'rebalancer_cycle_due_timestamp_seconds{policy="failing"}', values: '1000x60' },
      { series: 'rebalancer_last_successful_cycle_timestamp_seconds{policy="failing"}', values: '500x60' },
      // Due, and no success ever.
      { series: 'rebalancer_cycle_due_timestamp_seconds{policy="never"}', values: '1000x60' },
      // Due and succeeded since: healthy.
      { series: 'rebalancer_cycle_due_timestamp_seconds{policy="fine"}', values: '1000x60' },
      { series: 'rebalancer_last_successful_cycle_timestamp_seconds{policy="fine"}', values: '1010x60' },
    ],
    checks: [
      { at: '29m', alert: 'RebalancerCycleStale', firing: [] },
      {
        at: '31m',
        alert: 'RebalancerCycleStale',
        firing: [
          { labels: { policy: 'failing' }, value: 1000 },
          { labels: { policy: 'never' }, value: 1000 },
        ],
      },
    ],
  },
  {
    name: 'failing evictions',
    series: [
      {
        series: 'rebalancer_evictions_total{policy="zones",strategy="TopologySpread",result="failed"}',
        values: '0+1x60',
      },
      {
        series: 'rebalancer_evictions_total{policy="zones",strategy="TopologySpread",result="evicted"}',
        values: '0+5x60',
      },
      // Evicting without failures: nothing to do.
      {
        series: 'rebalancer_evictions_total{policy="calm",strategy="TopologySpread",result="failed"}',
        values: '0x60',
      },
      {
        series: 'rebalancer_evictions_total{policy="calm",strategy="TopologySpread",result="evicted"}',
        values: '0+2x60',
      },
    ],
    checks: [
      { at: '10m', alert: 'RebalancerEvictionsFailing', firing: [] },
      {
        at: '25m',
        alert: 'RebalancerEvictionsFailing',
        firing: [{ labels: { policy: 'zones', strategy: 'TopologySpread' }, value: 1 / 60 }],
      },
    ],
  },
  {
    name: 'predictions failing: 3 of 8 landings elsewhere fire, 2 misses or a low share do not',
    series: [
      // One landing a minute, from 0: "bad" misses 3 of its 8 (every third lands elsewhere).
      { series: LANDINGS('bad', 'target'), values: '0 1 1 2 2 2 3 3 3 4 4x50' },
      { series: LANDINGS('bad', 'tied'), values: '0 0 1 1 1 2 2 2 2 2 2x50' },
      { series: LANDINGS('bad', 'elsewhere'), values: '0 0 0 0 1 1 1 2 3 3 3x50' },
      // Two misses only.
      { series: LANDINGS('unlucky', 'target'), values: '0 1 1 1 1x55' },
      { series: LANDINGS('unlucky', 'elsewhere'), values: '0 0 1 2 2x55' },
      // Four misses, late, among many landings on target: a share under 3 in 10.
      { series: LANDINGS('large', 'target'), values: '0+1x16 16x45' },
      { series: LANDINGS('large', 'elsewhere'), values: '0x10 1 2 3 4 4x40' },
    ],
    checks: [
      { at: '5m', alert: 'RebalancerPredictionsUnreliable', firing: [] },
      { at: '20m', alert: 'RebalancerPredictionsUnreliable', firing: [{ labels: { policy: 'bad' }, value: 0 }] },
    ],
  },
];

/** The promtool unit-test file for `rules` (the rule file's name relative to it). */
function unitTests(rules: RuleFile, ruleFile: string): unknown {
  const byName = new Map(rulesOf(rules).map((r) => [r.alert, r]));
  return {
    rule_files: [ruleFile],
    evaluation_interval: '1m',
    tests: CASES.map((c) => ({
      name: c.name,
      interval: '1m',
      input_series: c.series,
      alert_rule_test: c.checks.map((check) => {
        // The shipped rule's labels and annotations are what is expected: a mutation changes the firing, not these.
        const shipped = shippedByName.get(check.alert) ?? byName.get(check.alert);
        if (shipped === undefined) throw new Error(`no alert ${check.alert} in the rules`);
        return {
          eval_time: check.at,
          alertname: check.alert,
          exp_alerts: check.firing.map((f) => ({
            exp_labels: { ...shipped.labels, ...f.labels },
            exp_annotations: rendered(shipped, f.labels, f.value),
          })),
        };
      }),
    })),
  };
}

const shippedByName = new Map(rulesOf(shippedRuleFile()).map((r) => [r.alert, r]));

let dir = '';
let promtool: string | undefined;

beforeAll(() => {
  promtool = findOnPath('promtool');
  dir = mkdtempSync(join(tmpdir(), 'promtool-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function requirePromtool(): string {
  if (promtool === undefined) throw new Error(PROMTOOL_HINT);
  return promtool;
}

/** `promtool test rules` on `rules`: exit status and output. */
function testRules(rules: RuleFile, name: string): { status: number; output: string } {
  writeFileSync(join(dir, `${name}.rules.yaml`), stringify(rules));
  writeFileSync(join(dir, `${name}.test.yaml`), stringify(unitTests(rules, `${name}.rules.yaml`)));
  const run = spawnSync(requirePromtool(), ['test', 'rules', `${name}.test.yaml`], { cwd: dir, encoding: 'utf8' });
  return { status: run.status ?? -1, output: `${run.stdout}${run.stderr}` };
}

describe('manifests/prometheusrule.yaml under promtool', () => {
  it('promtool is installed', () => {
    requirePromtool();
  });

  it('passes promtool check rules', () => {
    const file = join(dir, 'check.rules.yaml');
    writeFileSync(file, stringify(shippedRuleFile()));
    const out = execFileSync(requirePromtool(), ['check', 'rules', file], { encoding: 'utf8' });
    expect(out).toContain(`SUCCESS: ${rulesOf(shippedRuleFile()).length} rules found`);
  });

  it('passes promtool test rules: every case above, as Prometheus evaluates it', () => {
    const { status, output } = testRules(shippedRuleFile(), 'shipped');
    expect(output).toContain('SUCCESS');
    expect(status).toBe(0);
  });

  /** A rule written wrong, and the case that must catch it. */
  const MUTATIONS: ReadonlyArray<{ name: string; alert: string; edit: (rule: Rule) => void; caughtBy: string }> = [
    {
      name: 'the DoNotSchedule filter dropped',
      alert: 'RebalancerSkewAboveMax',
      edit: (r) => (r.expr = r.expr.replaceAll('{when_unsatisfiable="DoNotSchedule"}', '')),
      caughtBy: 'soft skew never fires',
    },
    {
      name: 'the per-workload max by dropped',
      alert: 'RebalancerSkewAboveMax',
      edit: (r) => (r.expr = r.expr.replace('max by (namespace, workload, topology_key) (', '(')),
      caughtBy: 'two replicas exporting during a leader change give one alert',
    },
    {
      name: 'the actionable filter dropped',
      alert: 'RebalancerSkewAboveMax',
      edit: (r) => (r.expr = r.expr.replace(/\s+and\s+\(rebalancer_topology_actionable[^)]*\)/, '')),
      caughtBy: 'DryRun or unrepairable skew (not actionable) does not page',
    },
    {
      name: 'a shorter for',
      alert: 'RebalancerSkewAboveMax',
      edit: (r) => (r.for = '5m'),
      caughtBy: 'hard skew fires after its for',
    },
    {
      name: 'a skew remembered for half an hour',
      alert: 'RebalancerSkewAboveMax',
      edit: (r) => (r.expr = `max_over_time((${r.expr.trim()})[30m:1m])`),
      caughtBy: 'a repaired skew resolves',
    },
    {
      name: 'a longer for on no leader',
      alert: 'RebalancerNoLeader',
      edit: (r) => (r.for = '30m'),
      caughtBy: 'no leader',
    },
    {
      name: 'a longer for on absent',
      alert: 'RebalancerAbsent',
      edit: (r) => (r.for = '30m'),
      caughtBy: 'absent: nothing scraped at all',
    },
    {
      name: 'min instead of max over the replicas',
      alert: 'RebalancerNoLeader',
      edit: (r) => (r.expr = r.expr.replace('max(', 'min(')),
      caughtBy: 'a leader and a follower are fine',
    },
    {
      name: 'the failed scrapes not caught (up present is enough)',
      alert: 'RebalancerAbsent',
      edit: (r) => (r.expr = 'absent(up{job=~".*kube-rebalancer.*"})'),
      caughtBy: 'absent: the target is there but every scrape fails',
    },
    {
      name: 'the never-ran branch dropped',
      alert: 'RebalancerCycleStale',
      edit: (r) => (r.expr = r.expr.slice(0, r.expr.lastIndexOf('or')).trim()),
      caughtBy: 'stale cycles: a policy that failed since it was due, and one that never ran',
    },
    {
      name: 'counting every eviction instead of the failed ones',
      alert: 'RebalancerEvictionsFailing',
      edit: (r) => (r.expr = r.expr.replace('{result="failed"}', '')),
      caughtBy: 'failing evictions',
    },
    {
      name: 'the share of misses not required',
      alert: 'RebalancerPredictionsUnreliable',
      edit: (r) => (r.expr = r.expr.slice(0, r.expr.indexOf('and on')).trim()),
      caughtBy: 'predictions failing: 3 of 8 landings elsewhere fire, 2 misses or a low share do not',
    },
  ];

  it('has a mutation for every case', () => {
    expect(CASES.map((c) => c.name).filter((name) => !MUTATIONS.some((m) => m.caughtBy === name))).toEqual([]);
  });

  it.each(MUTATIONS)('a rule with $name fails promtool test rules ($caughtBy)', ({ name, alert, edit, caughtBy }) => {
    const rules = shippedRuleFile();
    const rule = rulesOf(rules).find((r) => r.alert === alert)!;
    const before = JSON.stringify(rule);
    edit(rule);
    expect(JSON.stringify(rule), 'the mutation changed nothing').not.toBe(before);
    const { status, output } = testRules(rules, name.replace(/[^a-z]+/gi, '-'));
    expect(status, output).not.toBe(0);
    expect(output).toContain(`alertname: ${alert}`);
    expect(output).toContain(caughtBy);
  });
});
