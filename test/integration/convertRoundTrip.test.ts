// convert's output on a real API server: the descheduler chart's default values (v0.36), every policy example of its
// README (test/fixtures/descheduler/examples.ts), the fixtures with every field, and the older chart and v1alpha1
// policies each convert with exit 0, and every RebalancePolicy printed is accepted by the API server with the CRD
// installed (created with ?dryRun=All&fieldValidation=Strict: schema, CEL rules and unknown fields all checked), read
// from the YAML as kubectl reads it (1.1).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { main } from '../../src/cli/program.js';
import { convertDeschedulerPolicy, renderConverted } from '../../src/convert/descheduler.js';
import { controlPlaneAvailable } from '../controlplane/index.js';
import { CHART_DEFAULT, README_EXAMPLES } from '../fixtures/descheduler/examples.js';
import {
  collectionPath,
  createRaw,
  manifestObjects,
  repoRoot,
  startCluster,
  waitFor,
  waitForCrd,
  type Cluster,
} from './cluster.js';

type Json = Record<string, unknown>;

const FIXTURES = join(repoRoot(), 'test/fixtures/descheduler');

function documents(text: string): k8s.KubernetesObject[] {
  return parseAllDocuments(text, { version: '1.1' }).map((d) => d.toJS() as k8s.KubernetesObject);
}

describe.skipIf(!controlPlaneAvailable())('convert output on a real API server', () => {
  let c: Cluster;

  beforeAll(async () => {
    c = await startCluster({ zones: [] });
    const crd = manifestObjects().find((o) => o.kind === 'CustomResourceDefinition')!;
    await createRaw(c, crd);
    await waitForCrd(c, crd.metadata!.name!);
  }, 120_000);

  afterAll(async () => {
    await c?.stop();
  });

  async function accepted(policies: readonly k8s.KubernetesObject[]): Promise<void> {
    expect(policies.length).toBeGreaterThan(0);
    for (const policy of policies) {
      const path = await waitFor(() => collectionPath(c, policy), 30_000, 'discovery of RebalancePolicy');
      const answer = await c.cp.request('POST', `${path}?dryRun=All&fieldValidation=Strict`, policy);
      const message = (answer.body as { message?: string }).message;
      expect(answer.status, `${policy.metadata?.name}: ${message}`).toBeLessThan(300);
    }
  }

  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.yaml'));

  it.each(files)('%s: exit 0, every policy accepted', async (file) => {
    let out = '';
    const code = await main(['convert', '--descheduler-policy', join(FIXTURES, file)], {
      stdout: (s) => (out += s),
      stderr: () => undefined,
    });
    expect(code).toBe(0);
    await accepted(documents(out));
  });

  it.each([
    ["the chart's default policy", CHART_DEFAULT] as const,
    ...README_EXAMPLES.map((e) => [`README: ${e.name}`, e.policy] as const),
  ])('%s: every policy accepted', async (_name, policy: Json) => {
    await accepted(documents(renderConverted(convertDeschedulerPolicy(policy, 'p.yaml'), 'p.yaml')));
  });
});
