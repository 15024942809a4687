// convert's output on a real API server: the descheduler chart's default values and every policy example of its README
// at its newest tag (verbatim copies: test/fixtures/descheduler/chart-v0.36.0, readme-v0.36.0), the fixture with every
// field of the newest v1alpha2, and the older chart and v1alpha1 policies each convert with exit 0 (the CLI reading
// the file, as a user runs it), and every RebalancePolicy printed is accepted by the API server with the CRD installed
// (created with ?dryRun=All&fieldValidation=Strict: schema, CEL rules and unknown fields all checked), read from the
// YAML as kubectl reads it (1.1).
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

  async function convertFile(file: string): Promise<k8s.KubernetesObject[]> {
    let out = '';
    let err = '';
    const code = await main(['convert', '--descheduler-policy', file], {
      stdout: (s) => (out += s),
      stderr: (s) => (err += s),
    });
    expect(code, err).toBe(0);
    return documents(out);
  }

  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.yaml'));

  it.each(files)('%s: exit 0, every policy accepted', async (file) => {
    await accepted(await convertFile(join(FIXTURES, file)));
  });

  it.each(README_EXAMPLES.map((e) => [e.name, e.file] as const))(
    'README %s: exit 0, every policy accepted',
    async (_name, file) => {
      await accepted(await convertFile(file));
    },
  );

  it("the chart's default values, rendered as the chart does: every policy accepted", async () => {
    await accepted(documents(renderConverted(convertDeschedulerPolicy(CHART_DEFAULT, 'p.yaml'), 'p.yaml')));
  });
});
