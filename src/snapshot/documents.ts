// A file's text → the documents it holds: reading it (or stdin) with the errors a user can act on, JSON (one or
// several concatenated documents, with the position of a syntax error) and YAML (the fast kubectl reader first, then
// js-yaml, then the `yaml` package only to say where a rejected file went wrong). Apart from load.ts because the
// policy parser, `convert` and the scheduler configuration read files the same way and need nothing of the snapshot.
import { readFileSync, statSync } from 'node:fs';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { parseAllDocuments } from 'yaml';
import { InputError } from '../errors.js';
import { parseKubectlYaml } from './fastYaml.js';
import { checkDepth, checkFileSize, checkTextDepth, checkYamlSize } from './limits.js';

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
