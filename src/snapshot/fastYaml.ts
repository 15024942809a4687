// A fast path for the YAML that `kubectl get -o yaml` writes: block mappings and sequences (indented or not), plain,
// quoted and literal scalars, `{}` and `[]`. It reads a 10,000-pod snapshot several times faster than a general YAML
// parser because it works line by line and never builds a document tree.
//
// It is only a fast path: anything outside that subset (flow collections with content, anchors, aliases, tags,
// folded scalars, comments after a value, tabs, CRLF, duplicate keys…) makes it give up, and the caller parses the
// whole text with js-yaml, which also reports any error. Scalars that could be numbers, booleans or null are
// resolved by js-yaml itself (cached per distinct text), so both paths give the same values by construction.
import { CORE_SCHEMA, load } from 'js-yaml';

/** Thrown inside the parser when the text leaves the subset; never escapes parseKubectlYaml. */
class Unsupported extends Error {}

const unsupported = (): never => {
  throw new Unsupported();
};

/** Plain scalars that may resolve to something other than a string (null, a boolean, a number) in the core schema. */
const MAYBE_TYPED = /^(?:[-+.0-9~]|(?:null|Null|NULL|true|True|TRUE|false|False|FALSE)$)/;
/** What cannot start a plain scalar (or key) in the subset: `-`, `?`, `:` only when a space or the end follows. */
const INDICATOR = /^(?:[-?:](?: |$)|[,[\]{}#&*!|>'"%@`])/;

export function parseKubectlYaml(text: string): unknown[] | undefined {
  try {
    return new FastParser(text).documents();
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
}

class FastParser {
  /** Per line: where it starts, its indentation, where its text ends without and with trailing spaces. */
  private readonly starts: Int32Array;
  private readonly indents: Int32Array;
  private readonly ends: Int32Array;
  private readonly rawEnds: Int32Array;
  private readonly count: number;
  private i = 0;
  private readonly resolved = new Map<string, unknown>();

  constructor(private readonly src: string) {
    if (src.includes('\r') || src.includes('\t')) unsupported();
    let count = 1;
    for (let at = src.indexOf('\n'); at !== -1; at = src.indexOf('\n', at + 1)) count++;
    this.count = count;
    this.starts = new Int32Array(count);
    this.indents = new Int32Array(count);
    this.ends = new Int32Array(count);
    this.rawEnds = new Int32Array(count);
    let start = 0;
    for (let n = 0; n < count; n++) {
      let rawEnd = src.indexOf('\n', start);
      if (rawEnd === -1) rawEnd = src.length;
      let content = start;
      while (content < rawEnd && src.charCodeAt(content) === 0x20) content++;
      let end = rawEnd;
      while (end > content && src.charCodeAt(end - 1) === 0x20) end--;
      this.starts[n] = start;
      this.indents[n] = content - start;
      this.ends[n] = end;
      this.rawEnds[n] = rawEnd;
      start = rawEnd + 1;
    }
  }

  // ---- line access without building strings -------------------------------------------------------------------

  private has(n: number): boolean {
    return n < this.count;
  }

  private indent(n: number): number {
    return this.indents[n]!;
  }

  private from(n: number): number {
    return this.starts[n]! + this.indents[n]!;
  }

  private empty(n: number): boolean {
    return this.from(n) === this.ends[n]!;
  }

  private charAt(n: number, k: number): number {
    const at = this.from(n) + k;
    return at < this.ends[n]! ? this.src.charCodeAt(at) : -1;
  }

  private text(n: number): string {
    return this.src.slice(this.from(n), this.ends[n]);
  }

  private raw(n: number): string {
    return this.src.slice(this.from(n), this.rawEnds[n]);
  }

  /** An empty line or a comment line. */
  private blank(n: number): boolean {
    return this.empty(n) || this.charAt(n, 0) === 0x23;
  }

  /** `-` alone or `- …`. */
  private item(n: number): boolean {
    if (this.charAt(n, 0) !== 0x2d) return false;
    const next = this.charAt(n, 1);
    return next === -1 || next === 0x20;
  }

  /** `---` or `...` at column 0 (with anything after `--- `, which the subset does not allow). */
  private marker(n: number): boolean {
    if (this.indent(n) !== 0) return false;
    const t = this.src.slice(this.from(n), Math.min(this.ends[n]!, this.from(n) + 4));
    return t === '---' || t === '--- ' || t === '...';
  }

  // ---- structure -----------------------------------------------------------------------------------------------

  documents(): unknown[] {
    const docs: unknown[] = [];
    let started = false;
    for (;;) {
      this.skipBlank();
      const n = this.i;
      if (!this.has(n)) break;
      if (this.marker(n)) {
        if (this.text(n) !== '---') unsupported();
        if (started) docs.push(null);
        started = true;
        this.i++;
        continue;
      }
      if (this.indent(n) !== 0 || this.charAt(n, 0) === 0x25 /* % directive */) unsupported();
      docs.push(this.block(0));
      started = false;
      this.skipBlank();
      if (this.has(this.i) && !(this.marker(this.i) && this.text(this.i) === '---')) unsupported();
    }
    if (started) docs.push(null);
    return docs;
  }

  private skipBlank(): void {
    while (this.has(this.i) && this.blank(this.i)) this.i++;
  }

  /** The block node whose first line is the current one, at `indent`. */
  private block(indent: number): unknown {
    return this.item(this.i) ? this.sequence(indent) : this.mapping(indent);
  }

  private sequence(indent: number): unknown[] {
    const out: unknown[] = [];
    for (;;) {
      this.skipBlank();
      const n = this.i;
      if (!this.has(n) || this.indent(n) < indent || this.marker(n)) return out;
      if (this.indent(n) > indent) unsupported();
      // A mapping key at the same indentation ends a non-indented sequence (`key:\n- a\nnext: b`).
      if (!this.item(n)) return out;
      let k = 1;
      while (this.charAt(n, k) === 0x20) k++;
      if (this.charAt(n, k) === -1) {
        this.i++;
        out.push(this.nested(indent, false));
        continue;
      }
      const restIndent = indent + k;
      const rest = this.src.slice(this.from(n) + k, this.ends[n]);
      if (rest === '-' || rest.startsWith('- ')) {
        // `- - a`: a sequence whose first item shares the dash's line.
        this.indents[n] = restIndent;
        out.push(this.sequence(restIndent));
      } else if (keyEnd(rest) >= 0) {
        // `- key: value`: a mapping whose first line shares the dash's line; read it as if on its own line.
        this.indents[n] = restIndent;
        out.push(this.mapping(restIndent));
      } else {
        this.i++;
        out.push(this.inlineValue(rest, indent));
      }
    }
  }

  private mapping(indent: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (;;) {
      this.skipBlank();
      const n = this.i;
      if (!this.has(n) || this.indent(n) < indent || this.marker(n)) return out;
      if (this.indent(n) > indent) unsupported();
      if (this.item(n)) return out; // a non-indented sequence ends here; the caller decides
      const from = this.from(n);
      const lineEnd = this.ends[n]!;
      const src = this.src;
      let key: string;
      let valueAt: number;
      const first = src.charCodeAt(from);
      if (first === 0x22 || first === 0x27) {
        const text = this.text(n);
        const end = keyEnd(text);
        if (end < 0) unsupported();
        key = this.key(text.slice(0, end));
        valueAt = from + end + 1;
      } else {
        // Plain keys end at the first `: ` (kubectl quotes any key that holds one), or at a final `:`.
        let colon = src.indexOf(': ', from);
        if (colon === -1 || colon >= lineEnd) colon = src.charCodeAt(lineEnd - 1) === 0x3a ? lineEnd - 1 : -1;
        if (colon <= from) unsupported();
        key = this.key(src.slice(from, colon));
        valueAt = colon + 1;
      }
      if (key === '__proto__' || Object.prototype.hasOwnProperty.call(out, key)) unsupported();
      while (valueAt < lineEnd && src.charCodeAt(valueAt) === 0x20) valueAt++;
      this.i++;
      out[key] = valueAt >= lineEnd ? this.nested(indent, true) : this.inlineValue(src.slice(valueAt, lineEnd), indent);
    }
  }

  /** The value of `key:` or `-` with nothing after it: a deeper block, a same-level sequence (for a key), or null. */
  private nested(parentIndent: number, forKey: boolean): unknown {
    this.skipBlank();
    const n = this.i;
    if (!this.has(n) || this.marker(n)) return null;
    if (this.indent(n) > parentIndent) return this.block(this.indent(n));
    if (forKey && this.indent(n) === parentIndent && this.item(n)) return this.sequence(parentIndent);
    return null;
  }

  private key(raw: string): string {
    const c = raw.charCodeAt(0);
    if (c === 0x22 /* " */) {
      const { value, end } = doubleQuoted(raw, 0);
      if (end !== raw.length) unsupported();
      return value;
    }
    if (c === 0x27 /* ' */) {
      const { value, end } = singleQuoted(raw, 0);
      if (end !== raw.length) unsupported();
      return value;
    }
    if (raw === '' || INDICATOR.test(raw) || raw.includes(' #')) unsupported();
    return MAYBE_TYPED.test(raw) ? String(this.resolve(raw)) : raw;
  }

  /** A value that starts on a line after `key: ` or `- `; continuation lines must be deeper than `parentIndent`. */
  private inlineValue(rest: string, parentIndent: number): unknown {
    const c = rest[0]!;
    if (c === '"') return this.doubleQuotedValue(rest, parentIndent);
    if (c === "'") {
      const { value, end } = singleQuoted(rest, 0);
      if (end !== rest.length) unsupported();
      return value;
    }
    if (c === '|') return this.literal(rest, parentIndent);
    if (c === '{' || c === '[') {
      if (rest === '{}') return {};
      if (rest === '[]') return [];
      unsupported();
    }
    if (INDICATOR.test(rest)) unsupported();
    return this.plain(rest, parentIndent);
  }

  private plain(first: string, parentIndent: number): unknown {
    if (first.includes(' #') || first.includes(': ') || first.endsWith(':')) unsupported();
    // Multi-line plain scalars: deeper lines fold into the value (one space per break, a newline per blank line).
    if (!this.has(this.i) || (!this.empty(this.i) && this.indent(this.i) <= parentIndent)) return this.resolve(first);
    let text = first;
    let breaks = 0;
    for (;;) {
      const n = this.i;
      if (!this.has(n)) break;
      if (this.empty(n)) {
        breaks++;
        this.i++;
        continue;
      }
      if (this.indent(n) <= parentIndent || this.charAt(n, 0) === 0x23 || this.marker(n)) break;
      const line = this.text(n);
      if (line.includes(' #') || line.includes(': ') || line.endsWith(':')) unsupported();
      text += breaks === 0 ? ` ${line}` : '\n'.repeat(breaks) + line;
      breaks = 0;
      this.i++;
    }
    if (breaks > 0) this.rewindBlank();
    if (text !== first && MAYBE_TYPED.test(text)) unsupported();
    return this.resolve(text);
  }

  /** Steps back over trailing empty lines consumed while looking for a continuation. */
  private rewindBlank(): void {
    while (this.i > 0 && this.empty(this.i - 1)) this.i--;
  }

  private resolve(text: string): unknown {
    if (!MAYBE_TYPED.test(text)) return text;
    if (this.resolved.has(text)) return this.resolved.get(text);
    let value: unknown;
    try {
      value = load(text, { schema: CORE_SCHEMA });
    } catch {
      return unsupported();
    }
    if (value !== null && typeof value === 'object') unsupported();
    this.resolved.set(text, value);
    return value;
  }

  private doubleQuotedValue(first: string, parentIndent: number): string {
    let raw = first;
    // A quoted scalar may continue on deeper lines until its closing quote.
    while (doubleQuotedEnd(raw) < 0) {
      const n = this.i;
      if (!this.has(n) || (!this.empty(n) && this.indent(n) <= parentIndent)) unsupported();
      raw += `\n${this.text(n)}`;
      this.i++;
    }
    const { value, end } = doubleQuoted(raw, 0);
    if (end !== raw.length) unsupported();
    return value;
  }

  /** `|`, `|-` or `|+`: the deeper lines verbatim (less their common indentation), with the chosen chomping. */
  private literal(header: string, parentIndent: number): string {
    if (header !== '|' && header !== '|-' && header !== '|+') unsupported();
    const body: string[] = [];
    let indent = -1;
    for (;;) {
      const n = this.i;
      if (!this.has(n)) break;
      if (this.empty(n)) {
        // A line of spaces inside a literal may be content; the subset has only truly empty lines there.
        if (this.rawEnds[n]! !== this.starts[n]!) unsupported();
        body.push('');
        this.i++;
        continue;
      }
      if (indent < 0) {
        if (this.indent(n) <= parentIndent) break;
        indent = this.indent(n);
      }
      if (this.indent(n) < indent) break;
      // Keep the spaces beyond the block's indentation, and trailing ones.
      body.push(' '.repeat(this.indent(n) - indent) + this.raw(n));
      this.i++;
    }
    let trailing = 0;
    while (body.length > 0 && body[body.length - 1] === '') {
      body.pop();
      trailing++;
    }
    if (trailing > 0) this.rewindBlank();
    if (body.length === 0) return '';
    const content = body.join('\n');
    if (header === '|-') return content;
    if (header === '|') return `${content}\n`;
    return content + '\n'.repeat(trailing + 1);
  }
}

/** Where a mapping key ends (the index of its `:`), or -1 when the text is not `key:` or `key: value`. */
function keyEnd(text: string): number {
  if (text.startsWith('"') || text.startsWith("'")) {
    const close = text[0] === '"' ? doubleQuotedEnd(text) : singleQuotedEnd(text);
    if (close < 0) return -1;
    return text[close] === ':' && (close + 1 === text.length || text[close + 1] === ' ') ? close : -1;
  }
  const sep = text.indexOf(': ');
  if (sep >= 0) return sep;
  return text.endsWith(':') ? text.length - 1 : -1;
}

function doubleQuotedEnd(text: string): number {
  for (let i = 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '"') return i + 1;
  }
  return -1;
}

function singleQuotedEnd(text: string): number {
  for (let i = 1; i < text.length; i++) {
    if (text[i] === "'") {
      if (text[i + 1] === "'") i++;
      else return i + 1;
    }
  }
  return -1;
}

function singleQuoted(text: string, start: number): { value: string; end: number } {
  const end = singleQuotedEnd(text.slice(start));
  if (end < 0) unsupported();
  return { value: text.slice(start + 1, start + end - 1).replace(/''/g, "'"), end: start + end };
}

const ESCAPES: Readonly<Record<string, string>> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\x85',
  _: '\xa0',
  L: '\u2028',
  P: '\u2029',
};

const HEX_LENGTH: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

/** A double-quoted scalar from `start` (its opening quote), line breaks folded as YAML folds them. */
function doubleQuoted(text: string, start: number): { value: string; end: number } {
  let out = '';
  let i = start + 1;
  for (;;) {
    const c = text[i];
    if (c === undefined) return unsupported();
    if (c === '"') return { value: out, end: i + 1 };
    if (c === '\\') {
      const e = text[i + 1];
      if (e === undefined) return unsupported();
      if (e === '\n') {
        // An escaped line break: nothing, and the next line's indentation is dropped.
        i += 2;
        while (text[i] === ' ') i++;
        continue;
      }
      const hex = HEX_LENGTH[e];
      if (hex !== undefined) {
        const digits = text.slice(i + 2, i + 2 + hex);
        if (!/^[0-9a-fA-F]+$/.test(digits) || digits.length !== hex) return unsupported();
        out += String.fromCodePoint(parseInt(digits, 16));
        i += 2 + hex;
        continue;
      }
      const mapped = ESCAPES[e];
      if (mapped === undefined) return unsupported();
      out += mapped;
      i += 2;
      continue;
    }
    if (c === '\n') {
      // A line break inside quotes folds: one space, or a newline per empty line that follows.
      out = out.replace(/ +$/, '');
      let breaks = 0;
      while (text[i] === '\n') {
        breaks++;
        i++;
        while (text[i] === ' ') i++;
      }
      out += breaks === 1 ? ' ' : '\n'.repeat(breaks - 1);
      continue;
    }
    out += c;
    i++;
  }
}
