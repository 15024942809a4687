// Inputs that are surely mistakes: a snapshot saved without one of the kinds the planner needs (`nodes` left off
// the kubectl command) would otherwise plan nothing, silently. Warnings go to stderr; a snapshot from which
// nothing can be planned at all is bad input.
import { InputError } from '../errors.js';
import type { ClusterSnapshot } from '../model/types.js';

const SHOWN = 3;

/** Warning lines for the snapshot; throws InputError when its pods cannot be planned over at all. */
export function snapshotWarnings(snapshot: ClusterSnapshot, file: string): string[] {
  const { nodes, pods } = snapshot;
  const scheduled = pods.filter((p) => p.nodeName !== undefined);
  if (nodes.length === 0 && pods.length > 0) {
    throw new InputError(
      file,
      undefined,
      undefined,
      `holds ${pods.length} Pod${pods.length === 1 ? '' : 's'} but no Node: nothing can be planned without the ` +
        'nodes (save the cluster with `kubectl get nodes,pods,pdb,priorityclasses,namespaces,rebalancepolicies,' +
        'pv,pvc,storageclasses,csinodes -A -o yaml`)',
    );
  }
  const warnings: string[] = [];
  if (nodes.length > 0 && pods.length === 0) {
    warning(warnings, file, `holds ${nodes.length} Node(s) but no Pod: was \`pods\` left off the kubectl command?`);
  }
  const known = new Set(nodes.map((n) => n.name));
  const missing = new Set<string>();
  let stranded = 0;
  for (const pod of scheduled) {
    if (known.has(pod.nodeName!)) continue;
    stranded++;
    missing.add(pod.nodeName!);
  }
  if (stranded > 0) {
    const names = [...missing].sort();
    const shown = names.slice(0, SHOWN).join(', ') + (names.length > SHOWN ? `, … (${names.length} nodes)` : '');
    warning(
      warnings,
      file,
      `${stranded} Pod(s) run on nodes that are not in the snapshot (${shown}); they are left out of the plan`,
    );
  }
  return warnings;
}

function warning(out: string[], file: string, text: string): void {
  out.push(`warning: ${file}: ${text}`);
}
