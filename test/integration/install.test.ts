// The install on a real v1.26 API server: every object of manifests/ is accepted as `kubectl apply -k manifests/`
// would apply it; the CRD is structural and its defaults are the code's defaults (a valid sample read back from the
// server parses to the same policy as the sample itself); every invalid sample is rejected by the API server itself
// (schema or CEL) with the offending field in the message.
import { readdirSync, readFileSync } from 'node:fs';
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { checkPolicy } from '../../src/policy/parse.js';
import { controlPlaneAvailable } from '../controlplane/index.js';
import { apiServerField, INVALID_SAMPLES } from '../manifests/invalidSamples.js';
import { createRaw, installManifests, startCluster, type Cluster } from './cluster.js';

const SAMPLES = new URL('../../manifests/samples/', import.meta.url);
const readSample = (path: string): k8s.KubernetesObject =>
  parseYaml(readFileSync(new URL(path, SAMPLES), 'utf8')) as k8s.KubernetesObject;

describe.skipIf(!controlPlaneAvailable())('installing manifests/ on a real API server', () => {
  let c: Cluster;
  let installed: k8s.KubernetesObject[];

  beforeAll(async () => {
    c = await startCluster({ zones: [] });
    installed = await installManifests(c);
  }, 120_000);

  afterAll(async () => {
    await c?.stop();
  });

  it('applies every object of the kustomization', async () => {
    expect(installed.map((o) => o.kind)).toEqual(
      expect.arrayContaining(['CustomResourceDefinition', 'ClusterRole', 'Role', 'Deployment', 'PrometheusRule']),
    );
    for (const obj of installed) {
      const live = await c.objects.read({
        apiVersion: obj.apiVersion!,
        kind: obj.kind!,
        metadata: { name: obj.metadata!.name!, namespace: obj.metadata?.namespace },
      });
      expect(live.metadata?.uid, `${obj.kind} ${obj.metadata?.name}`).toBeDefined();
    }
  });

  const valid = readdirSync(SAMPLES).filter((f) => f.endsWith('.yaml'));

  it.each(valid)('accepts %s, and the server-side defaults are the code defaults', async (file) => {
    const sample = readSample(file);
    const created = await createRaw(c, sample);
    const ours = checkPolicy(sample);
    const theirs = checkPolicy(created);
    expect(ours.problems).toEqual([]);
    expect(theirs.problems).toEqual([]);
    expect(theirs.policy?.spec).toEqual(ours.policy?.spec);
    await c.objects.delete(created);
    // The server filled in the CRD's defaults (the code applies the same ones itself, as compared above).
    expect((created as { spec?: { schedule?: string } }).spec?.schedule).toBeDefined();
  });

  it.each(Object.entries(INVALID_SAMPLES))('rejects invalid/%s, naming the field', async (file, expected) => {
    const sample = readSample(`invalid/${file}`);
    const answer = await c.objects.create(sample).then(
      () => undefined,
      (err: { code?: number; body?: string }) => err,
    );
    expect(answer, 'the API server accepted it').toBeDefined();
    expect(answer!.code).toBe(422);
    const status = JSON.parse(answer!.body ?? '{}') as {
      message?: string;
      details?: { causes?: { field?: string }[] };
    };
    expect(status.message).toContain(apiServerField(expected));
    expect(status.details?.causes?.map((cause) => cause.field)).toContain(apiServerField(expected));
    if ('cel' in expected) expect(status.message).toContain(expected.cel.slice(expected.cel.indexOf(': ') + 2));
  });
});
