// Helpers for reading raw Kubernetes JSON (a parsed file, a watch event) before it becomes the compact model.

export type Obj = Record<string, unknown>;

export function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Set and not null (the API treats an explicit null like an absent field). */
export function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** How a wrong value is named in an error: "a list", "an object", `string "x"`. */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${JSON.stringify(value)}`;
}

/** The strings of a list, leniently: anything else (not a list, items of other types) is left out. */
export function stringItems(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
