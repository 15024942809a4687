// Monitoring on the real control plane, with a real Prometheus (Debian's prometheus 2.42) scraping the operator:
// - the operator runs as its own process (`run`, as in its pod: /metrics over HTTPS with a self-signed certificate,
//   the probes on their own port) with the shipped ServiceAccount's token;
// - /metrics answers 401 without a token and 403 to a ServiceAccount without the kube-rebalancer-metrics-reader role;
//   Prometheus, with a ServiceAccount token bound to that role, scrapes it every 2 s (up == 1), verifying the served
//   certificate against itself; the audit log shows the operator's TokenReview and SubjectAccessReview requests;
// - the rule file is the one in manifests/prometheusrule.yaml; a skewed workload shows as rebalancer_topology_skew in
//   Prometheus's query API and goes to 0 once balanced; every Grafana panel query runs and returns data;
// - and what on-call reads is true (`kubectl get rbp` through the API server's Table, the metrics, the log lines):
//   dry runs are not evictions, MAX SKEW is the skew after a balancing run, rebalancer_violations counts hard skew,
//   rebalancer_plan_evictions is what the cycle evicted, the first cycle after start-up emits its Event, an Invalid
//   policy shows in the Status column, and log lines count skips as their text does and carry one `component` key.
// Prometheus is a ManagedProcess in the control plane's folder (prometheusProcess.ts): stopped by its pid in afterAll,
// and by the harness's exit hook and watchdog if the run dies.
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { connect } from 'node:tls';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { stringify } from 'yaml';
import { controlPlaneAvailable } from '../controlplane/index.js';
import type { ManagedProcess } from '../controlplane/processes.js';
import { findOnPath, PROMTOOL_HINT, shippedRuleFile } from '../manifests/promtool.js';
import { sample } from '../e2e/harness.js';
import {
  addZone,
  createDeployment,
  createPolicy,
  ensureNamespace,
  eventsWhen,
  evictionRequests,
  installManifests,
  isDryRun,
  OPERATOR_NAMESPACE,
  OPERATOR_USER,
  patchPolicy,
  policyStatus,
  repoRoot,
  skewOf,
  startCluster,
  waitFor,
  waitForReady,
  zoneCounts,
  type Cluster,
} from './cluster.js';
import { startOperatorProcess, type OperatorProcess } from './operatorProcess.js';
import { startPrometheus } from './prometheusProcess.js';

interface PromAnswer {
  status: string;
  error?: string;
  data: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> };
}

const WEB = { namespace: 'mon', workload: 'Deployment/web', topology_key: 'topology.kubernetes.io/zone' };

describe.skipIf(!controlPlaneAvailable())('monitoring: a real Prometheus scrapes the operator', () => {
  let c: Cluster;
  let op: OperatorProcess;
  let prometheus: ManagedProcess | undefined;
  let promPort = 0;
  let readerToken = '';
  let strangerToken = '';

  async function saToken(namespace: string, name: string): Promise<string> {
    await c.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
    const answer = await c.core.createNamespacedServiceAccountToken({
      namespace,
      name,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    return answer.status!.token;
  }

  /** The certificate the operator serves, as PEM (Prometheus verifies the scrape against it). */
  function servedCertificate(port: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
        const der = socket.getPeerCertificate().raw;
        socket.end();
        const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
        resolve(`-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`);
      });
      socket.on('error', reject);
    });
  }

  async function query(expr: string): Promise<PromAnswer> {
    const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(expr)}`);
    return (await res.json()) as PromAnswer;
  }

  async function value(expr: string): Promise<number | undefined> {
    const answer = await query(expr);
    const first = answer.data?.result?.[0];
    return first === undefined ? undefined : Number(first.value[1]);
  }

  /** `kubectl get rbp` as the API server renders it (server-side Table): column name → cell, per policy. */
  async function getRbp(): Promise<Record<string, Record<string, unknown>>> {
    const opts: Parameters<typeof httpsRequest>[1] = { method: 'GET', headers: {} };
    await c.kc.applyToHTTPSOptions(opts);
    const url = new URL(`${c.kc.getCurrentCluster()!.server}/apis/rebalancer.dev/v1alpha1/rebalancepolicies`);
    opts.headers = { ...opts.headers, Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
    const text = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(url, opts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      });
      req.on('error', reject);
      req.end();
    });
    const table = JSON.parse(text) as {
      columnDefinitions: Array<{ name: string }>;
      rows: Array<{ cells: unknown[] }>;
    };
    const names = table.columnDefinitions.map((col) => col.name);
    const out: Record<string, Record<string, unknown>> = {};
    for (const row of table.rows) {
      const cells = Object.fromEntries(names.map((n, i) => [n, row.cells[i]]));
      out[String(cells['Name'])] = cells;
    }
    return out;
  }

  beforeAll(async () => {
    const prometheusBin = findOnPath('prometheus');
    if (prometheusBin === undefined) throw new Error(PROMTOOL_HINT.replace('promtool not', 'prometheus not'));
    c = await startCluster({ zones: ['zone-a', 'zone-b'], nodesPerZone: 1 });
    await installManifests(c);
    // 6 replicas over two zones (3/3), then an empty third zone: skew 3 above maxSkew 1, repaired by two moves.
    await createDeployment(c, { namespace: 'mon', name: 'web', replicas: 6 });
    await waitForReady(c, 'mon', 'web', 6);
    await addZone(c, 'zone-c', 1);
    // DryRun every 5 s (cycles keep the histogram and rate panels fed); a second policy the CRD accepts and the
    // operator refuses (minute 61).
    await createPolicy(c, 'mon', { mode: 'DryRun', schedule: '*/5 * * * * *', namespaces: { include: ['mon'] } });
    await createPolicy(c, 'broken', { mode: 'DryRun', schedule: '61 * * * *', namespaces: { include: ['none'] } });
    // Nothing to do, every 5 s: only its first cycle records an Event. It classifies nodes by utilization (no node
    // over 100%, so nothing to move) for the dashboard's "Nodes by utilization class" panel.
    await createPolicy(c, 'quiet', {
      mode: 'DryRun',
      schedule: '*/5 * * * * *',
      namespaces: { include: ['none'] },
      strategies: { lowNodeUtilization: { enabled: true, thresholds: { cpu: 1 }, targetThresholds: { cpu: 100 } } },
    });

    await ensureNamespace(c, 'monitoring');
    readerToken = await saToken('monitoring', 'prometheus');
    strangerToken = await saToken('monitoring', 'stranger');
    await c.kc.makeApiClient(k8s.RbacAuthorizationV1Api).createClusterRoleBinding({
      body: {
        metadata: { name: 'prometheus-reads-kube-rebalancer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kube-rebalancer-metrics-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: 'monitoring' }],
      },
    });

    const kubeconfig = await c.cp.serviceAccountKubeconfig(OPERATOR_NAMESPACE, 'kube-rebalancer');
    op = await startOperatorProcess({ dir: c.cp.dir, kubeconfig, identity: 'mon-0', secure: {} });
    await waitFor(async () => (await fetch(`http://127.0.0.1:${op.healthPort}/readyz`)).ok, 60_000, 'readyz');

    const dir = c.cp.dir;
    writeFileSync(join(dir, 'prometheus.token'), readerToken);
    writeFileSync(join(dir, 'operator.crt'), await servedCertificate(op.metricsPort));
    writeFileSync(join(dir, 'rules.yaml'), stringify(shippedRuleFile()));
    writeFileSync(
      join(dir, 'prometheus.yml'),
      stringify({
        global: { scrape_interval: '2s', evaluation_interval: '2s' },
        rule_files: [join(dir, 'rules.yaml')],
        scrape_configs: [
          {
            job_name: 'kube-rebalancer',
            scheme: 'https',
            authorization: { type: 'Bearer', credentials_file: join(dir, 'prometheus.token') },
            tls_config: { ca_file: join(dir, 'operator.crt'), server_name: 'localhost' },
            static_configs: [{ targets: [`127.0.0.1:${op.metricsPort}`] }],
          },
        ],
      }),
    );
    const started = await startPrometheus({
      bin: prometheusBin,
      name: 'prometheus',
      dir,
      args: [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'prometheus-data')}`],
    });
    prometheus = started.proc;
    promPort = started.port;
  }, 180_000);

  afterAll(async () => {
    await prometheus?.stop();
    await op?.proc.stop();
    await c?.stop();
  });

  function dumpOnFailure(): void {
    onTestFailed(() => {
      console.log(`operator log:\n${op.proc.tail(40)}\nprometheus log:\n${prometheus?.tail(20) ?? ''}`);
    });
  }

  it('401 without a token, 403 without the role; Prometheus with the role scrapes every 2 s (up == 1)', async () => {
    dumpOnFailure();
    expect((await op.get('/metrics')).status).toBe(401);
    expect((await op.get('/metrics', 'not-a-token')).status).toBe(401);
    const refused = await op.get('/metrics', strangerToken);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('system:serviceaccount:monitoring:stranger may not get /metrics');
    await waitFor(async () => (await value('up{job="kube-rebalancer"}')) === 1, 30_000, 'up == 1');
    const targets = (await (await fetch(`http://127.0.0.1:${promPort}/api/v1/targets`)).json()) as {
      data: { activeTargets: Array<{ health: string; lastError: string; scrapeInterval: string; scrapeUrl: string }> };
    };
    expect(targets.data.activeTargets).toEqual([
      expect.objectContaining({
        health: 'up',
        lastError: '',
        scrapeInterval: '2s',
        scrapeUrl: expect.stringMatching(/^https:/),
      }),
    ]);
    // Scrapes keep succeeding: several samples of up, all 1.
    await waitFor(async () => (await value('count_over_time(up{job="kube-rebalancer"}[1m])'))! >= 3, 30_000, 'scrapes');
    expect(await value('min_over_time(up{job="kube-rebalancer"}[1m])')).toBe(1);
    // The rule file from the manifests is loaded.
    const rules = (await (await fetch(`http://127.0.0.1:${promPort}/api/v1/rules`)).json()) as {
      data: { groups: Array<{ rules: Array<{ name: string; health: string }> }> };
    };
    const loaded = rules.data.groups.flatMap((g) => g.rules);
    expect(loaded.map((r) => r.name).sort()).toEqual(
      shippedRuleFile()
        .groups.flatMap((g) => g.rules.map((r) => r.alert))
        .sort(),
    );
  }, 90_000);

  it('the audit log shows the operator’s own TokenReview and SubjectAccessReview requests', () => {
    const reviews = c.cp
      .audit()
      .filter((e) => e.user.username === OPERATOR_USER && e.verb === 'create')
      .map((e) => `${e.objectRef?.apiGroup}/${e.objectRef?.resource} ${e.responseStatus?.code}`);
    expect(reviews).toContain('authentication.k8s.io/tokenreviews 201');
    expect(reviews).toContain('authorization.k8s.io/subjectaccessreviews 201');
  });

  it('DryRun: the skew shows through Prometheus, every dashboard panel returns data, and dry runs are not evictions', async () => {
    dumpOnFailure();
    const skewQuery = `rebalancer_topology_skew{namespace="mon",workload="Deployment/web",when_unsatisfiable="DoNotSchedule"}`;
    await waitFor(async () => (await value(skewQuery)) === 3, 60_000, 'skew 3 in Prometheus');
    // Hard skew counts as a TopologySpread violation.
    expect(await value('rebalancer_violations{policy="mon",strategy="TopologySpread"}')).toBe(1);
    // DryRun: the skew is not actionable, so the skew alert is not even pending.
    expect(await value(`rebalancer_topology_actionable{namespace="mon",workload="Deployment/web"}`)).toBe(0);
    expect((await query('ALERTS{alertname="RebalancerSkewAboveMax"}')).data.result).toEqual([]);

    // Every panel query of the Grafana dashboard, with its variables set to All and a 1m rate interval (a few cycles
    // and a dozen scrapes in it).
    await waitFor(async () => (await value('sum(rebalancer_cycles_total{policy="mon"})'))! >= 4, 60_000, 'cycles');
    const dashboard = JSON.parse(
      readFileSync(join(repoRoot(), 'manifests/grafana/kube-rebalancer-dashboard.json'), 'utf8'),
    ) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> };
    const problems: string[] = [];
    let queries = 0;
    for (const panel of dashboard.panels) {
      for (const target of panel.targets ?? []) {
        queries++;
        const expr = target.expr
          .replaceAll('$__rate_interval', '1m')
          .replaceAll('$namespace', '.*')
          .replaceAll('$policy', '.*');
        const answer = await query(expr);
        if (answer.status !== 'success') problems.push(`panel "${panel.title}": ${answer.error ?? answer.status}`);
        else if (answer.data.result.length === 0) problems.push(`panel "${panel.title}" returns nothing: ${expr}`);
        else if (answer.data.result.every((r) => Number.isNaN(Number(r.value[1]))))
          problems.push(`panel "${panel.title}" returns only NaN: ${expr}`);
      }
    }
    expect(queries).toBeGreaterThan(10);
    expect(problems).toEqual([]);

    const status = await policyStatus(c, 'mon');
    const lastPlan = status.lastPlan as Record<string, number>;
    expect(lastPlan['evictions']).toBe(0);
    expect(lastPlan['dryRunEvictions']).toBeGreaterThan(0);
    expect(lastPlan['maxSkewObserved']).toBe(3);
    const table = await getRbp();
    expect(table['mon']).toMatchObject({ Mode: 'DryRun', Status: 'Ready', 'Last Evictions': 0, 'Max Skew': 3 });
    // A schedule the CRD accepted and the operator refused.
    expect(table['broken']).toMatchObject({ Status: 'Invalid' });
    expect(evictionRequests(c.cp).filter((e) => !isDryRun(e))).toEqual([]);

    // The first cycle after start-up emitted its Event.
    const cycles = op.logs().filter((l) => l['policy'] === 'mon' && String(l['msg']).startsWith('cycle finished'));
    expect(cycles.length).toBeGreaterThan(1);
    const firstFinished = Number(cycles[0]!['time']);
    const events = await eventsWhen(c, 'default', 'RebalancePolicy', 'RebalanceCompleted', (e) =>
      e.some((event) => event.involvedObject.name === 'mon'),
    );
    const ours = events.filter((e) => e.involvedObject.name === 'mon');
    expect(ours).toHaveLength(1);
    expect(new Date(ours[0]!.firstTimestamp!).getTime()).toBeLessThanOrEqual(firstFinished + 4_000);
    // A policy with nothing to do: its first cycle says so, once; the quiet cycles after it add nothing.
    const quietCycles = op
      .logs()
      .filter((l) => l['policy'] === 'quiet' && String(l['msg']).startsWith('cycle finished'));
    expect(quietCycles.length).toBeGreaterThan(1);
    const quiet = events.filter((e) => e.involvedObject.name === 'quiet');
    expect(quiet.map((e) => [e.count, e.message])).toEqual([
      [
        1,
        'Run finished: 0 evicted, 0 dry-run, 0 blocked by budgets, 0 failed, 0 gone, 0 skipped; max skew 0 → 0 (1 plan)',
      ],
    ]);
  }, 150_000);

  it('Evict: the skew goes to 0 in Prometheus; LAST EVICTIONS, MAX SKEW and rebalancer_plan_evictions tell what the run did', async () => {
    dumpOnFailure();
    const mark = evictionRequests(c.cp).length;
    // Mode Evict, and no schedule to speak of: the spec change itself starts the cycle, so the figures stay put.
    await patchPolicy(c, 'mon', { spec: { mode: 'Evict', schedule: '0 0 1 1 *', eviction: { maxPerWorkload: 5 } } });
    for (let attempt = 0; skewOf(await zoneCounts(c, 'mon', 'web')) > 0; attempt++) {
      if (attempt > 0) await patchPolicy(c, 'mon', { spec: { eviction: { maxPerWorkload: 5 + attempt } } });
      await waitFor(
        async () => skewOf(await zoneCounts(c, 'mon', 'web')) === 0 || attempt > 3,
        30_000,
        'the zones balanced',
      ).catch(() => undefined);
      if (attempt > 3) break;
    }
    await waitForReady(c, 'mon', 'web', 6);
    expect(await zoneCounts(c, 'mon', 'web')).toEqual({ 'zone-a': 2, 'zone-b': 2, 'zone-c': 2 });
    const real = evictionRequests(c.cp)
      .slice(mark)
      .filter((e) => !isDryRun(e) && e.responseStatus?.code === 201);
    expect(real.length).toBe(2);

    await waitFor(
      async () =>
        (await value(
          `rebalancer_topology_skew{namespace="mon",workload="Deployment/web",when_unsatisfiable="DoNotSchedule"}`,
        )) === 0,
      60_000,
      'skew 0 in Prometheus',
    );
    expect(await value('rebalancer_violations{policy="mon",strategy="TopologySpread"}')).toBe(0);

    // The last cycle's figures agree with one another and with what it did.
    const finished = await waitFor(
      () => {
        const lines = op.logs().filter((l) => l['policy'] === 'mon' && String(l['msg']).startsWith('cycle finished'));
        const last = lines.at(-1);
        return last !== undefined && Number(last['evicted']) > 0 ? lines : undefined;
      },
      30_000,
      'an evicting cycle logged',
    );
    const last = finished.at(-1)!;
    const evictedByCycles = finished.reduce((n, l) => n + Number(l['evicted']), 0);
    expect(evictedByCycles).toBe(real.length);
    const status = await waitFor(
      async () => {
        const s = await policyStatus(c, 'mon');
        return (s.lastPlan as Record<string, number> | undefined)?.['evictions'] === Number(last['evicted'])
          ? s
          : undefined;
      },
      15_000,
      'the status written',
    );
    const lastPlan = status.lastPlan as Record<string, number>;
    expect(lastPlan['maxSkewObserved']).toBe(0);
    expect(lastPlan['maxSkewBefore']).toBe(3);
    expect(lastPlan['dryRunEvictions']).toBe(0);
    const table = await getRbp();
    expect(table['mon']).toMatchObject({ Mode: 'Evict', 'Last Evictions': Number(last['evicted']), 'Max Skew': 0 });
    expect(sample(await op.scrape(readerToken), 'rebalancer_plan_evictions', { policy: 'mon' })).toBe(
      Number(last['evicted']),
    );
    expect(sample(await op.scrape(readerToken), 'rebalancer_topology_skew', WEB)).toBe(0);

    // Log lines: the skipped count is the one the text gives, and no line has two `component` keys.
    for (const line of finished) {
      const text = /, (\d+) skipped/.exec(String(line['msg']));
      expect(text, String(line['msg'])).not.toBeNull();
      expect(Number(line['skipped'])).toBe(Number(text![1]));
    }
    const raw = readFileSync(op.proc.logFile, 'utf8').split('\n');
    expect(raw.filter((l) => (l.match(/"component":/g) ?? []).length > 1)).toEqual([]);
  }, 150_000);
});
