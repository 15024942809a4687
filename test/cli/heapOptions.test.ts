// Which V8 options `run` sets for itself (src/cli/heapOptions.ts): only for `run` and live reads, and never over an option of the
// same family the user gave on the command line or in NODE_OPTIONS. The footprint they buy is measured by the
// benchmarks (bench/RESULTS.md), not here.
import { describe, expect, it } from 'vitest';
import { operatorV8Flags } from '../../src/cli/heapOptions.js';

const BOTH = ['--optimize-for-size', '--semi-space-growth-factor=1'];

describe('operatorV8Flags', () => {
  it.each([
    [['run'], BOTH],
    [['run', '--kubeconfig', '/k', '--leader-elect'], BOTH],
    [['plan', '--snapshot', 'run'], []],
    [['simulate', '--snapshot', 'x.yaml'], []],
    [['plan', '--kubeconfig', '/k'], BOTH],
    [['simulate'], BOTH],
    [['version'], []],
    [['--help'], []],
    [[], []],
  ])('command line %j sets %j', (args, expected) => {
    expect(operatorV8Flags(args, [])).toEqual(expected);
  });

  it.each([
    [['--max-semi-space-size=4'], ['--optimize-for-size']],
    [['--max_semi_space_size=4'], ['--optimize-for-size']],
    [['--min-semi-space-size=2'], ['--optimize-for-size']],
    [['--semi-space-growth-factor=2'], ['--optimize-for-size']],
    [['--no-optimize-for-size'], ['--semi-space-growth-factor=1']],
    [['--optimize_for_size', '--max-semi-space-size=1'], []],
    [['--max-old-space-size=512', '--enable-source-maps'], BOTH],
    [['--max-semi-space-size-typo'], BOTH],
  ])('given Node options %j, run sets %j', (nodeOptions, expected) => {
    expect(operatorV8Flags(['run'], nodeOptions)).toEqual(expected);
  });
});
