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
  const where = [file, object, field].filter((part): part is string => part !== undefined && part !== '').join(': ');
  return `${where}: ${problem}`;
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
