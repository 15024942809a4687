// The snapshot loader: a saved cluster (YAML or JSON, as `kubectl get nodes,pods,pdb,priorityclasses,namespaces,
// rebalancepolicies,pv,pvc,storageclasses,csinodes -A -o yaml|json` prints it) → ClusterSnapshot, plus the raw
// RebalancePolicies it holds. Volumes are not kept: each pod carries the topology of the volumes it mounts, and each
// node its CSINode's attach limits.
//
// Accepted layouts: one object, a `kind: List` (or any `*List`) with `items` (nested lists too), several YAML
// documents, or several concatenated JSON documents. NodeMetrics and PodMetrics (metrics.k8s.io) make the usage
// reading `usage: Metrics` plans with. Kinds other than the twelve used are counted and reported in one
// warning line. Every problem with the input surfaces as an InputError naming the file, the object and the field;
// nothing in here lets a stack trace reach the user for bad input.
import { isObj } from '../model/rawJson.js';
import { readFileSync, statSync } from 'node:fs';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { parseAllDocuments } from 'yaml';
import { FieldError, InputError } from '../errors.js';
import { internLabels } from '../model/intern.js';
import type { KubeVersion } from '../model/kubeVersion.js';
import { parseKubectlYaml } from './fastYaml.js';
import type {
  ClusterSnapshot,
  CsiNodeInfo,
  NamespaceInfo,
  NodeInfo,
  PdbInfo,
  PersistentVolumeClaimInfo,
  PersistentVolumeInfo,
  PodInfo,
  PriorityClassInfo,
  StorageClassInfo,
  UsageReading,
} from '../model/types.js';
import { withCsiNodeLimits, withVolumeTopology } from '../model/volumes.js';
import {
  ConversionCache,
  convertCsiNode,
  convertNamespace,
  convertNode,
  convertNodeMetrics,
  convertPodMetrics,
  convertPdb,
  convertPersistentVolume,
  convertPersistentVolumeClaim,
  convertPod,
  convertPriorityClass,
  convertStorageClass,
  describeObject,
  makePriorityResolver,
  usageReading,
  type NodeMetricsInfo,
  type PodMetricsInfo,
} from './convert.js';
import { checkDepth, checkFileSize, checkTextDepth, checkYamlSize } from './limits.js';

export interface LoadOptions {
  /** The instant the snapshot describes (pod ages are measured against it); default: the current time. */
  readonly now?: number;
  /** Receives warning lines (ignored kinds); default: dropped. */
  readonly warn?: (line: string) => void;
  /** Receives what the load is doing now (for a progress line); default: dropped. */
  readonly progress?: (text: string) => void;
  /** The minor whose scheduler the placement follows (default: the newest supported). */
  readonly kubeVersion?: KubeVersion;
}

export interface RawPolicy {
  readonly raw: unknown;
  /** `RebalancePolicy name`, or the document position when it has no name. */
  readonly object: string;
}

export interface LoadResult {
  readonly snapshot: ClusterSnapshot;
  /** RebalancePolicies in file order, unparsed (parsePolicy validates them with this object name). */
  readonly policies: RawPolicy[];
}

/** A top-level or List-contained object, with where it was found. */
export class LocatedObject {
  constructor(
    readonly kind: string,
    readonly raw: Record<string, unknown>,
    /** `document 2` for a top-level object, else the enclosing list's path (`document 2, items`). */
    private readonly prefix: string,
    /** The index in the enclosing list; -1 for a top-level object. */
    private readonly index: number,
  ) {}

  /** `document 2` or `document 2, items[4]` (built only when needed: snapshots hold 100,000s of objects). */
  get where(): string {
    return this.index < 0 ? this.prefix : `${this.prefix}[${this.index}]`;
  }
}

// ---- reading and parsing ---------------------------------------------------------------------------------------

const READ_PROBLEMS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory, not a file',
  ERR_STRING_TOO_LONG: 'file too large to read as one string (split it, e.g. one kubectl get per kind)',
};

/** Reads a file ('-' = stdin) as UTF-8 text; any failure becomes an InputError. */
export function readInputFile(path: string): string {
  if (path !== '-') {
    let size: number | undefined;
    try {
      const stat = statSync(path);
      size = stat.isFile() ? stat.size : undefined;
    } catch {
      size = undefined; // reading reports why
    }
    if (size !== undefined) checkFileSize(path, size);
  }
  try {
    const text = path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const known = typeof code === 'string' ? READ_PROBLEMS[code] : undefined;
    const detail = known ?? (error instanceof Error ? error.message : String(error));
    throw new InputError(path, undefined, undefined, `cannot read file: ${detail}`);
  }
}

function lineColumn(text: string, offset: number): string {
  let line = 1,
    lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}

const JSON_POSITION = /at position (\d+)/;
const TRAILING_JSON = /non-whitespace character after JSON at position (\d+)/;

/**
 * The offset of the first syntax error in `text`, for the messages V8 gives without a position (Node 20's
 * "Unexpected token 'x', ... is not valid JSON"). A plain recursive scan of the JSON grammar; only run on error.
 */
export function jsonErrorOffset(text: string, start = 0): number {
  let i = start;
  const space = (): void => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const literal = (word: string): boolean => {
    if (!text.startsWith(word, i)) return false;
    i += word.length;
    return true;
  };
  const string = (): boolean => {
    i++; // opening quote
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) return (i++, true);
      if (c < 0x20) return false;
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return (i++, false);
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else return (i++, false);
      } else i++;
    }
    return false;
  };
  const number = (): boolean => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (match === null) return false;
    i += match[0].length;
    return true;
  };
  const value = (): boolean => {
    space();
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      space();
      if (text[i] === close) return (i++, true);
      for (;;) {
        if (c === '{') {
          space();
          if (text[i] !== '"' || !string()) return false;
          space();
          if (text[i] !== ':') return false;
          i++;
        }
        if (!value()) return false;
        space();
        if (text[i] === ',') i++;
        else if (text[i] === close) return (i++, true);
        else return false;
      }
    }
    if (c === '"') return string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    return literal('true') || literal('false') || literal('null');
  };
  return value() ? i : Math.min(i, text.length);
}

/** Parses one or more concatenated JSON documents, or says why the text is not JSON (with an offset when known). */
function parseJson(text: string): { values: unknown[] } | { reason: string; offset: number } {
  const values: unknown[] = [];
  let offset = 0;
  for (;;) {
    const rest = offset === 0 ? text : text.slice(offset);
    try {
      values.push(JSON.parse(rest));
      return { values };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const trailing = TRAILING_JSON.exec(message);
      if (trailing !== null) {
        values.push(JSON.parse(rest.slice(0, Number(trailing[1]))));
        offset += Number(trailing[1]);
        continue;
      }
      // V8 quotes (part of) the input in some messages; keep only the reason, on one line.
      const reason = message
        .replace(/ in JSON at position \d+.*$/s, '')
        .replace(/ \(line \d+ column \d+\)$/, '')
        .replace(/, ".*" is not valid JSON$/s, '')
        .replace(/\n/g, '\\n');
      const position = JSON_POSITION.exec(message);
      if (position !== null) return { reason, offset: offset + Number(position[1]) };
      if (message.includes('end of JSON input')) return { reason, offset: text.length };
      return { reason, offset: jsonErrorOffset(text, offset) };
    }
  }
}

/**
 * YAML documents. js-yaml reads them: on a 10,000-pod snapshot it is ~15× faster than the `yaml` package and holds a
 * fraction of its memory (bench/RESULTS.md). Its core schema keeps timestamps as strings, as the API serves them.
 * Only when it rejects the text is the file read again with `yaml`, whose messages say which document failed and
 * where; empty documents stay in the list as null, so document numbers match the file.
 */
function parseYaml(text: string, file: string): unknown[] {
  const fast = parseKubectlYaml(text);
  if (fast !== undefined) return fast;
  try {
    return loadAll(text, undefined, { schema: CORE_SCHEMA, filename: file }).map((doc) => doc ?? null);
  } catch (fast) {
    explainYamlError(text, file);
    // Both parsers disagree on what is valid only in corner cases; js-yaml's own position is then the answer.
    const mark = (fast as { mark?: { line: number; column: number } }).mark;
    const where = mark !== undefined ? ` at line ${mark.line + 1}, column ${mark.column + 1}` : '';
    const reason = (fast as { reason?: string }).reason ?? String(fast);
    throw new InputError(file, undefined, undefined, `invalid YAML${where}: ${reason}`);
  }
}

/** Throws the first problem the `yaml` package finds, naming the document; returns when it finds none. */
function explainYamlError(text: string, file: string): void {
  parseAllDocuments(text, { prettyErrors: true }).forEach((doc, i) => {
    const error = doc.errors[0];
    if (error !== undefined) {
      const pos = error.linePos?.[0];
      const where = pos !== undefined ? ` at line ${pos.line}, column ${pos.col}` : '';
      const message = error.message.split(' at line ')[0]!.split('\n')[0]!;
      // The parser reports its own stack overflow on block nesting thousands of levels deep as a syntax error.
      const reason = message.includes('Maximum call stack') ? 'nested too deeply to read' : message;
      throw new InputError(file, `document ${i + 1}`, undefined, `invalid YAML${where}: ${reason}`);
    }
    try {
      doc.toJS({ maxAliasCount: 1000 });
    } catch (e) {
      throw new InputError(
        file,
        `document ${i + 1}`,
        undefined,
        `invalid YAML: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  });
}

/**
 * The documents of a YAML or JSON text. Text whose first character is `{` or `[` is JSON (one or several
 * concatenated documents; JSON.parse is much faster than a YAML parser for big snapshots, and a JSON syntax error is
 * reported as such rather than re-read as YAML flow style); anything else is YAML, several documents allowed.
 */
export function parseDocuments(text: string, file: string): unknown[] {
  checkFileSize(file, text.length);
  checkTextDepth(file, text);
  const first = /\S/.exec(text)?.[0];
  if (first === '{' || first === '[') {
    const json = parseJson(text);
    if ('values' in json) {
      checkDepth(file, json.values);
      return json.values;
    }
    throw new InputError(
      file,
      undefined,
      undefined,
      `invalid JSON at ${lineColumn(text, json.offset)}: ${json.reason}`,
    );
  }
  checkYamlSize(file, text.length);
  let values: unknown[];
  try {
    values = parseYaml(text, file);
  } catch (error) {
    // Block-style nesting thousands of levels deep overflows the YAML composer's recursion.
    if (error instanceof RangeError) {
      throw new InputError(file, undefined, undefined, 'invalid YAML: nested too deeply to read');
    }
    throw error;
  }
  checkDepth(file, values);
  return values;
}

// ---- flattening ------------------------------------------------------------------------------------------------

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return `a ${typeof value}`;
}

function flattenInto(
  value: unknown,
  prefix: string,
  index: number,
  inheritedKind: string | undefined,
  file: string,
  out: LocatedObject[],
): void {
  const where = index < 0 ? prefix : `${prefix}[${index}]`;
  if (!isObj(value)) {
    throw new InputError(file, where, undefined, `must be a Kubernetes object (got ${describeValue(value)})`);
  }
  const rawKind = value['kind'];
  let kind: string;
  if (typeof rawKind === 'string' && rawKind !== '') kind = rawKind;
  else if (rawKind === undefined && inheritedKind !== undefined) kind = inheritedKind;
  else throw new InputError(file, where, 'kind', 'is required (a Kubernetes object or a List of them)');
  const items = value['items'];
  if (kind === 'List' && !Array.isArray(items)) throw new InputError(file, where, 'items', 'must be a list');
  if (kind.endsWith('List') && Array.isArray(items)) {
    // Items of a typed list (the API's PodList) carry no kind of their own.
    const itemKind = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
    const itemsPrefix = index < 0 ? `${prefix}, items` : `${prefix}[${index}].items`;
    for (let i = 0; i < items.length; i++) flattenInto(items[i], itemsPrefix, i, itemKind, file, out);
    return;
  }
  out.push(new LocatedObject(kind, value, prefix, index));
}

/** Every object in `documents`, Lists expanded; throws InputError for non-objects and missing kinds. */
export function flattenObjects(documents: readonly unknown[], file: string): LocatedObject[] {
  const out: LocatedObject[] = [];
  documents.forEach((doc, i) => {
    // An empty YAML document holds nothing; it is not an error.
    if (doc !== null && doc !== undefined) flattenInto(doc, `document ${i + 1}`, -1, undefined, file, out);
  });
  return out;
}

// ---- building the snapshot -------------------------------------------------------------------------------------

const USED_KINDS = new Set([
  'Node',
  'Pod',
  'PodDisruptionBudget',
  'PriorityClass',
  'Namespace',
  'RebalancePolicy',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'StorageClass',
  'CSINode',
  'NodeMetrics',
  'PodMetrics',
]);

function ignoredWarning(file: string, counts: ReadonlyMap<string, number>): string | undefined {
  if (counts.size === 0) return undefined;
  let total = 0;
  for (const n of counts.values()) total += n;
  const list = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([kind, n]) => `${kind} ×${n}`)
    .join(', ');
  const noun = total === 1 ? 'object of another kind' : 'objects of other kinds';
  return `warning: ${file}: ignored ${total} ${noun} (${list})`;
}

/** Converts each object, wrapping FieldError into InputError with the file and object; rejects duplicates. */
function convertAll<T extends { readonly name: string; readonly namespace?: string }>(
  items: readonly LocatedObject[],
  file: string,
  convert: (raw: unknown) => T,
): T[] {
  const out: T[] = [];
  // namespace ('' when cluster-scoped) → name → where it was first seen
  const seen = new Map<string, Map<string, LocatedObject>>();
  let current: LocatedObject | undefined;
  try {
    for (const item of items) {
      current = item;
      const value = convert(item.raw);
      const ns = value.namespace ?? '';
      let names = seen.get(ns);
      if (names === undefined) seen.set(ns, (names = new Map<string, LocatedObject>()));
      const before = names.get(value.name);
      if (before !== undefined) {
        const object = describeObject(item.kind, item.raw) ?? item.where;
        throw new InputError(file, object, undefined, `appears twice (${before.where} and ${item.where})`);
      }
      names.set(value.name, item);
      out.push(value);
    }
  } catch (error) {
    if (error instanceof FieldError && current !== undefined) {
      // An object without a name is located by its place in the file, and its kind is said too.
      const object = describeObject(current.kind, current.raw) ?? `${current.kind} at ${current.where}`;
      throw new InputError(file, object, error.field === '' ? undefined : error.field, error.problem);
    }
    throw error;
  }
  return out;
}

/**
 * Builds a snapshot from already-parsed documents (each a Kubernetes object or a List). `file` names the source in
 * errors and warnings. PriorityClasses are converted first so pod priorities resolve against all of them.
 */
export function snapshotFromObjects(
  objects: readonly unknown[],
  opts: LoadOptions & { readonly file: string },
): LoadResult {
  const { file } = opts;
  const located = flattenObjects(objects, file);
  opts.progress?.(`${file}: converting ${located.length.toLocaleString('en-US')} objects`);
  if (located.length === 0) throw new InputError(file, undefined, undefined, 'contains no Kubernetes objects');

  const byKind = new Map<string, LocatedObject[]>();
  const ignored = new Map<string, number>();
  for (const item of located) {
    if (!USED_KINDS.has(item.kind)) {
      ignored.set(item.kind, (ignored.get(item.kind) ?? 0) + 1);
      continue;
    }
    let list = byKind.get(item.kind);
    if (list === undefined) byKind.set(item.kind, (list = []));
    list.push(item);
  }
  const of = (kind: string): LocatedObject[] => byKind.get(kind) ?? [];

  const priorityClasses = convertAll<PriorityClassInfo>(of('PriorityClass'), file, convertPriorityClass);
  const resolve = makePriorityResolver(priorityClasses);
  const nodes = withCsiNodeLimits(
    convertAll<NodeInfo>(of('Node'), file, convertNode),
    convertAll<CsiNodeInfo>(of('CSINode'), file, convertCsiNode),
  );
  // One cache for the load: its pods share what their replicas repeat.
  const conversions = new ConversionCache();
  const converted = convertAll<PodInfo>(of('Pod'), file, (raw) => convertPod(raw, conversions, resolve));
  const pods = withVolumeTopology(converted, {
    persistentVolumes: convertAll<PersistentVolumeInfo>(of('PersistentVolume'), file, convertPersistentVolume),
    persistentVolumeClaims: convertAll<PersistentVolumeClaimInfo>(
      of('PersistentVolumeClaim'),
      file,
      convertPersistentVolumeClaim,
    ),
    storageClasses: convertAll<StorageClassInfo>(of('StorageClass'), file, convertStorageClass),
  });
  const pdbs = convertAll<PdbInfo>(of('PodDisruptionBudget'), file, convertPdb);
  const namespaces = convertAll<NamespaceInfo>(of('Namespace'), file, convertNamespace);
  addImpliedNamespaces(namespaces, pods, pdbs);

  const policies = of('RebalancePolicy').map((item) => ({
    raw: item.raw,
    object: describeObject('RebalancePolicy', item.raw) ?? item.where,
  }));

  const warning = ignoredWarning(file, ignored);
  if (warning !== undefined) opts.warn?.(warning);

  const now = opts.now ?? Date.now();
  // NodeMetrics make a metrics.k8s.io reading (usage: Metrics); without them the snapshot has none.
  const nodeMetrics = convertAll<NodeMetricsInfo>(of('NodeMetrics'), file, convertNodeMetrics);
  const podMetrics = convertAll<PodMetricsInfo>(of('PodMetrics'), file, convertPodMetrics);
  let metrics: UsageReading | undefined;
  if (nodeMetrics.length > 0) {
    const where = new Map(pods.map((p) => [`${p.namespace}/${p.name}`, p.nodeName]));
    metrics = usageReading(nodeMetrics, podMetrics, (ns, name) => where.get(`${ns}/${name}`), now);
  } else if (podMetrics.length > 0) {
    opts.warn?.(`warning: ${file}: PodMetrics without NodeMetrics are not used (usage: Metrics needs both)`);
  }

  return {
    snapshot: {
      nodes,
      pods,
      pdbs,
      priorityClasses,
      namespaces,
      now,
      ...(metrics !== undefined ? { metrics } : {}),
      ...(opts.kubeVersion !== undefined ? { kubeVersion: opts.kubeVersion } : {}),
    },
    policies,
  };
}

/**
 * A snapshot without Namespace objects still has the namespaces its pods live in. They are added with the label
 * every namespace carries (kubernetes.io/metadata.name), so pod-affinity namespaceSelectors on that label still work.
 */
export function addImpliedNamespaces(
  namespaces: NamespaceInfo[],
  pods: readonly PodInfo[],
  pdbs: readonly PdbInfo[],
): void {
  const known = new Set(namespaces.map((n) => n.name));
  const add = (name: string): void => {
    if (known.has(name)) return;
    known.add(name);
    namespaces.push({ name, labels: internLabels({ 'kubernetes.io/metadata.name': name }) });
  };
  for (const p of pods) add(p.namespace);
  for (const p of pdbs) add(p.namespace);
}

/** Reads and converts a snapshot file ('-' = stdin). */
export function loadSnapshotFile(path: string, opts: LoadOptions = {}): LoadResult {
  opts.progress?.(`${path}: reading`);
  const text = readInputFile(path);
  opts.progress?.(`${path}: parsing ${(text.length / 2 ** 20).toFixed(1)} MiB`);
  const documents = parseDocuments(text, path);
  return snapshotFromObjects(documents, { ...opts, file: path });
}
