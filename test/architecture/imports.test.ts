// Dependencies in src/ point one way: down the layers below. A file may import from its own layer and from the
// layers before it, never from a later one. Every import is read, type-only ones included (a type is a dependency
// too), with TypeScript's own scanner: `import … from`, `import type`, `export … from` and `import()`.
//
//   base        src/errors.ts, src/version.ts, src/clock.ts, src/v8Flags.ts   typed errors with field paths; the
//               version; the clocks; V8 options at run time
//   model       the compact cluster model and the rules of its semantics (selectors, node affinity, taints, pod
//               affinity, spread, budgets, which pods are live); the plan's types (plan.ts) and eviction results
//   snapshot    raw Kubernetes objects → the model (files, and the watch caches' objects)
//   strategies  one folder per strategy and the registry; they reach the layers above only through the contexts
//               they declare (src/strategies/types.ts), which analysis and the planner implement
//   policy      RebalancePolicy: parsing, defaults (spec.strategies composed from the registry), windows
//   metrics     the Prometheus catalogue and its recorder, over the model (the plan's types) and the strategy
//               registry only: whoever records (the operator) imports it, never the other way
//   convert     a descheduler policy → RebalancePolicies
//   analysis    skew and violations of a snapshot under a policy
//   scheduling  the scheduler simulation, in the rooms of kube-scheduler's framework (see below)
//   planner     the planner, its report and `simulate`
//   kube        all Kubernetes API I/O: credentials and kubeconfig, transport, typed calls, the reflector, the Lease
//               elector, the rate limiter and backoff (the one folder that speaks HTTP as a client)
//   serving     HTTPS serving of the operator's endpoints: delegated authentication (TokenReview and
//               SubjectAccessReview, sent through the interface src/kube gives), the certificate (self-signed or
//               a reloaded directory)
//   live        one paged read of a live cluster (the snapshot's other source), over src/kube
//   operator    the control loop: watch caches, policies, cycles, triggers, windows, status, Events, HTTP serving;
//               operator/eviction/ holds the eviction run's parts
//   cli         the command line
//
// Besides, no file imports itself through a circle of imports (within a layer too), only src/kube/ speaks HTTP as a
// client, src/kube imports neither src/metrics nor src/serving (it defines the types they share with it, docs/adr/0013), src/operator/manager.ts imports no file of src/ (docs/adr/0016), and strategy folders are independent of one another: src/strategies/<a>/ never imports src/strategies/<b>/,
// so adding a strategy touches its folder and the registry only.
//
// src/scheduling has rooms of its own (docs/adr/0008): framework/ (the plugin interfaces, the runtime, helpers) knows
// no plugin; plugins/<p>/ holds one plugin (its args, filter, score) and never imports another plugin's folder (only
// plugins/registry.ts gathers them); neither reads the configuration parser (config/, schedulerConfig*.ts) or the
// placement that drives them (placement.ts); state/ (the cluster state's parts) imports nothing of scheduling; and the
// parser reaches the plugins through their args.ts only, so a plugin's arguments are read where they are used.
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Each layer's entries: a folder of src/ or a file at its root. Earlier layers are lower. */
const LAYERS: ReadonlyArray<readonly string[]> = [
  ['errors.ts', 'version.ts', 'clock.ts', 'v8Flags.ts'],
  ['model'],
  ['snapshot'],
  ['strategies'],
  ['policy'],
  ['metrics'],
  ['convert'],
  ['analysis'],
  ['scheduling'],
  ['planner'],
  ['kube'],
  ['serving'],
  ['live'],
  ['operator'],
  ['cli'],
];

/** An import of one src/ file by another, both relative to src/ with forward slashes. */
interface ImportEdge {
  readonly from: string;
  readonly to: string;
}

/** The layer (an index into LAYERS) of a file relative to src/, or undefined when no layer holds it. */
function layerOf(file: string): number | undefined {
  const top = file.split('/')[0]!;
  const index = LAYERS.findIndex((entries) => entries.includes(top));
  return index < 0 ? undefined : index;
}

/** The module specifiers a TypeScript source imports or re-exports, static and dynamic. */
function specifiersOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** The src/ files a file imports: relative specifiers resolved, `.js` read as the `.ts` it is compiled from. */
function importEdges(file: string, text: string): ImportEdge[] {
  return specifiersOf(text)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => ({
      from: file,
      to: posix.normalize(posix.join(posix.dirname(file), spec)).replace(/\.js$/, '.ts'),
    }));
}

/** What is wrong with the edges: an import from a later layer, or between two strategy folders. */
function problemsOf(edges: readonly ImportEdge[]): string[] {
  const problems: string[] = [];
  for (const { from, to } of edges) {
    const [a, b] = [layerOf(from), layerOf(to)];
    if (a === undefined || b === undefined) {
      problems.push(`${from} → ${to}: ${a === undefined ? from : to} is in no layer`);
    } else if (b > a) {
      problems.push(`${from} → ${to}: ${LAYERS[a]!.join(', ')} must not import from ${LAYERS[b]!.join(', ')}`);
    }
    const [fa, fb] = [strategyFolder(from), strategyFolder(to)];
    if (fa !== undefined && fb !== undefined && fa !== fb) {
      problems.push(`${from} → ${to}: strategy folders must not import one another`);
    }
  }
  return problems;
}

/** The import circles of the graph: its strongly connected components with more than one file, or a self-import. */
function circlesOf(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  // Tarjan's algorithm, recursive: the graph has a few hundred files.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const to of next.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file)!, index.get(to)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (next.get(file) ?? []).includes(file)) circles.push(component.sort());
  };
  for (const file of next.keys()) if (!index.has(file)) visit(file);
  return circles;
}

/**
 * Node's client modules and client libraries. A file outside src/kube may serve HTTP (node:http's server side) but
 * never send a request: every API call goes through src/kube, where the fence, limits and timeouts live.
 */
const CLIENT_MODULES = ['node:http2', 'http2', 'undici'];
/** Modules that serve as well as request: importing only their server-side names is not speaking HTTP as a client. */
const DUAL_MODULES = ['node:http', 'http', 'node:https', 'https', 'node:net', 'net', 'node:tls', 'tls'];
const SERVER_NAMES = new Set([
  'createServer',
  'Server',
  'IncomingMessage',
  'ServerResponse',
  'RequestListener',
  'ServerOptions',
  'createSecureContext',
  'SecureContext',
  'isIP',
]);

/** Why a file speaks HTTP as a client: a client module, a client name of node:http, client-node, or fetch. */
function httpClientUses(text: string): string[] {
  const uses: string[] = [];
  if (!/http|net|tls|undici|client-node|fetch/.test(text)) return uses;
  const source = ts.createSourceFile('f.ts', text, ts.ScriptTarget.Latest, false);
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const module = statement.moduleSpecifier.text;
    if (CLIENT_MODULES.includes(module) || module.startsWith('@kubernetes/client-node')) uses.push(module);
    if (DUAL_MODULES.includes(module)) {
      const bindings = statement.importClause?.namedBindings;
      const names =
        bindings !== undefined && ts.isNamedImports(bindings)
          ? bindings.elements.map((e) => (e.propertyName ?? e.name).text)
          : ['*'];
      for (const name of names) if (!SERVER_NAMES.has(name)) uses.push(`${module} ${name}`);
    }
  }
  if (/(^|[^.\w])fetch\(/.test(text)) uses.push('fetch()');
  return uses;
}

/** Folders that must not import others the layers alone would allow (prefixes relative to src/). */
const FENCES: ReadonlyArray<{ readonly room: string; readonly never: readonly string[] }> = [
  { room: 'kube/', never: ['metrics/', 'serving/'] },
  // The operator's manager orders parts it is given and knows none of them (docs/adr/0016): no file of src/.
  { room: 'operator/manager.ts', never: LAYERS.flat() },
];

/** What is wrong with the edges across the fences: a folder importing one it must not. */
function fenceProblems(edges: readonly ImportEdge[]): string[] {
  const problems: string[] = [];
  for (const { from, to } of edges) {
    for (const { room, never } of FENCES) {
      if (from.startsWith(room) && never.some((n) => to.startsWith(n))) {
        problems.push(`${from} → ${to}: ${room} must not import it`);
      }
    }
  }
  return problems;
}

/** The rooms of src/scheduling and what each must not import (prefixes relative to src/). */
const SCHEDULING_ROOMS: ReadonlyArray<{ readonly room: string; readonly never: readonly string[] }> = [
  {
    room: 'scheduling/framework/',
    never: ['scheduling/plugins/', 'scheduling/config/', 'scheduling/placement.ts', 'scheduling/schedulerConfig'],
  },
  {
    room: 'scheduling/plugins/',
    never: ['scheduling/config/', 'scheduling/placement.ts', 'scheduling/schedulerConfig'],
  },
  { room: 'scheduling/state/', never: ['scheduling/'] },
];
const CONFIG_PARSER = ['scheduling/config/', 'scheduling/schedulerConfig'];

function pluginFolder(file: string): string | undefined {
  const parts = file.split('/');
  return parts[0] === 'scheduling' && parts[1] === 'plugins' && parts.length > 3 ? parts[2] : undefined;
}

/** What is wrong with the edges inside src/scheduling: a room importing what it must not, or plugins each other. */
function schedulingProblems(edges: readonly ImportEdge[]): string[] {
  const problems: string[] = [];
  for (const { from, to } of edges) {
    for (const { room, never } of SCHEDULING_ROOMS) {
      if (from.startsWith(room) && !to.startsWith(room) && never.some((n) => to.startsWith(n))) {
        problems.push(`${from} → ${to}: ${room} must not import it`);
      }
    }
    const [pa, pb] = [pluginFolder(from), pluginFolder(to)];
    if (pa !== undefined && pb !== undefined && pa !== pb) {
      problems.push(`${from} → ${to}: plugin folders must not import one another`);
    }
    if (CONFIG_PARSER.some((c) => from.startsWith(c)) && pb !== undefined && !to.endsWith('/args.ts')) {
      problems.push(`${from} → ${to}: the configuration parser reads plugins through their args.ts only`);
    }
  }
  return problems;
}

function strategyFolder(file: string): string | undefined {
  const parts = file.split('/');
  return parts[0] === 'strategies' && parts.length > 2 ? parts[1] : undefined;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles(SRC).map((path) => relative(SRC, path).split(sep).join('/'));
const edges = files.flatMap((file) => importEdges(file, readFileSync(resolve(SRC, file), 'utf8')));

describe('the import graph of src/', () => {
  it('puts every file of src/ in a layer', () => {
    expect(files.filter((file) => layerOf(file) === undefined)).toEqual([]);
  });

  it('resolves every relative import to a file of src/', () => {
    const known = new Set(files);
    expect(edges.filter((e) => !known.has(e.to)).map((e) => `${e.from} → ${e.to}`)).toEqual([]);
  });

  it('has no import from a later layer into an earlier one, and none between strategy folders', () => {
    expect(problemsOf(edges)).toEqual([]);
  });

  it('keeps src/kube free of src/metrics and src/serving', () => {
    expect(fenceProblems(edges)).toEqual([]);
  });

  it('keeps the operator’s manager free of every file of src/ (it is given what it starts)', () => {
    expect(fenceProblems(edges.filter((e) => e.from === 'operator/manager.ts'))).toEqual([]);
    expect(files).toContain('operator/manager.ts');
  });

  it('has no import circle', () => {
    expect(circlesOf(edges)).toEqual([]);
  });

  it('keeps the rooms of src/scheduling: framework, plugins apart, state, and a parser that reads args only', () => {
    expect(schedulingProblems(edges)).toEqual([]);
  });

  it('sends HTTP requests from src/kube only', () => {
    const clients = files
      .filter((file) => !file.startsWith('kube/'))
      .flatMap((file) => httpClientUses(readFileSync(resolve(SRC, file), 'utf8')).map((use) => `${file}: ${use}`));
    expect(clients).toEqual([]);
  });

  it('has imports to check (the scan sees the graph)', () => {
    expect(edges.length).toBeGreaterThan(200);
    expect(edges).toContainEqual({ from: 'planner/plan.ts', to: 'strategies/registry.ts' });
  });
});

describe('the layer check itself', () => {
  it('reads imports, type imports, re-exports and dynamic imports, and ignores packages', () => {
    const text = [
      "import { a } from './a.js';",
      "import type {\n  B,\n  C,\n} from '../model/types.js';",
      "export { d } from './d.js';",
      "export * from './e.js';",
      "const f = await import('../f.js');",
      "import { Gauge } from 'prom-client';",
      "// import { commented } from './nothing.js';",
    ].join('\n');
    expect(importEdges('planner/x.ts', text)).toEqual([
      { from: 'planner/x.ts', to: 'planner/a.ts' },
      { from: 'planner/x.ts', to: 'model/types.ts' },
      { from: 'planner/x.ts', to: 'planner/d.ts' },
      { from: 'planner/x.ts', to: 'planner/e.ts' },
      { from: 'planner/x.ts', to: 'f.ts' },
    ]);
  });

  it.each<{ name: string; edge: ImportEdge; problem: string | undefined }>([
    {
      name: 'the model importing a planner type (upward)',
      edge: { from: 'model/types.ts', to: 'planner/types.ts' },
      problem: 'model/types.ts → planner/types.ts: model must not import from planner',
    },
    {
      name: 'analysis importing a planner type, as it once did (upward)',
      edge: { from: 'analysis/violations.ts', to: 'planner/types.ts' },
      problem: 'analysis/violations.ts → planner/types.ts: analysis must not import from planner',
    },
    {
      name: 'a strategy importing the policy (upward: policy composes the strategies)',
      edge: { from: 'strategies/nodeTaints/strategy.ts', to: 'policy/types.ts' },
      problem: 'strategies/nodeTaints/strategy.ts → policy/types.ts: strategies must not import from policy',
    },
    {
      name: 'a root file importing the model (upward)',
      edge: { from: 'errors.ts', to: 'model/labels.ts' },
      problem: 'errors.ts → model/labels.ts: errors.ts, version.ts, clock.ts, v8Flags.ts must not import from model',
    },
    {
      name: 'one strategy folder importing another',
      edge: { from: 'strategies/podAffinity/strategy.ts', to: 'strategies/podAntiAffinity/strategy.ts' },
      problem:
        'strategies/podAffinity/strategy.ts → strategies/podAntiAffinity/strategy.ts: strategy folders must not import one another',
    },
    {
      name: 'a file outside every layer',
      edge: { from: 'misc/helper.ts', to: 'model/types.ts' },
      problem: 'misc/helper.ts → model/types.ts: misc/helper.ts is in no layer',
    },
    {
      name: 'the planner importing the model (downward)',
      edge: { from: 'planner/plan.ts', to: 'model/pods.ts' },
      problem: undefined,
    },
    {
      name: 'a strategy importing the registry’s shared types',
      edge: { from: 'strategies/nodeTaints/strategy.ts', to: 'strategies/types.ts' },
      problem: undefined,
    },
    { name: 'imports within a layer', edge: { from: 'planner/plan.ts', to: 'planner/budget.ts' }, problem: undefined },
    {
      name: 'the metrics catalogue importing a planner type (upward: metrics is over the model and the policy only)',
      edge: { from: 'metrics/metrics.ts', to: 'planner/report.ts' },
      problem: 'metrics/metrics.ts → planner/report.ts: metrics must not import from planner',
    },
    {
      name: 'the metrics catalogue importing the strategy registry (downward)',
      edge: { from: 'metrics/metrics.ts', to: 'strategies/registry.ts' },
      problem: undefined,
    },
    {
      name: 'src/kube importing the serving it is used by (upward)',
      edge: { from: 'kube/authReviews.ts', to: 'serving/delegatingAuth.ts' },
      problem: 'kube/authReviews.ts → serving/delegatingAuth.ts: kube must not import from serving',
    },
  ])('$name', ({ edge, problem }) => {
    expect(problemsOf([edge])).toEqual(problem === undefined ? [] : [problem]);
  });

  it.each<{ name: string; edge: ImportEdge; problem: string | undefined }>([
    {
      name: 'src/kube importing a metric name',
      edge: { from: 'kube/evictionErrors.ts', to: 'metrics/names.ts' },
      problem: 'kube/evictionErrors.ts → metrics/names.ts: kube/ must not import it',
    },
    {
      name: 'src/kube importing serving',
      edge: { from: 'kube/authReviews.ts', to: 'serving/delegatingAuth.ts' },
      problem: 'kube/authReviews.ts → serving/delegatingAuth.ts: kube/ must not import it',
    },
    {
      name: 'serving importing src/kube',
      edge: { from: 'serving/delegatingAuth.ts', to: 'kube/authReviews.ts' },
      problem: undefined,
    },
    {
      name: 'src/kube importing the model',
      edge: { from: 'kube/evictionErrors.ts', to: 'model/evictionResult.ts' },
      problem: undefined,
    },
    {
      name: 'the manager importing what it starts',
      edge: { from: 'operator/manager.ts', to: 'operator/clusterCache.ts' },
      problem: 'operator/manager.ts → operator/clusterCache.ts: operator/manager.ts must not import it',
    },
    {
      name: 'the manager importing the clock',
      edge: { from: 'operator/manager.ts', to: 'clock.ts' },
      problem: 'operator/manager.ts → clock.ts: operator/manager.ts must not import it',
    },
    {
      name: 'the operator importing the manager',
      edge: { from: 'operator/operator.ts', to: 'operator/manager.ts' },
      problem: undefined,
    },
  ])('fences: $name', ({ edge, problem }) => {
    expect(fenceProblems([edge])).toEqual(problem === undefined ? [] : [problem]);
  });

  it.each<{ name: string; edge: ImportEdge; problem: string | undefined }>([
    {
      name: 'the framework importing a plugin',
      edge: { from: 'scheduling/framework/runtime.ts', to: 'scheduling/plugins/nodePorts/filter.ts' },
      problem:
        'scheduling/framework/runtime.ts → scheduling/plugins/nodePorts/filter.ts: scheduling/framework/ must not import it',
    },
    {
      name: 'a plugin importing the placement that drives it',
      edge: { from: 'scheduling/plugins/nodePorts/filter.ts', to: 'scheduling/placement.ts' },
      problem:
        'scheduling/plugins/nodePorts/filter.ts → scheduling/placement.ts: scheduling/plugins/ must not import it',
    },
    {
      name: 'one plugin folder importing another',
      edge: { from: 'scheduling/plugins/nodePorts/filter.ts', to: 'scheduling/plugins/nodeResources/fit.ts' },
      problem:
        'scheduling/plugins/nodePorts/filter.ts → scheduling/plugins/nodeResources/fit.ts: plugin folders must not import one another',
    },
    {
      name: 'the parser importing a plugin’s score',
      edge: { from: 'scheduling/config/pluginArgs.ts', to: 'scheduling/plugins/nodeResources/fit.ts' },
      problem:
        'scheduling/config/pluginArgs.ts → scheduling/plugins/nodeResources/fit.ts: the configuration parser reads plugins through their args.ts only',
    },
    {
      name: 'the cluster state’s parts importing the profile',
      edge: { from: 'scheduling/state/nodeUsage.ts', to: 'scheduling/profile.ts' },
      problem: 'scheduling/state/nodeUsage.ts → scheduling/profile.ts: scheduling/state/ must not import it',
    },
    {
      name: 'the parser importing a plugin’s args',
      edge: { from: 'scheduling/config/pluginArgs.ts', to: 'scheduling/plugins/nodeResources/args.ts' },
      problem: undefined,
    },
    {
      name: 'the registry gathering plugins',
      edge: { from: 'scheduling/plugins/registry.ts', to: 'scheduling/plugins/nodePorts/filter.ts' },
      problem: undefined,
    },
    {
      name: 'a plugin importing the framework',
      edge: { from: 'scheduling/plugins/nodePorts/filter.ts', to: 'scheduling/framework/interface.ts' },
      problem: undefined,
    },
  ])('scheduling: $name', ({ edge, problem }) => {
    expect(schedulingProblems([edge])).toEqual(problem === undefined ? [] : [problem]);
  });

  it('finds circles, direct and through a third file, and none in a chain', () => {
    const edge = (from: string, to: string): ImportEdge => ({ from, to });
    expect(circlesOf([edge('a.ts', 'b.ts'), edge('b.ts', 'a.ts'), edge('b.ts', 'c.ts')])).toEqual([['a.ts', 'b.ts']]);
    expect(circlesOf([edge('a.ts', 'b.ts'), edge('b.ts', 'c.ts'), edge('c.ts', 'a.ts')])).toEqual([
      ['a.ts', 'b.ts', 'c.ts'],
    ]);
    expect(circlesOf([edge('a.ts', 'a.ts')])).toEqual([['a.ts']]);
    expect(circlesOf([edge('a.ts', 'b.ts'), edge('b.ts', 'c.ts'), edge('a.ts', 'c.ts')])).toEqual([]);
  });

  it('tells an HTTP client from an HTTP server', () => {
    expect(httpClientUses("import { createServer, type Server } from 'node:http';")).toEqual([]);
    expect(httpClientUses("import type { IncomingMessage } from 'node:http';")).toEqual([]);
    expect(httpClientUses("import * as http from 'node:http';")).toEqual(['node:http *']);
    expect(httpClientUses("import { request } from 'node:http';")).toEqual(['node:http request']);
    expect(httpClientUses("import type * as https from 'node:https';")).toEqual(['node:https *']);
    expect(httpClientUses("import { KubeConfig } from '@kubernetes/client-node';")).toEqual([
      '@kubernetes/client-node',
    ]);
    expect(httpClientUses("import { createServer } from 'node:https';")).toEqual([]);
    expect(httpClientUses("import { connect } from 'node:tls';")).toEqual(['node:tls connect']);
    expect(httpClientUses('const r = await fetch(url);')).toEqual(['fetch()']);
    expect(httpClientUses('cache.fetch(key);')).toEqual([]);
  });

  it('names every folder and root file of src/ in exactly one layer', () => {
    const tops = new Set(files.map((file) => file.split('/')[0]!));
    const entries = LAYERS.flat();
    expect(entries.length).toBe(new Set(entries).size);
    expect([...tops].sort()).toEqual([...entries].sort());
  });
});
