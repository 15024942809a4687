// `-o table`: aligned columns for people. JSON is the stable interface; this is for reading.
import type { NodeReport, PlannedEviction, RebalancePlan, TopologyReport } from '../model/plan.js';
import type { SimulationResult } from '../planner/simulate.js';
import { skipReasonClass } from '../planner/skipReasons.js';

export interface PlanTableOptions {
  /** The policy's mode, shown in the header. */
  readonly mode?: string;
  /** Every skipped pod and every domain, instead of counts, examples and the fullest and emptiest domains. */
  readonly wide?: boolean;
}

/** Domains shown from each end (fullest first, then emptiest) before the rest is summarised. */
const DOMAINS_EACH_END = 3;
/** Example pods shown per skip reason. */
const EXAMPLES = 3;

export function renderTable(rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return '';
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function groupLabel(t: TopologyReport): string {
  return (t.workloads ?? []).join(',') || t.selector;
}

/** `zone-a=6 zone-b=5 … zone-c=1, 40 more`: the fullest and emptiest domains, which are what skew is made of. */
export function domainsText(domains: Readonly<Record<string, number>>, wide = false): string {
  const entries = Object.entries(domains).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const text = (list: readonly (readonly [string, number])[]): string => list.map(([d, n]) => `${d}=${n}`).join(' ');
  if (wide || entries.length <= 2 * DOMAINS_EACH_END + 1) return text(entries);
  const hidden = entries.length - 2 * DOMAINS_EACH_END;
  return `${text(entries.slice(0, DOMAINS_EACH_END))} … ${text(entries.slice(-DOMAINS_EACH_END))}, ${hidden} more`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function planTable(plan: RebalancePlan, opts: PlanTableOptions = {}): string {
  const out: string[] = [];
  const mode = opts.mode !== undefined ? ` (${opts.mode})` : '';
  out.push(`Policy ${plan.policy}${mode}: ${plan.summary.nodes} nodes, ${plan.summary.pods} pods`);
  // A strategy that could not plan is said first: its absence from the evictions is not a clean bill.
  for (const d of plan.degraded ?? []) out.push(`DEGRADED ${d.strategy} (${d.reason}): ${d.message}`);
  out.push('');
  out.push('TOPOLOGY SPREAD');
  if (plan.topology.length === 0) out.push('  (no spread constraints in scope)');
  else {
    out.push(
      renderTable([
        ['NAMESPACE', 'WORKLOAD', 'TOPOLOGY KEY', 'MODE', 'MAX SKEW', 'SKEW', 'AFTER', 'DOMAINS'],
        ...plan.topology.map((t) => [
          t.namespace,
          groupLabel(t),
          t.topologyKey,
          t.whenUnsatisfiable === 'DoNotSchedule' ? 'hard' : 'soft',
          String(t.maxSkew),
          String(t.skew) + (t.skew > t.maxSkew ? '!' : ''),
          String(t.skewAfter) + (t.unrepairable ? ' (unrepairable)' : ''),
          domainsText(t.domains, opts.wide),
        ]),
      ]),
    );
    if (plan.topology.some((t) => t.skew > t.maxSkew)) out.push("  ! skew above the constraint's maxSkew");
  }
  out.push('');
  out.push(`VIOLATIONS (${plan.violations.length})`);
  if (plan.violations.length > 0) {
    out.push(
      renderTable([
        ['STRATEGY', 'POD', 'NODE', 'REASON'],
        ...plan.violations.map((v) => [
          v.strategy + (v.soft ? ' (soft)' : ''),
          `${v.namespace}/${v.name}`,
          v.node,
          v.reason,
        ]),
      ]),
    );
  }
  if (plan.nodes !== undefined) out.push('', ...nodesSection(plan.nodes, opts.wide, plan.nodesMeasuredBy));
  out.push('');
  out.push(`EVICTIONS (${plan.evictions.length})`);
  if (plan.evictions.length > 0) {
    out.push(
      renderTable([
        ['POD', 'NODE', 'TARGET', 'STRATEGY', 'REASON'],
        ...plan.evictions.map((e) => [`${e.namespace}/${e.name}`, e.node, targetText(e), e.strategy, e.reason]),
      ]),
    );
  }
  out.push('');
  out.push(`SKIPPED (${plan.skipped.length})`);
  if (plan.skipped.length > 0) out.push(opts.wide ? skippedWide(plan) : skippedByReason(plan));
  return out.join('\n') + '\n';
}

/** Nodes listed before the rest is summarised (over and under first: they are what a utilization plan acts on). */
const NODES_SHOWN = 20;
const CLASS_ORDER = { over: 0, under: 1, appropriate: 2 } as const;

function percent(share: number | undefined): string {
  return share === undefined ? '-' : `${Math.round(share * 100)}%`;
}

/**
 * NODES: each node's utilization class and its share per resource (requested, or used per metrics.k8s.io), before →
 * after the plan.
 */
function nodesSection(
  nodes: readonly NodeReport[],
  wide = false,
  measuredBy?: 'Requests' | 'Metrics' | 'Prometheus',
): string[] {
  const count = (c: NodeReport['class']): number => nodes.filter((n) => n.class === c).length;
  const by =
    measuredBy === 'Metrics'
      ? ', cpu and memory used per metrics.k8s.io'
      : measuredBy === 'Prometheus'
        ? ', MetricResource per the Prometheus query'
        : '';
  const out = [
    `NODES (${nodes.length}: ${count('over')} over, ${count('under')} under, ${count('appropriate')} appropriate${by})`,
  ];
  const resources = Object.keys(nodes[0]?.utilization ?? {});
  const sorted = [...nodes].sort(
    (a, b) => CLASS_ORDER[a.class] - CLASS_ORDER[b.class] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  const shown = wide ? sorted : sorted.slice(0, NODES_SHOWN);
  out.push(
    renderTable([
      ['NODE', 'CLASS', ...resources.map((r) => r.toUpperCase())],
      ...shown.map((n) => [
        n.name,
        n.class,
        ...resources.map((r) => {
          const before = percent(n.utilization[r]);
          const after = percent(n.utilizationAfter?.[r]);
          return after === before || n.utilizationAfter === undefined ? before : `${before} → ${after}`;
        }),
      ]),
    ]),
  );
  if (shown.length < sorted.length) out.push(`  … ${sorted.length - shown.length} more (-o wide lists them all)`);
  return out;
}

/** The predicted node, with the nodes the scheduler scores equal (it picks one of them at random). */
function targetText(e: PlannedEviction): string {
  if (e.target === undefined) return '-';
  const ties = e.targetTies ?? [];
  return ties.length === 0 ? e.target : `${e.target} (tied: ${ties.join(', ')})`;
}

/** simulate places a replacement on `target`; when the scheduler would pick among tied nodes, it says so. */
function placedAmongTies(e: PlannedEviction): string {
  const ties = e.targetTies ?? [];
  return ties.length === 0 ? '' : ` (placed there; the scheduler may pick ${ties.join(', ')} as well)`;
}

function skippedWide(plan: RebalancePlan): string {
  return renderTable([
    ['POD', 'STRATEGY', 'REASON'],
    ...plan.skipped.map((s) => [`${s.namespace}/${s.name}`, s.strategy, s.reason]),
  ]);
}

/** One row per reason class, most frequent first, with a few example pods (`-o wide` lists them all). */
function skippedByReason(plan: RebalancePlan): string {
  const groups = new Map<string, string[]>();
  for (const s of plan.skipped) {
    const key = skipReasonClass(s.reason);
    let pods = groups.get(key);
    if (pods === undefined) groups.set(key, (pods = []));
    pods.push(`${s.namespace}/${s.name}`);
  }
  const rows = [...groups]
    .sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([reason, pods]) => {
      const more = pods.length > EXAMPLES ? `, ${pods.length - EXAMPLES} more` : '';
      return [String(pods.length), reason, pods.slice(0, EXAMPLES).join(' ') + more];
    });
  return renderTable([['COUNT', 'REASON', 'EXAMPLES'], ...rows]) + '\n  (-o wide lists every pod with its full reason)';
}

export function simulationTable(result: SimulationResult): string {
  const out: string[] = [];
  const first = result.cycles[0];
  const key = (t: TopologyReport): string =>
    `${t.namespace}\u0000${groupLabel(t)}\u0000${t.topologyKey}\u0000${t.maxSkew}`;
  const rows = new Map<string, { t: TopologyReport; skews: string[] }>();
  for (const t of first?.topology ?? []) rows.set(key(t), { t, skews: [String(t.skew)] });
  result.cycles.forEach((plan, i) => {
    for (const t of plan.topology) {
      const row = rows.get(key(t));
      if (row) row.skews[i + 1] = String(t.skewAfter);
    }
  });
  const header = [
    'NAMESPACE',
    'WORKLOAD',
    'TOPOLOGY KEY',
    'MAX SKEW',
    'START',
    ...result.cycles.map((_, i) => `C${i + 1}`),
  ];
  out.push("SKEW PER CYCLE (after each cycle's evictions land)");
  if (rows.size === 0) out.push('  (no spread constraints in scope)');
  else
    out.push(
      renderTable([
        header,
        ...[...rows.values()].map(({ t, skews }) => [
          t.namespace,
          groupLabel(t),
          t.topologyKey,
          String(t.maxSkew),
          ...result.cycles.map((_, i) => skews[i] ?? '-'),
          skews[result.cycles.length] ?? '-',
        ]),
      ]),
    );
  out.push('');
  out.push(
    renderTable([
      ['CYCLE', 'EVICTIONS', 'SKIPPED', 'VIOLATIONS'],
      ...result.cycles.map((p, i) => [
        String(i + 1),
        String(p.summary.evictions),
        String(p.summary.skipped),
        String(p.summary.violations),
      ]),
    ]),
  );
  out.push('');
  result.cycles.forEach((p, i) => {
    for (const e of p.evictions)
      out.push(
        `cycle ${i + 1}: evict ${e.namespace}/${e.name} from ${e.node} → ${e.target ?? '?'}${placedAmongTies(e)} (${e.strategy}: ${e.reason})`,
      );
  });
  const total = result.cycles.reduce((n, p) => n + p.summary.evictions, 0);
  const over = result.final.topology.filter((t) => t.whenUnsatisfiable === 'DoNotSchedule' && t.skew > t.maxSkew);
  const outcome = result.converged
    ? 'converged'
    : result.stalled
      ? 'not converged (nothing more can be planned: see the skipped pods)'
      : 'not converged (raise --cycles)';
  out.push('');
  out.push(
    `${plural(total, 'eviction')} in ${plural(result.cycles.length, 'cycle')}; ${outcome}; ` +
      `${over.length} hard constraints above maxSkew, ${result.final.violations.filter((v) => !v.soft).length} hard violations remaining`,
  );
  return out.join('\n') + '\n';
}
