// Documents → the Kubernetes objects they hold, Lists expanded (nested and typed ones too), each with where in the
// file it was found so an error can name it. Apart from load.ts because the policy parser flattens its files the same
// way; nothing here converts an object.
import { isObj } from '../model/rawJson.js';
import { InputError } from '../errors.js';

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
