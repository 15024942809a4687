// Typed errors with stable codes. Callers (the CLI's exit-code mapping, the executor) match on `code`, never on text.

/** Bad input: unreadable file, broken YAML/JSON, an object missing or mis-typing a field. Exit code 2. */
export class InputError extends Error {
  readonly code = 'E_INPUT' as const;
  constructor(
    /** The file the input came from ('-' for stdin, or a resource path for live objects). */
    readonly file: string,
    /** `Kind namespace/name`, or a document index such as `document 2, item 5` when the object has no name. */
    readonly object: string | undefined,
    /** A field path such as `spec.topologySpreadConstraints[0].maxSkew`. */
    readonly field: string | undefined,
    readonly problem: string,
  ) {
    super(formatInputError(file, object, field, problem));
    this.name = 'InputError';
  }
}

function formatInputError(
  file: string,
  object: string | undefined,
  field: string | undefined,
  problem: string,
): string {
  const where = [file, object, field]
    .filter((part): part is string => part !== undefined && part !== '')
    .map((part) => printable(part, 200))
    .join(': ');
  return `${where}: ${printable(problem, 2000)}`;
}

/** Longest quoted value kept whole inside a message; a 1 MB bad value is cut, not echoed. */
const MAX_QUOTED = 100;
const QUOTED = /"(?:[^"\\]|\\.)*"/g;

/**
 * One line, bounded: control characters (a newline in an object name would split the paragraph and could fake a
 * stack trace) are escaped as in JSON, quoted values longer than MAX_QUOTED characters are cut, and the whole text
 * is cut at `max` characters.
 */
export function printable(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const escaped = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => {
    const json = JSON.stringify(c).slice(1, -1);
    return json.length > 1 ? json : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  const cut = escaped.replace(QUOTED, (q) => (q.length > MAX_QUOTED + 2 ? `${q.slice(0, MAX_QUOTED + 1)}…"` : q));
  return cut.length > max ? `${cut.slice(0, max)}…` : cut;
}

/** A problem found while reading one object; the loader adds the file and object it came from. */
export class FieldError extends Error {
  readonly code = 'E_FIELD' as const;
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = 'FieldError';
  }
}
