// `-o table`: aligned columns for people. JSON is the stable interface; this is for reading.
import type { RebalancePlan, TopologyReport } from '../planner/types.js';
import type { SimulationResult } from '../planner/simulate.js';

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

function domainsText(t: TopologyReport): string {
  return Object.entries(t.domains)
    .map(([d, n]) => `${d}=${n}`)
    .join(' ');
}

export function planTable(plan: RebalancePlan): string {
  const out: string[] = [];
  out.push(`Policy ${plan.policy}: ${plan.summary.nodes} nodes, ${plan.summary.pods} pods`);
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
          domainsText(t),
        ]),
      ]),
    );
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
  out.push('');
  out.push(`EVICTIONS (${plan.evictions.length})`);
  if (plan.evictions.length > 0) {
    out.push(
      renderTable([
        ['POD', 'NODE', 'TARGET', 'STRATEGY', 'REASON'],
        ...plan.evictions.map((e) => [`${e.namespace}/${e.name}`, e.node, e.target ?? '-', e.strategy, e.reason]),
      ]),
    );
  }
  out.push('');
  out.push(`SKIPPED (${plan.skipped.length})`);
  if (plan.skipped.length > 0) {
    out.push(
      renderTable([
        ['POD', 'STRATEGY', 'REASON'],
        ...plan.skipped.map((s) => [`${s.namespace}/${s.name}`, s.strategy, s.reason]),
      ]),
    );
  }
  return out.join('\n') + '\n';
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
        `cycle ${i + 1}: evict ${e.namespace}/${e.name} from ${e.node} → ${e.target ?? '?'} (${e.strategy}: ${e.reason})`,
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
    `${total} evictions in ${result.cycles.length} cycles; ${outcome}; ` +
      `${over.length} hard constraints above maxSkew, ${result.final.violations.filter((v) => !v.soft).length} hard violations remaining`,
  );
  return out.join('\n') + '\n';
}
