// Prometheus's own tools for the tests: promtool (rule checks and unit tests) and prometheus (the monitoring suite),
// from Debian's prometheus package, and the rule file the PrometheusRule in manifests/ carries.
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { parse } from 'yaml';

const RULES = new URL('../../manifests/prometheusrule.yaml', import.meta.url);
export const PROMTOOL_HINT =
  "promtool not found on the PATH: install Debian's prometheus package (apt-get update && apt-get install -y prometheus; bash .ci/run does this when it runs as root)";

/** `command` on the PATH, or undefined. */
export function findOnPath(command: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

export interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleFile {
  groups: Array<{ name: string; rules: Rule[] }>;
}

/** The rule groups of the PrometheusRule, as a Prometheus rule file. */
export function shippedRuleFile(): RuleFile {
  const rule = parse(readFileSync(RULES, 'utf8')) as { spec: RuleFile };
  return { groups: rule.spec.groups };
}
