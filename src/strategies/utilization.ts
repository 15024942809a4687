// What lowNodeUtilization and highNodeUtilization share, after the descheduler's nodeutilization plugins: resource
// thresholds in percent of allocatable (their policy fields and validation), a node's utilization, and the
// classification of nodes against the thresholds (static, or as deviations around the cluster's mean).
import { labelKeyProblem } from '../model/labels.js';
import { isObj, present, typeName, type Obj } from '../model/rawJson.js';
import type { NodeInfo } from '../model/types.js';
import type { LoadContext, PrometheusSource, SectionReader, UsageSource, Utilization } from './types.js';

/** Percent of allocatable (0–100) per resource name. */
export type ResourcePercents = Readonly<Record<string, number>>;

export type { PrometheusSource, UsageSource };
export const USAGE_SOURCES: readonly UsageSource[] = ['Requests', 'Metrics'];
export const LOW_USAGE_SOURCES: readonly UsageSource[] = ['Requests', 'Metrics', 'Prometheus'];

/**
 * The one resource a Prometheus query measures, named as the descheduler names it: the node's value as a percentage,
 * out of 100 on every node.
 */
export const METRIC_RESOURCE = 'MetricResource';

/** Reads `<path>.prometheus` (url, query, authToken.secretReference.{namespace,name}); {} when absent. */
export function readPrometheusSource(
  r: SectionReader,
  section: Obj | undefined,
  path: string,
): PrometheusSource | undefined {
  const value = section?.['prometheus'];
  if (!present(value)) return undefined;
  const field = `${path}.prometheus`;
  const o = r.objectValue(value, field, ['url', 'query', 'authToken']);
  if (o === undefined) return undefined;
  const url = r.string(o, 'url', field);
  if (url !== undefined && !/^https?:\/\/[^/\s]+/.test(url)) {
    r.fail(`${field}.url`, `must be an http:// or https:// URL of the Prometheus server (got "${url}")`);
  }
  const query = r.string(o, 'query', field);
  if (query !== undefined && query.trim() === '') r.fail(`${field}.query`, 'must not be empty');
  let authToken: PrometheusSource['authToken'];
  const token = o['authToken'];
  if (present(token)) {
    const t = r.objectValue(token, `${field}.authToken`, ['secretReference']);
    const ref = t?.['secretReference'];
    const refField = `${field}.authToken.secretReference`;
    if (t !== undefined && !present(ref)) r.fail(refField, 'is required (the Secret holding the token)');
    const s = present(ref) ? r.objectValue(ref, refField, ['namespace', 'name']) : undefined;
    if (s !== undefined) {
      const namespace = r.string(s, 'namespace', refField);
      const name = r.string(s, 'name', refField);
      if (namespace === undefined || namespace === '') r.fail(`${refField}.namespace`, 'is required');
      if (name === undefined || name === '') r.fail(`${refField}.name`, 'is required');
      if (namespace && name) authToken = { secretReference: { namespace, name } };
    }
  }
  return {
    ...(url !== undefined ? { url } : {}),
    ...(query !== undefined ? { query } : {}),
    ...(authToken !== undefined ? { authToken } : {}),
  };
}

const STANDARD = new Set(['cpu', 'memory', 'pods', 'ephemeral-storage']);

/** Why a thresholds key is not a resource name (cpu, memory, pods, ephemeral-storage, hugepages-*, or domain/name). */
function resourceNameProblem(name: string, metric: boolean): string | undefined {
  if (STANDARD.has(name) || /^hugepages-[0-9A-Za-z.]+$/.test(name)) return undefined;
  if (metric && name === METRIC_RESOURCE) return undefined;
  if (!name.includes('/')) {
    return 'must be cpu, memory, pods, ephemeral-storage or an extended resource (domain/name, e.g. nvidia.com/gpu)';
  }
  const problem = labelKeyProblem(name);
  return problem === undefined ? undefined : problem.replace('label key', 'resource name');
}

/** Reads a thresholds map at `<path>.<key>`: resource names to percentages in [0, 100], at least one. */
export function readThresholds(
  r: SectionReader,
  section: Obj | undefined,
  key: string,
  path: string,
  /** MetricResource is a name here (lowNodeUtilization, whose usage may be Prometheus). */
  metric = false,
): ResourcePercents | undefined {
  const value = section?.[key];
  if (!present(value)) return undefined;
  const field = `${path}.${key}`;
  if (!isObj(value)) return r.fail(field, `must be an object of resource percentages (got ${typeName(value)})`);
  const entries = Object.entries(value);
  if (entries.length === 0) return r.fail(field, 'must name at least one resource');
  const out: Record<string, number> = {};
  let ok = true;
  for (const [name, percent] of entries) {
    const problem = resourceNameProblem(name, metric);
    if (problem !== undefined) {
      ok = r.fail(`${field}.${name}`, problem) ?? false;
    } else if (typeof percent !== 'number' || !Number.isFinite(percent) || percent < 0 || percent > 100) {
      ok = r.fail(`${field}.${name}`, `must be a number from 0 to 100 (got ${typeName(percent)})`) ?? false;
    } else {
      out[name] = percent;
    }
  }
  return ok ? out : undefined;
}

/** The resources of a thresholds map, cpu, memory and pods first, then the others by name. */
export function resourcesOf(thresholds: ResourcePercents): string[] {
  const rank = (n: string): number => {
    const i = ['cpu', 'memory', 'pods', 'ephemeral-storage'].indexOf(n);
    return i < 0 ? 4 : i;
  };
  return Object.keys(thresholds).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The node's allocatable amount of a resource (`pods` included); 0 when it does not offer it. MetricResource is a
 * percentage: 100 on every node, as the descheduler counts it.
 */
export function allocatableOf(node: NodeInfo, resource: string): number {
  if (resource === METRIC_RESOURCE) return 100;
  return node.allocatable[resource] ?? 0;
}

/**
 * A node's utilization of each resource, a share of allocatable. A resource the node does not offer counts as
 * full once anything requests it (nothing more fits there), and as empty otherwise.
 */
export function utilizationOf(
  node: NodeInfo,
  requested: Readonly<Record<string, number>>,
  resources: readonly string[],
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of resources) {
    const used = requested[r] ?? 0;
    const cap = allocatableOf(node, r);
    out[r] = cap > 0 ? used / cap : used > 0 ? 1 : 0;
  }
  return out;
}

/** Each node's utilization of `resources` now, in the plan's state. */
export function usageByNode(
  ctx: Pick<LoadContext, 'requested'>,
  nodes: readonly NodeInfo[],
  resources: readonly string[],
): Map<NodeInfo, Record<string, number>> {
  return new Map(nodes.map((n) => [n, utilizationOf(n, ctx.requested(n), resources)]));
}

/** A node's load as one number to order nodes by: its shares of `resources`, summed. */
export function totalShare(u: Utilization, resources: readonly string[]): number {
  return resources.reduce((s, r) => s + (u[r] ?? 0), 0);
}

/** Thresholds of one node as absolute amounts: what it may have requested before it is above them. */
export function absoluteLimits(node: NodeInfo, percents: ResourcePercents): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [r, p] of Object.entries(percents)) out[r] = (allocatableOf(node, r) * p) / 100;
  return out;
}

/**
 * The low and high thresholds in percent. Static thresholds are used as they are; with deviation thresholds
 * (useDeviationThresholds), the low one is the mean utilization of the nodes minus `low`, the high one the mean
 * plus `high`, each clamped to [0, 100], as the descheduler computes them.
 */
export function effectiveThresholds(
  nodes: readonly NodeInfo[],
  usage: (node: NodeInfo) => Utilization,
  low: ResourcePercents,
  high: ResourcePercents,
  deviation: boolean,
): { low: ResourcePercents; high: ResourcePercents } {
  if (!deviation || nodes.length === 0) return { low, high };
  const mean: Record<string, number> = {};
  for (const node of nodes) {
    const u = usage(node);
    for (const r of Object.keys(low)) mean[r] = (mean[r] ?? 0) + (u[r] ?? 0) * 100;
  }
  const clamp = (x: number): number => Math.min(100, Math.max(0, x));
  const lowOut: Record<string, number> = {};
  const highOut: Record<string, number> = {};
  for (const r of Object.keys(low)) {
    const m = mean[r]! / nodes.length;
    lowOut[r] = clamp(m - low[r]!);
    highOut[r] = clamp(m + (high[r] ?? 0));
  }
  return { low: lowOut, high: highOut };
}

/** At or below the threshold in every resource it names (the descheduler's underutilized test). */
export function atOrBelow(u: Utilization, percents: ResourcePercents): boolean {
  for (const r in percents) if ((u[r] ?? 0) * 100 > percents[r]! + 1e-9) return false;
  return true;
}

/** Above the threshold in any resource it names (the descheduler's overutilized test). */
export function above(u: Utilization, percents: ResourcePercents): boolean {
  return !atOrBelow(u, percents);
}

/**
 * The nodes a utilization strategy classifies: Ready ones (the descheduler is given Ready nodes only). An
 * unschedulable node, or one carrying a lifecycle taint (model/lifecycleTaints.ts), is never underutilized: nothing
 * is to be moved onto it.
 */
export function classifiedNodes(ctx: Pick<LoadContext, 'nodes'>): NodeInfo[] {
  return ctx.nodes.filter((n) => n.ready);
}

/** The amount of each resource a pod adds to a node (`pods`: one). */
export function podAmount(requests: Readonly<Record<string, number>>, resource: string): number {
  return resource === 'pods' ? 1 : (requests[resource] ?? 0);
}

/** Whether the amount `add` fits under the node's absolute limits, given what it has requested. */
export function staysWithin(
  requested: Readonly<Record<string, number>>,
  limits: Readonly<Record<string, number>>,
  add: Readonly<Record<string, number>>,
): boolean {
  for (const r in limits) if ((requested[r] ?? 0) + podAmount(add, r) > limits[r]! + 1e-9) return false;
  return true;
}

/** `12.5%` style text of a share. */
export function percentText(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}

// ---- convert --descheduler-policy ------------------------------------------------------------------------------

/** A descheduler thresholds map, carried over as it is (the policy parser checks it). */
export function copyThresholds(args: Obj, section: Obj, key: string): void {
  const value = args[key];
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) section[key] = { ...value };
}

/**
 * metricsUtilization: metrics-server / KubernetesMetrics is usage: Metrics; a Prometheus query is usage: Prometheus
 * with the query (lowNodeUtilization only, as in the descheduler; the server and token come from the policy's
 * metricsProviders, convert/prometheus.ts).
 */
export function convertUsage(args: Obj, section: Obj, notes: string[], plugin: string, prometheus = false): void {
  const m = args['metricsUtilization'];
  if (typeof m !== 'object' || m === null) return;
  const metrics = m as Obj;
  if (metrics['metricsServer'] === true || metrics['source'] === 'KubernetesMetrics') section['usage'] = 'Metrics';
  else if (metrics['source'] === 'Prometheus' && prometheus) {
    section['usage'] = 'Prometheus';
    const query = isObj(metrics['prometheus']) ? metrics['prometheus']['query'] : undefined;
    section['prometheus'] = query === undefined ? {} : { query };
  } else if (metrics['source'] === 'Prometheus') {
    notes.push(`${plugin}.metricsUtilization: a Prometheus source is read by LowNodeUtilization only`);
  }
}
