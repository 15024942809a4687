// Bounds on what an input file may make the process do. Bad input must end in exit 2 with one paragraph, never in a
// stack overflow (exit 1), an out-of-memory kill or a signal:
// - size: a file is measured before it is read, and the format decides the cap (JSON.parse needs about 5× the text
//   in memory; YAML a little more on kubectl's subset, far more when a general parser has to read it or explain an
//   error), so an oversized snapshot is refused with advice instead of exhausting memory;
// - depth: no Kubernetes object nests anywhere near MAX_DEPTH levels; deeper input is refused before any recursive
//   code (the JSON error locator, the YAML composer, the converters' comparisons) walks it. Both checks are loops.
import { InputError } from '../errors.js';

export const MAX_DEPTH = 256;
/** Largest file read at all. */
export const MAX_INPUT_BYTES = 512 * 1024 * 1024;
/** Largest YAML text parsed (about 100,000 pods as kubectl prints them). */
export const MAX_YAML_BYTES = 128 * 1024 * 1024;

const MiB = 1024 * 1024;
const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;

/** Refuses a file larger than any snapshot this process can hold, before reading it. */
export function checkFileSize(file: string, bytes: number): void {
  if (bytes > MAX_INPUT_BYTES) {
    throw new InputError(
      file,
      undefined,
      undefined,
      `file too large: ${mib(bytes)}, the limit is ${mib(MAX_INPUT_BYTES)} (split it, e.g. one kubectl get per kind)`,
    );
  }
}

/** Refuses YAML text too large to parse within memory (JSON of the same cluster is far cheaper). */
export function checkYamlSize(file: string, chars: number): void {
  if (chars > MAX_YAML_BYTES) {
    throw new InputError(
      file,
      undefined,
      undefined,
      `YAML input too large: ${mib(chars)}, the limit for YAML is ${mib(MAX_YAML_BYTES)}; save the cluster as JSON ` +
        `(kubectl get ... -o json), which may be up to ${mib(MAX_INPUT_BYTES)}`,
    );
  }
}

/**
 * The line of the first `{` or `[` opening nesting level MAX_DEPTH + 1 in JSON or YAML flow text (brackets inside
 * quoted strings do not count), or undefined. YAML block nesting is bounded later, by checkDepth on the values.
 */
export function bracketDepthExceeded(text: string): number | undefined {
  let depth = 0;
  let line = 1;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') line++;
    if (quote !== undefined) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"') quote = '"';
    else if (c === '{' || c === '[') {
      if (++depth > MAX_DEPTH) return line;
    } else if ((c === '}' || c === ']') && depth > 0) depth--;
  }
  return undefined;
}

/** Refuses JSON/YAML-flow text nested deeper than MAX_DEPTH. */
export function checkTextDepth(file: string, text: string): void {
  const line = bracketDepthExceeded(text);
  if (line !== undefined) {
    throw new InputError(file, undefined, undefined, `nested deeper than ${MAX_DEPTH} levels at line ${line}`);
  }
}

/** The path of the first value nested deeper than MAX_DEPTH (iterative), or undefined. */
export function tooDeep(value: unknown): string | undefined {
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value, depth: 0, path: '' }];
  while (stack.length > 0) {
    const top = stack.pop()!;
    if (typeof top.value !== 'object' || top.value === null) continue;
    if (top.depth >= MAX_DEPTH) return top.path;
    if (Array.isArray(top.value)) {
      const list = top.value as unknown[];
      for (let i = 0; i < list.length; i++)
        stack.push({ value: list[i], depth: top.depth + 1, path: `${top.path}[${i}]` });
    } else {
      for (const [key, v] of Object.entries(top.value)) {
        if (typeof v === 'object' && v !== null)
          stack.push({ value: v, depth: top.depth + 1, path: `${top.path}.${key}` });
      }
    }
  }
  return undefined;
}

/** Refuses documents nested deeper than MAX_DEPTH (naming the document and the start of the path). */
export function checkDepth(file: string, documents: readonly unknown[]): void {
  for (let i = 0; i < documents.length; i++) {
    const path = tooDeep(documents[i]);
    if (path !== undefined) {
      const shown = path.length > 120 ? `${path.slice(0, 120)}…` : path;
      throw new InputError(
        file,
        `document ${i + 1}`,
        shown.replace(/^\./, ''),
        `nested deeper than ${MAX_DEPTH} levels`,
      );
    }
  }
}
