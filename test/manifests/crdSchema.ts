// The RebalancePolicy CRD as tests read it: its OpenAPI schema, a walk over its nodes, and the conversion of the
// Kubernetes dialect to JSON Schema for ajv. Shared by the CRD's own tests (crd.test.ts) and the test that holds
// the policy parser to the CRD (test/policy/crdMirror.test.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import * as ajvFormats from 'ajv-formats';
import { parse as parseYaml } from 'yaml';

/** Parsed YAML or JSON (what `JSON.parse` returns): read freely here, the assertions check its shape. */
export type Parsed = ReturnType<typeof JSON.parse>;
export type Schema = Record<string, Parsed>;

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CRD_PATH = 'crds/rebalancer.dev_rebalancepolicies.yaml';

export const crdText = readFileSync(join(ROOT, CRD_PATH), 'utf8');
export const crd = parseYaml(crdText);
export const version = crd.spec.versions[0];
export const openApi: Schema = version.schema.openAPIV3Schema;

export interface SchemaNode {
  /** `.spec.strategies.topologySpread.defaultConstraints[*]`: `[*]` for list items, `{*}` for map values. */
  readonly path: string;
  readonly schema: Schema;
  readonly ancestors: readonly Schema[];
}

export function* walk(schema: Schema, path = '', ancestors: readonly Schema[] = []): Generator<SchemaNode> {
  yield { path, schema, ancestors };
  const below = [...ancestors, schema];
  for (const [name, child] of Object.entries<Schema>(schema.properties ?? {}))
    yield* walk(child, `${path}.${name}`, below);
  if (schema.items !== undefined) yield* walk(schema.items, `${path}[*]`, below);
  if (typeof schema.additionalProperties === 'object') yield* walk(schema.additionalProperties, `${path}{*}`, below);
}

/** Every node of the CRD's schema. */
export const nodes = [...walk(openApi)];

export const nodeAt = (path: string): Schema => {
  const found = nodes.find((node) => node.path === path);
  if (found === undefined) throw new Error(`no schema at ${path}`);
  return found.schema;
};

/**
 * Kubernetes' OpenAPI v3 dialect to JSON Schema for ajv: x-kubernetes-* extensions are dropped or translated
 * (set lists become uniqueItems, int-or-string an anyOf, preserve-unknown-fields an open object), and objects with
 * properties are closed, as the API server's strict field validation (kubectl's default) does.
 */
export function toJsonSchema(node: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-')) continue;
    if (key === 'properties') {
      out.properties = Object.fromEntries(Object.entries<Schema>(value).map(([k, v]) => [k, toJsonSchema(v)]));
    } else if (key === 'items' || (key === 'additionalProperties' && typeof value === 'object')) {
      out[key] = toJsonSchema(value);
    } else {
      out[key] = structuredClone(value);
    }
  }
  if (node['x-kubernetes-int-or-string'] === true) out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  if (node['x-kubernetes-list-type'] === 'set') out.uniqueItems = true;
  if (node['x-kubernetes-preserve-unknown-fields'] === true) out.additionalProperties = true;
  else if (node.properties !== undefined && node.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

type FormatsPlugin = (ajv: Ajv) => Ajv;
const addFormats: FormatsPlugin =
  (ajvFormats.default as unknown as { default?: FormatsPlugin }).default ??
  (ajvFormats.default as unknown as FormatsPlugin);

/** An ajv that reports every error and fills in defaults, as the API server's defaulting does. */
export function makeAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true });
  addFormats(ajv);
  return ajv;
}

/** A RebalancePolicy object with this spec. */
export const policyObject = (spec: unknown): unknown => ({
  apiVersion: 'rebalancer.dev/v1alpha1',
  kind: 'RebalancePolicy',
  metadata: { name: 'test' },
  spec,
});
