// A module of src/ and everything it imports from src/, transpiled to JavaScript in a temporary folder: for a test
// that starts a worker thread, which runs JavaScript files only (the test runner transforms the test's own imports,
// not a worker's). Type-only transpilation (TypeScript's transpileModule), as the build's output but without dist/.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Transpiled {
  readonly url: URL;
  /** Removes the folder. */
  remove(): void;
}

/** `entry` (a path under src/, e.g. `src/kube/leaseWorker.ts`) as a runnable file URL. */
export function transpiled(entry: string): Transpiled {
  const out = mkdtempSync(join(tmpdir(), 'kr-transpiled-'));
  // ES modules, and the project's packages found from the folder.
  writeFileSync(join(out, 'package.json'), JSON.stringify({ type: 'module' }));
  symlinkSync(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
  const done = new Set<string>();
  const pending = [resolve(ROOT, entry)];
  while (pending.length > 0) {
    const source = pending.pop()!;
    if (done.has(source)) continue;
    done.add(source);
    const text = readFileSync(source, 'utf8');
    const js = ts.transpileModule(text, {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2023, verbatimModuleSyntax: false },
    }).outputText;
    const target = join(out, relative(ROOT, source)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, js);
    // Relative imports of the emitted JavaScript (type-only ones are gone): their sources come next.
    for (const m of js.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)\.js'/g)) {
      pending.push(resolve(dirname(source), `${m[1]!}.ts`));
    }
  }
  return {
    url: pathToFileURL(join(out, entry.replace(/\.ts$/, '.js'))),
    remove: () => rmSync(out, { recursive: true, force: true }),
  };
}
