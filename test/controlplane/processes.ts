// Child processes of the harness, each stopped by its pid. Three layers make sure none outlives a test run:
//  1. ControlPlane.stop() (called from afterAll) sends SIGTERM, then SIGKILL after a grace, and waits for the exit;
//  2. a process 'exit' hook SIGKILLs whatever this worker started and has not stopped (a test that threw in
//     beforeAll, a worker torn down by vitest);
//  3. a watchdog process per control plane, started detached, that polls this worker's pid and, when it is gone
//     (killed by a timeout, crashed), SIGKILLs every pid listed in the control plane's pid file and removes its
//     folder. It also exits on its own once the folder is removed by a normal stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const live = new Set<ManagedProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

export interface SpawnOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Folder for the log file (`<name>.log`) and the pid file the watchdog reads. */
  readonly dir: string;
  readonly env?: NodeJS.ProcessEnv;
}

export class ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  constructor(opts: SpawnOptions) {
    this.name = opts.name;
    this.logFile = join(opts.dir, `${opts.name}.log`);
    const log = createWriteStream(this.logFile, { flags: 'a' });
    this.child = spawn(opts.command, [...opts.args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: opts.env ?? process.env,
    });
    if (this.child.pid === undefined) throw new Error(`cannot start ${opts.command}`);
    this.pid = this.child.pid;
    this.child.stdout?.pipe(log, { end: false });
    this.child.stderr?.pipe(log, { end: false });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitCode = code ?? (signal !== null ? -1 : null);
        live.delete(this);
        unregisterPid(opts.dir, this.pid);
        resolve(this.exitCode);
      });
    });
    live.add(this);
    installExitHook();
    registerPid(opts.dir, this.pid);
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** The last lines of its log, for error messages. */
  tail(lines = 25): string {
    try {
      return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  signal(sig: NodeJS.Signals): void {
    if (!this.running) return;
    try {
      process.kill(this.pid, sig);
    } catch {
      // exited between the check and the kill
    }
  }

  /** SIGTERM (or the given signal), then SIGKILL after `graceMs`; resolves once the process has exited. */
  async stop(opts: { signal?: NodeJS.Signals; graceMs?: number } = {}): Promise<void> {
    if (!this.running) return;
    this.signal(opts.signal ?? 'SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), opts.graceMs ?? 10_000);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  waitForExit(): Promise<number | null> {
    return this.exited;
  }
}

const PID_FILE = 'pids';

function readPids(dir: string): number[] {
  try {
    return readFileSync(join(dir, PID_FILE), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map(Number);
  } catch {
    return [];
  }
}

function registerPid(dir: string, pid: number): void {
  writeFileSync(join(dir, PID_FILE), [...readPids(dir), pid].join('\n') + '\n');
}

function unregisterPid(dir: string, pid: number): void {
  try {
    writeFileSync(
      join(dir, PID_FILE),
      readPids(dir)
        .filter((p) => p !== pid)
        .join('\n') + '\n',
    );
  } catch {
    // the folder is already removed
  }
}

// Runs with `node -e`, so it needs no build step. argv: owner pid, folder.
const WATCHDOG = `
const fs = require('node:fs');
const path = require('node:path');
const owner = Number(process.argv[1]);
const dir = process.argv[2];
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const timer = setInterval(() => {
  if (!fs.existsSync(dir)) { clearInterval(timer); return; }
  if (alive(owner)) return;
  let pids = [];
  try { pids = fs.readFileSync(path.join(dir, 'pids'), 'utf8').split('\\n').filter(Boolean).map(Number); } catch {}
  for (const pid of pids) { try { process.kill(pid, 'SIGKILL'); } catch {} }
  setTimeout(() => { try { fs.rmSync(dir, { recursive: true, force: true }); } catch {} clearInterval(timer); }, 500);
}, 500);
`;

/** Starts the watchdog for a control-plane folder (see the header). It needs no stopping: it exits with the folder. */
export function startWatchdog(dir: string): void {
  const child = spawn(process.execPath, ['-e', WATCHDOG, String(process.pid), dir], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
}
