// A real Prometheus (Debian's package) as a ManagedProcess in a test's folder: stopped by its pid by the suite, and by
// the harness's exit hook and watchdog if the run dies. On a port found free; started again on another when that one
// was taken before Prometheus could bind it (suites side by side draw outgoing connections from the same range).
import { freePort, onFreshPorts } from '../controlplane/controlPlane.js';
import { ManagedProcess } from '../controlplane/processes.js';

export interface PrometheusProcess {
  readonly proc: ManagedProcess;
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly port: number;
}

const READY_TIMEOUT_MS = 30_000;

/** Starts `bin` with `args` and --web.listen-address, and waits for /-/ready; throws with its log otherwise. */
export function startPrometheus(opts: {
  readonly bin: string;
  readonly name: string;
  readonly dir: string;
  readonly args: readonly string[];
}): Promise<PrometheusProcess> {
  let attempt = 0;
  return onFreshPorts(opts.name, async () => {
    attempt++;
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const proc = new ManagedProcess({
      name: attempt === 1 ? opts.name : `${opts.name}-${attempt}`,
      command: opts.bin,
      args: [...opts.args, `--web.listen-address=127.0.0.1:${port}`],
      dir: opts.dir,
    });
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (proc.running && Date.now() <= deadline) {
      const ready = await fetch(`${url}/-/ready`).then(
        (res) => res.ok,
        () => false,
      );
      if (ready) return { proc, url, port };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await proc.stop();
    throw new Error(`${opts.name} not ready at ${url} within ${READY_TIMEOUT_MS} ms:\n${proc.tail(40)}`);
  });
}
