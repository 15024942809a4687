// Reading a KubeSchedulerConfiguration's objects with field paths: every problem names the field where it is, such
// as `profiles[0].pluginConfig[1].args.scoringStrategy.type`. The envelope parser and each plugin's args decoder read
// through one Reader, so a file's problems come out together and in file order.
import { isObj, typeName, type Obj } from '../../model/rawJson.js';

export interface ConfigProblem {
  /** The field path in the file, such as `profiles[0].plugins.score.enabled[1].weight`; '' for the whole file. */
  readonly field: string;
  readonly problem: string;
}

export function joinPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** Collects problems with their field paths; readers return undefined after recording one. */
export class Reader {
  readonly problems: ConfigProblem[] = [];
  readonly warnings: string[] = [];

  fail(field: string, problem: string): undefined {
    this.problems.push({ field, problem });
    return undefined;
  }

  obj(parent: Obj, key: string, path: string): Obj | undefined {
    const value = parent[key];
    if (value === undefined || value === null) return undefined;
    return isObj(value) ? value : this.fail(joinPath(path, key), `must be an object (got ${typeName(value)})`);
  }

  list(parent: Obj, key: string, path: string): readonly unknown[] | undefined {
    const value = parent[key];
    if (value === undefined || value === null) return undefined;
    return Array.isArray(value) ? value : this.fail(joinPath(path, key), `must be a list (got ${typeName(value)})`);
  }

  string(parent: Obj, key: string, path: string): string | undefined {
    const value = parent[key];
    if (value === undefined || value === null) return undefined;
    return typeof value === 'string'
      ? value
      : this.fail(joinPath(path, key), `must be a string (got ${typeName(value)})`);
  }

  int(parent: Obj, key: string, path: string, min: number, max: number): number | undefined {
    const value = parent[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
      return this.fail(joinPath(path, key), `must be an integer (got ${typeName(value)})`);
    }
    if (value < min || value > max)
      return this.fail(joinPath(path, key), `must be between ${min} and ${max} (got ${value})`);
    return value;
  }

  oneOf<T extends string>(parent: Obj, key: string, path: string, allowed: readonly T[]): T | undefined {
    const value = this.string(parent, key, path);
    if (value === undefined) return undefined;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    return this.fail(joinPath(path, key), `must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
  }

  /** Strict decoding, as kube-scheduler's: a field the type does not have is an error (a typo would be ignored). */
  known(o: Obj, path: string, fields: readonly string[]): void {
    for (const key of Object.keys(o)) {
      if (!fields.includes(key)) this.fail(joinPath(path, key), `unknown field (known: ${fields.join(', ')})`);
    }
  }

  /** The objects of a list, each with its path; non-objects are recorded as problems and skipped. */
  objects(list: readonly unknown[] | undefined, path: string): Array<readonly [Obj, string]> {
    const out: Array<readonly [Obj, string]> = [];
    (list ?? []).forEach((item, i) => {
      const at = `${path}[${i}]`;
      if (isObj(item)) out.push([item, at]);
      else this.fail(at, `must be an object (got ${typeName(item)})`);
    });
    return out;
  }
}

/** The fields every plugin's args object may carry besides its own (they name its type). */
export const ARGS_META = ['apiVersion', 'kind'];
