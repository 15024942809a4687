// The converted policies as YAML a user can apply: each document headed by its notes as comments, every string a
// YAML 1.1 reader (kubectl) or 1.2 reader would take for another type quoted.
import { Document, parse, visit } from 'yaml';
import type { ConvertedPolicy } from './types.js';

/** A string YAML would read as something else unquoted (YAML 1.1, as kubectl reads, or 1.2): off, yes, ~, 0755, 1e3, 12:30. */
function readsOtherwise(s: string): boolean {
  for (const version of ['1.1', '1.2'] as const) {
    try {
      if (parse(s, { version }) !== s) return true;
    } catch {
      return true;
    }
  }
  return false;
}

/** One object as YAML, with every string that a YAML 1.1 or 1.2 reader would take for another type quoted. */
export function safeYaml(value: unknown): string {
  const doc = new Document(value, { version: '1.1' });
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && readsOtherwise(node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ lineWidth: 0 });
}

/** The RebalancePolicy object of one converted policy. */
export function policyObject(p: ConvertedPolicy): Record<string, unknown> {
  return { apiVersion: 'rebalancer.dev/v1alpha1', kind: 'RebalancePolicy', metadata: { name: p.name }, spec: p.spec };
}

/** The policies as YAML documents, each headed by its notes as comments. */
export function renderConverted(policies: readonly ConvertedPolicy[], source: string): string {
  return policies
    .map((p) => {
      const header = [
        `# Converted from the descheduler policy ${source} by kube-rebalancer convert.`,
        '# DryRun: it plans and reports, and evicts nothing until you set spec.mode: Evict.',
        ...p.notes.map((n) => `# ${n}`),
      ];
      return `${header.join('\n')}\n${safeYaml(policyObject(p))}`;
    })
    .join('---\n');
}
