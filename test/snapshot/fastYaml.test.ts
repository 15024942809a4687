// The kubectl-YAML fast path: wherever it answers, it answers exactly what js-yaml (core schema) answers; where the
// text leaves its subset it answers nothing and the loader falls back. It must cover what kubectl writes.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseKubectlYaml } from '../../src/snapshot/fastYaml.js';

const slow = (text: string): unknown[] => loadAll(text, undefined, { schema: CORE_SCHEMA });

const key = fc.oneof(
  fc.constantFrom(
    'name',
    'namespace',
    'f:metadata',
    'k:{"type":"Ready"}',
    'kubernetes.io/hostname',
    'true',
    'null',
    '1',
    '0.5',
    '-',
    'a b',
    'x: y',
    '#c',
    "it's",
    '"q"',
    'constructor',
    'toString',
  ),
  fc.string({ maxLength: 12 }),
);
const scalar = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '10.0.0.1',
    '1.19.0',
    '100m',
    '64Gi',
    '2026-11-01T00:00:00Z',
    'true',
    'False',
    'null',
    '~',
    '0x1f',
    '0o17',
    '1e3',
    '.inf',
    '-1',
    '+2',
    '007',
    'a #b',
    'a: b',
    '- x',
    '|',
    '>',
    '{}',
    '[]',
    'line1\nline2',
    'trailing \n',
    '\n',
    'tab\there',
    'é ü 漢字',
    '\u0085',
    'x\\y',
    '"quoted"',
  ),
  fc.string({ maxLength: 30 }),
  fc.string({ minLength: 50, maxLength: 160 }).map((s) => s.replace(/\t/g, ' ')),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('node'), { maxLength: 4 }),
  object: fc.dictionary(key, tie('node'), { maxKeys: 5 }),
})).node;

describe('parseKubectlYaml', () => {
  it('answers what js-yaml answers, for any value written by a YAML emitter in kubectl-like styles', () => {
    let answered = 0;
    let runs = 0;
    fc.assert(
      fc.property(
        fc.array(fc.dictionary(key, value, { minKeys: 1, maxKeys: 5 }), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        fc.constantFrom(0, 40, 80),
        (docs, indentSeq, lineWidth) => {
          const text = docs.map((d) => stringify(d, { indentSeq, lineWidth })).join('---\n');
          const fast = parseKubectlYaml(text);
          runs++;
          if (fast !== undefined) {
            answered++;
            expect(fast).toEqual(slow(text));
          }
        },
      ),
      { numRuns: 400 },
    );
    // The comparison means something only if the fast path answers for a good share of the inputs.
    expect(answered / runs).toBeGreaterThan(0.15);
  });

  it('answers for every Kubernetes-shaped value (names, labels, quantities, numbers, booleans)', () => {
    const word = fc.stringMatching(/^[a-z][a-z0-9./-]{0,20}$/);
    const k8sValue = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, word, fc.integer(), fc.boolean(), tie('array'), tie('object')),
      array: fc.array(tie('node'), { maxLength: 4 }),
      object: fc.dictionary(word, tie('node'), { maxKeys: 5 }),
    })).node;
    fc.assert(
      fc.property(fc.dictionary(word, k8sValue, { minKeys: 1, maxKeys: 6 }), fc.boolean(), (doc, indentSeq) => {
        const text = stringify(doc, { indentSeq, lineWidth: 0 });
        const fast = parseKubectlYaml(text);
        expect(fast).toBeDefined();
        expect(fast).toEqual(slow(text));
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ['a literal block, kept, clipped and stripped', 'a: |\n  x\n   y\n\nb: |-\n  z\nc: |+\n  w\n\n\nd: 1\n'],
    ['a folded plain scalar', 'a: one\n  two\n\n  three\nb: x\n'],
    ['a multi-line double-quoted scalar', 'a: "one \\\n  two\n  three\\n"\nb: "\\u00e9\\x41\\t"\n'],
    ['single quotes', "a: 'it''s'\n'k': v\n"],
    ['comments and blank lines', '# head\na: 1 \n\n  # deep\nb:\n  # before\n  c: 2\n'],
    ['non-indented and indented sequences', 'a:\n- x\n- k: v\n  l: w\n-\n  - deep\nb:\n  - y\n'],
    ['empty collections and nulls', 'a: {}\nb: []\nc:\nd: ~\ne: null\n'],
    ['several documents, empty ones too', '---\n---\na: 1\n---\nb: 2\n---\n'],
    ['typed keys', 'true: a\n1: b\n0.50: c\nnull: d\n'],
  ])('%s: handled, and equal to js-yaml', (_name, text) => {
    const fast = parseKubectlYaml(text);
    expect(fast).toBeDefined();
    expect(fast).toEqual(slow(text));
  });

  it.each([
    ['flow collections with content', 'a: {b: 1}\n'],
    ['anchors and aliases', 'a: &x 1\nb: *x\n'],
    ['tags', 'a: !!str 1\n'],
    ['folded blocks', 'a: >\n  x\n'],
    ['a comment after a value', 'a: 1 # one\n'],
    ['tabs', 'a:\n\tb: 1\n'],
    ['CRLF', 'a: 1\r\nb: 2\r\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
    ['a scalar document', 'just text\n'],
    ['bad indentation', 'a: 1\n  b: 2\n'],
  ])('%s: left to js-yaml', (_name, text) => {
    expect(parseKubectlYaml(text)).toBeUndefined();
  });

  it.each(['test/fixtures/kubectl-get-all.yaml', 'examples/new-taint.yaml'])('covers %s (kubectl output)', (file) => {
    const text = readFileSync(file, 'utf8');
    const fast = parseKubectlYaml(text);
    expect(fast).toBeDefined();
    expect(fast).toEqual(slow(text));
  });
});
