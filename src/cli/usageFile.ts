// `plan`/`simulate --usage-file`: the answer of a policy's Prometheus query (usage: Prometheus), saved as Prometheus's
// query API writes it, so a saved or live cluster is planned with the node usage the operator would read. The
// operator queries Prometheus itself each cycle; offline, the server is usually not reachable (an in-cluster
// Service), and a plan must not quietly differ from what the operator would do. So a policy with usage: Prometheus
// and no --usage-file is bad input (exit 2) naming the field and how to save the answer, rather than a plan that
// balances nothing.
import { readFileSync } from 'node:fs';
import { FieldError, InputError } from '../errors.js';
import type { ClusterSnapshot } from '../model/types.js';
import { prometheusSourceOf } from '../planner/utilization.js';
import type { Policy } from '../policy/types.js';
import { nodeValuesFromAnswer } from '../snapshot/prometheusAnswer.js';
import { STRATEGIES } from '../strategies/registry.js';

export const USAGE_FILE_HELP =
  "for a policy with usage: Prometheus, the query's answer (JSON of Prometheus's /api/v1/query; see the README)";

/** The snapshot with the node usage of `file`, when the policy measures by a Prometheus query; see the header. */
export function withPrometheusAnswer(
  snapshot: ClusterSnapshot,
  policy: Policy,
  where: { readonly file: string; readonly object?: string },
  file: string | undefined,
  io: { readonly stderr: (s: string) => void },
): ClusterSnapshot {
  const source = prometheusSourceOf(policy.spec, STRATEGIES);
  if (source === undefined) {
    if (file !== undefined) io.stderr(`warning: --usage-file ${file}: not used (no strategy has usage: Prometheus)\n`);
    return snapshot;
  }
  if (file === undefined) {
    throw new InputError(
      where.file,
      where.object,
      'spec.strategies.lowNodeUtilization.usage',
      'Prometheus is queried by the operator in each cycle; plan and simulate need the answer of the query ' +
        `as --usage-file (curl -s -H "Authorization: Bearer $TOKEN" ${source.url ?? 'URL'}/api/v1/query ` +
        `--data-urlencode 'query=${source.query ?? ''}' > usage.json)`,
    );
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new InputError(file, undefined, undefined, `cannot read: ${(err as Error).message}`);
  }
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch (err) {
    throw new InputError(file, undefined, undefined, `not JSON (${(err as Error).message})`);
  }
  try {
    const values = nodeValuesFromAnswer(answer);
    // Taken as read at the snapshot's instant: every pod of the snapshot is in it.
    return {
      ...snapshot,
      nodeUsage: { available: true, values, readAt: snapshot.now, source: `Prometheus answer in ${file}` },
    };
  } catch (err) {
    if (!(err instanceof FieldError)) throw err;
    throw new InputError(file, 'Prometheus query answer', err.field || undefined, err.problem);
  }
}
