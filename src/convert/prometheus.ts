// The descheduler's Prometheus metrics source, carried to lowNodeUtilization's `usage: Prometheus`: the plugin's
// metricsUtilization (source: Prometheus, prometheus.query) says the strategy reads a query (strategies/utilization.ts
// sets usage and query); the server and its token are the policy's top-level metricsProviders entry with
// source: Prometheus (prometheus.url, prometheus.authToken.secretReference), written into the same section, where a
// RebalancePolicy keeps them. What differs is said: the Secret must be in the operator's namespace (its Role grants
// `get` there only), and without authToken no token is sent (the descheduler sends its service account's).
import { isObj, type Obj } from '../model/rawJson.js';

const SECTION = 'spec.strategies.lowNodeUtilization.prometheus';

const UNREAD = 'not carried over: no LowNodeUtilization reads it (metricsUtilization with source: Prometheus)';

const obj = (v: unknown): Obj => (isObj(v) ? v : {});

export function carryPrometheusProvider(
  top: Obj,
  strategies: Record<string, Obj>,
  notes: string[],
  sources: Map<string, string>,
): void {
  const providers = Array.isArray(top['metricsProviders']) ? (top['metricsProviders'] as unknown[]) : [];
  const index = providers.findIndex((p) => isObj(p) && p['source'] === 'Prometheus');
  const section = strategies['lowNodeUtilization'];
  if (section?.['usage'] !== 'Prometheus') {
    if (index >= 0) {
      notes.push(`metricsProviders[${index}]: ${UNREAD}`);
    }
    return;
  }
  const at = index >= 0 ? `metricsProviders[${index}].prometheus` : 'metricsProviders';
  const provider = index >= 0 ? obj(obj(providers[index])['prometheus']) : {};
  const target = obj(section['prometheus']);
  section['prometheus'] = target;
  // Where a refused or missing value came from: the provider (or its absence), not the plugin.
  sources.set(`${SECTION}.url`, index >= 0 ? `${at}.url` : at);
  if (typeof provider['url'] === 'string') target['url'] = provider['url'];
  const ref = obj(obj(provider['authToken'])['secretReference']);
  if (provider['authToken'] !== undefined && provider['authToken'] !== null) {
    target['authToken'] = { secretReference: { namespace: ref['namespace'], name: ref['name'] } };
    sources.set(`${SECTION}.authToken`, `${at}.authToken`);
    notes.push(
      `${at}.authToken: the Secret (key prometheusAuthToken) must be in kube-rebalancer's namespace, whose Role ` +
        'grants get on Secrets there only; copy it there and name that namespace if it is elsewhere',
    );
  } else if (index >= 0) {
    notes.push(
      `${at}: without authToken the descheduler sends its service account's token; kube-rebalancer sends none ` +
        '(name a Secret in prometheus.authToken if your Prometheus needs a token)',
    );
  }
}

/**
 * The provider is carried where a LowNodeUtilization reads it; a sibling policy of the same DeschedulerPolicy (another
 * scope or profile) that does not read it has nothing to say about it, so its "not carried over" note is dropped.
 */
export function dropUnreadProviderNotes(policies: readonly { spec: Obj; notes: string[] }[]): void {
  const read = policies.some((p) => obj(obj(p.spec['strategies'])['lowNodeUtilization'])['usage'] === 'Prometheus');
  if (!read) return;
  for (const p of policies) {
    const kept = p.notes.filter((n) => !(n.startsWith('metricsProviders[') && n.endsWith(UNREAD)));
    p.notes.splice(0, p.notes.length, ...kept);
  }
}
