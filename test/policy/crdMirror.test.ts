// The policy parser is a hand-written mirror of the CRD's schema (docs/adr/0006-policy-parser-mirrors-the-crd.md).
// These tests hold the two together, so neither can gain a field, a default or a rule the other lacks:
// - the strategies: spec.strategies has one section per registered strategy, with the strategy's fields, and the
//   CRD's defaults, read by the parser, are the strategy's defaults;
// - the fields: at every object of the spec, the fields the parser knows are the CRD's properties (the parser
//   names them when it meets an unknown one, so a far-fetched key makes it list them);
// - the defaults: an empty spec defaulted by the CRD and read by the parser is the parser's own default policy;
// - the samples: every sample the CRD accepts, the parser accepts; every one it rejects, the parser rejects at the
//   same field.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { checkPolicy, DEFAULT_POLICY } from '../../src/policy/parse.js';
import { STRATEGIES } from '../../src/strategies/registry.js';
import {
  makeAjv,
  nodeAt,
  nodes,
  openApi,
  policyObject,
  ROOT,
  toJsonSchema,
  type Parsed,
} from '../manifests/crdSchema.js';
import { apiServerField, INVALID_SAMPLES } from '../manifests/invalidSamples.js';

/** Fields the parser knows at a path although the CRD has no such property, and why. */
const PARSER_ONLY: Readonly<Record<string, readonly string[]>> = {
  // Known only to say that a default constraint must not have one (it counts the pod's own workload).
  '.spec.strategies.topologySpread.defaultConstraints[*]': ['labelSelector'],
};

const FAR_FETCHED = 'zzzzzzzzzzzzzzzzzzzzzzzz';

/** A policy object with `{ [FAR_FETCHED]: 1 }` at a schema path (`[*]` is a list of one item). */
function withUnknownFieldAt(path: string): unknown {
  const parts = path.match(/\.[^.[]+|\[\*\]/g) ?? [];
  const build = (i: number): unknown => {
    if (i === parts.length) return { [FAR_FETCHED]: 1 };
    const part = parts[i]!;
    return part === '[*]' ? [build(i + 1)] : { [part.slice(1)]: build(i + 1) };
  };
  const value = build(0) as Record<string, unknown>;
  return { apiVersion: 'rebalancer.dev/v1alpha1', kind: 'RebalancePolicy', metadata: { name: 'test' }, ...value };
}

/** The fields the parser lists as known when it meets the far-fetched key at `path`. */
function parserFieldsAt(path: string): string[] {
  const field = `${path.replace(/\[\*\]/g, '[0]').replace(/^\./, '')}${path === '' ? '' : '.'}${FAR_FETCHED}`;
  const problem = checkPolicy(withUnknownFieldAt(path)).problems.find((p) => p.field === field);
  const known = /^unknown field \(known fields: (.*)\)$/.exec(problem?.problem ?? '');
  if (known === null)
    throw new Error(`${path}: the parser did not name ${field} an unknown field (${problem?.problem})`);
  return known[1]!.split(', ');
}

/** The objects of the schema the parser reads: the root and the spec (metadata and status are the API server's). */
const readObjects = nodes.filter(
  (node) => node.schema.properties !== undefined && (node.path === '' || node.path.startsWith('.spec')),
);

describe('the policy parser and the CRD: strategies', () => {
  it('has one CRD section of spec.strategies per registered strategy', () => {
    expect(Object.keys(nodeAt('.spec.strategies').properties).sort()).toEqual(STRATEGIES.all.map((s) => s.key).sort());
  });

  it.each(STRATEGIES.all.map((s) => [s.key, s] as const))(
    '%s: the CRD section has the fields of the strategy, and its defaults are the strategy defaults',
    (key, strategy) => {
      const section = nodeAt(`.spec.strategies.${key}`);
      expect(Object.keys(section.properties).sort()).toEqual([...strategy.policy.fields].sort());
      const crdDefaults: Record<string, Parsed> = {};
      for (const [field, schema] of Object.entries<Parsed>(section.properties)) {
        expect(schema.default, `${key}.${field} has a default in the CRD`).toBeDefined();
        crdDefaults[field] = schema.default;
      }
      const { policy, problems } = checkPolicy(policyObject({ strategies: { [key]: crdDefaults } }));
      expect(problems).toEqual([]);
      expect(policy!.spec.strategies[key]).toEqual(strategy.policy.defaults);
    },
  );
});

describe('the policy parser and the CRD: fields', () => {
  it('reads at least the root, the spec and every strategy section', () => {
    const paths = readObjects.map((node) => node.path);
    expect(paths).toEqual(expect.arrayContaining(['', '.spec', '.spec.strategies', '.spec.eviction']));
    for (const s of STRATEGIES.all) expect(paths).toContain(`.spec.strategies.${s.key}`);
  });

  it.each(readObjects.map((node) => [node.path || '(root)', node] as const))(
    '%s: the parser knows exactly the CRD properties',
    (_, node) => {
      const crdFields = [...Object.keys(node.schema.properties), ...(PARSER_ONLY[node.path] ?? [])];
      expect(parserFieldsAt(node.path).sort()).toEqual(crdFields.sort());
    },
  );

  it('fails for a field the CRD lacks (the probe sees a difference)', () => {
    expect(parserFieldsAt('.spec.strategies.topologySpread.defaultConstraints[*]')).toContain('labelSelector');
    expect(Object.keys(nodeAt('.spec.strategies.topologySpread.defaultConstraints[*]').properties)).not.toContain(
      'labelSelector',
    );
  });
});

describe('the policy parser and the CRD: defaults', () => {
  it('reads an empty spec the CRD defaulted as its own default policy', () => {
    const object = policyObject({}) as { spec: unknown };
    const validate = makeAjv().compile(toJsonSchema(openApi));
    expect(validate(object), JSON.stringify(validate.errors)).toBe(true);
    const { policy, problems } = checkPolicy(object);
    expect(problems).toEqual([]);
    expect(policy!.spec).toEqual(DEFAULT_POLICY.spec);
  });
});

describe('the policy parser and the CRD: samples', () => {
  const SAMPLES = 'manifests/samples';
  const yamlFiles = (dir: string): string[] => readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.yaml'));
  const read = (dir: string, file: string): Parsed => parseYaml(readFileSync(join(ROOT, dir, file), 'utf8'));

  it.each(yamlFiles(SAMPLES))('%s, which the CRD accepts, is accepted', (file) => {
    expect(checkPolicy(read(SAMPLES, file)).problems).toEqual([]);
  });

  it.each(Object.entries(INVALID_SAMPLES))('%s, which the CRD rejects, is rejected at the same field', (file, why) => {
    const field = apiServerField(why);
    const fields = checkPolicy(read(`${SAMPLES}/invalid`, file)).problems.map((p) => p.field);
    expect(
      fields.some((f) => f === field || f.startsWith(`${field}.`) || f.startsWith(`${field}[`)),
      fields.join(', '),
    ).toBe(true);
  });
});
