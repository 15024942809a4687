// Leader election on a coordination.k8s.io/v1 Lease, the protocol of client-go's leaderelection package:
//
// - Every `retryPeriod` a replica reads the Lease. It takes it when the Lease does not exist (create), when the
//   holder is empty (released), when it holds it already (renew), or when the holder has not renewed for the Lease's
//   own leaseDurationSeconds. Expiry is judged by *local* time since this replica last saw the record change
//   (client-go's observedTime), never by comparing renewTime with the local clock, so clock skew cannot steal a
//   Lease. Writes carry the resourceVersion read, so two candidates cannot both win (one gets 409).
// - A leader that has not renewed successfully for `renewDeadline` (< leaseDuration) stops leading on its own,
//   before any other replica may take over. isLeader() applies that deadline at the instant it is called, so the
//   executor's check immediately before every eviction is exact even if the renew loop is stuck.
// - The elector has its own client and its own rate limiter (operator.ts), as client-go's leader election does: a
//   renewal never queues behind evictions or a server-side throttling pause of the main client. Every Lease call is
//   bounded by `requestTimeoutMs` and *aborted* when it passes (its connection closed), so a hung GET can neither
//   stall the loop past the renew deadline nor keep one of the elector's two sockets; lastActivity() lets /healthz
//   see a loop that is wedged all the same.
// - Every interval is measured on the monotonic clock; renewTime/acquireTime written to the Lease are wall time
//   (other replicas never compare them with their own clock, see above).
// - release() (graceful shutdown) writes an empty holder, a 1-second duration and a fresh renewTime, so another
//   replica takes over at its next retry instead of waiting for expiry.
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';

/** A coordination.k8s.io/v1 Lease, as far as the election reads and writes it. */
export interface Lease {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly resourceVersion?: string };
  readonly spec?: {
    readonly holderIdentity?: string;
    readonly leaseDurationSeconds?: number;
    /** metav1.MicroTime: RFC 3339 with microseconds (a Date from client-node's typed clients in tests). */
    readonly acquireTime?: string | Date;
    readonly renewTime?: string | Date;
    readonly leaseTransitions?: number;
  };
}

/**
 * The three Lease calls (kubeClient.ts; named as client-node's CoordinationV1Api names them). Aborting `signal` must
 * abort the request and free its connection: the elector aborts every call that outlives its timeout.
 */
export interface LeaseApi {
  readNamespacedLease(p: { namespace: string; name: string; signal?: AbortSignal }): Promise<unknown>;
  createNamespacedLease(p: { namespace: string; body: Lease; signal?: AbortSignal }): Promise<unknown>;
  replaceNamespacedLease(p: { namespace: string; name: string; body: Lease; signal?: AbortSignal }): Promise<unknown>;
}

/** metav1.MicroTime's JSON form: RFC 3339 with six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export interface LeaderElectionOptions {
  readonly api: LeaseApi;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How long a Lease stays valid without renewal (default 15 s). */
  readonly leaseDurationMs?: number;
  /** The leader gives up when it could not renew for this long (default 10 s). */
  readonly renewDeadlineMs?: number;
  /** Interval between attempts (default 2 s). */
  readonly retryPeriodMs?: number;
  /** Longest wait for one Lease request (default: the smaller of 5 s and renewDeadline / 2). */
  readonly requestTimeoutMs?: number;
  readonly onStartedLeading?: () => void;
  readonly onStoppedLeading?: () => void;
  /** After each successful acquire or renew, with the attempt's start (the renew deadline counts from it). */
  readonly onRenewed?: (startedAt: number) => void;
}

export interface LeaderElector {
  /** True while this replica holds the Lease and renewed it within the renew deadline. */
  isLeader(): boolean;
  start(): void;
  /**
   * Monotonic time the campaign loop last completed an attempt (or started); undefined when not campaigning.
   * /healthz fails when this falls far behind: the loop is wedged.
   */
  lastActivity(): number | undefined;
  /** Stops campaigning; with `release`, hands the Lease over if held. */
  stop(release: boolean): Promise<void>;
}

interface Observed {
  readonly holder: string;
  readonly renewTime: string;
  readonly resourceVersion: string;
  /** Local time when this record was first seen. */
  readonly seenAt: number;
}

function timeText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  return typeof value === 'string' ? value : '';
}

function httpCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** Always leader: for a single replica run without --leader-elect. */
export function alwaysLeader(): LeaderElector {
  return {
    isLeader: () => true,
    start: () => undefined,
    lastActivity: () => undefined,
    stop: () => Promise.resolve(),
  };
}

export class LeaseTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = 'LeaseTimeoutError';
  }
}

/** A timeout timer this much later than due found the event loop busy (below: one grace period, then it counts). */
const LATE_TIMER_MS = 250;
const LATE_GRACE_MS = 1_000;

/**
 * Calls `call` with a signal that aborts after `ms` or when `stop` aborts; rejects with LeaseTimeoutError on the
 * deadline. The abort reaches the request itself (its socket is closed), so nothing is left holding a connection.
 */
async function withTimeout<T>(
  clock: Clock,
  call: (signal: AbortSignal) => Promise<T>,
  ms: number,
  what: string,
  stop: AbortSignal,
): Promise<T> {
  const request = new AbortController();
  const timer = new AbortController();
  const onStop = (): void => request.abort(stop.reason);
  stop.addEventListener('abort', onStop, { once: true });
  const waiting = AbortSignal.any([timer.signal, stop]);
  const expire = async (): Promise<never> => {
    const due = clock.now() + ms;
    await clock.sleep(ms, waiting);
    // A timer that fires late means this thread was busy (a plan, a collection), not that the server was slow: the
    // answer may be read and waiting behind the timer. Node runs due timers before it reads sockets, so the request
    // gets one more stretch of free event loop before it counts as timed out. The renew deadline is unaffected
    // (measured from the attempt's start), so a late answer can never extend leadership.
    if (!waiting.aborted && clock.now() - due > LATE_TIMER_MS) await clock.sleep(LATE_GRACE_MS, waiting);
    if (timer.signal.aborted) return new Promise<never>(() => undefined);
    const timeout = new LeaseTimeoutError(what, ms);
    request.abort(timeout);
    throw timeout;
  };
  try {
    return await Promise.race([call(request.signal), expire()]);
  } finally {
    timer.abort();
    stop.removeEventListener('abort', onStop);
  }
}

export function createLeaderElector(opts: LeaderElectionOptions): LeaderElector {
  const leaseDurationMs = opts.leaseDurationMs ?? 15_000;
  const renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
  const retryPeriodMs = opts.retryPeriodMs ?? 2_000;
  if (!(renewDeadlineMs < leaseDurationMs)) throw new RangeError('renewDeadline must be shorter than leaseDuration');
  const requestTimeoutMs = opts.requestTimeoutMs ?? Math.min(5_000, Math.max(1, Math.floor(renewDeadlineMs / 2)));
  const { namespace, name, identity, clock } = opts;
  const raw = opts.api;
  /** A Lease call bounded by requestTimeoutMs and aborted on it (or on stop). */
  const timed =
    <P>(what: string, call: (p: P & { signal: AbortSignal }) => Promise<unknown>) =>
    async (p: P): Promise<Lease> =>
      (await withTimeout(clock, (signal) => call({ ...p, signal }), requestTimeoutMs, what, stopping.signal)) as Lease;
  const api = {
    readNamespacedLease: timed<{ namespace: string; name: string }>('Lease GET', (p) => raw.readNamespacedLease(p)),
    createNamespacedLease: timed<{ namespace: string; body: Lease }>('Lease create', (p) =>
      raw.createNamespacedLease(p),
    ),
    replaceNamespacedLease: timed<{ namespace: string; name: string; body: Lease }>('Lease update', (p) =>
      raw.replaceNamespacedLease(p),
    ),
  };
  let activity: number | undefined;
  const log = opts.logger.child({ component: 'leader-election', lease: `${namespace}/${name}` });
  const stopping = new AbortController();
  let leading = false;
  let lastRenew = 0;
  let observed: Observed | undefined;
  let current: Lease | undefined;
  let loop: Promise<void> | undefined;

  function isLeader(): boolean {
    if (leading && clock.now() - lastRenew >= renewDeadlineMs) setLeading(false, 'renew deadline passed');
    return leading;
  }

  let deadline: AbortController | undefined;
  /**
   * Applies the renew deadline at the instant it passes, not only when someone asks: onStoppedLeading (which
   * withdraws every eviction still queued, operator.ts) fires then even if the renew loop is stuck in a request.
   */
  function armDeadline(at: number): void {
    deadline?.abort();
    const timer = (deadline = new AbortController());
    void clock.sleep(at - clock.now(), AbortSignal.any([timer.signal, stopping.signal])).then(() => {
      if (!timer.signal.aborted && !stopping.signal.aborted) isLeader();
    });
  }

  function setLeading(value: boolean, why: string): void {
    if (leading === value) return;
    leading = value;
    if (value) {
      log.info({ identity }, `became leader (${why})`);
      opts.onStartedLeading?.();
    } else {
      log.warn({ identity }, `stopped leading (${why})`);
      opts.onStoppedLeading?.();
    }
  }

  function observe(lease: Lease): void {
    const holder = lease.spec?.holderIdentity ?? '';
    const renewTime = timeText(lease.spec?.renewTime);
    const resourceVersion = lease.metadata?.resourceVersion ?? '';
    if (observed?.holder !== holder || observed.renewTime !== renewTime) {
      observed = { holder, renewTime, resourceVersion, seenAt: clock.now() };
    } else {
      observed = { ...observed, resourceVersion };
    }
    current = lease;
  }

  function desired(lease: Lease | undefined, now: number): Lease {
    const previousHolder = lease?.spec?.holderIdentity ?? '';
    const transitions = lease?.spec?.leaseTransitions ?? 0;
    const takeover = previousHolder !== identity;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace,
        ...(lease?.metadata?.resourceVersion !== undefined ? { resourceVersion: lease.metadata.resourceVersion } : {}),
      },
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds: Math.max(1, Math.ceil(leaseDurationMs / 1000)),
        acquireTime: takeover || lease?.spec?.acquireTime === undefined ? microTime(now) : lease.spec.acquireTime,
        renewTime: microTime(now),
        // As client-go: every change of holder counts, a takeover of a released (empty) Lease included.
        leaseTransitions: takeover && lease !== undefined ? transitions + 1 : transitions,
      },
    };
  }

  /** One attempt; true when this replica holds the Lease afterwards. */
  async function tryAcquireOrRenew(): Promise<boolean> {
    const now = clock.wall();
    let lease: Lease | undefined;
    try {
      lease = await api.readNamespacedLease({ namespace, name });
    } catch (err) {
      if (httpCode(err) !== 404) throw err;
    }
    if (lease === undefined) {
      const created = await api.createNamespacedLease({ namespace, body: desired(undefined, now) });
      observe(created);
      return true;
    }
    observe(lease);
    const holder = observed!.holder;
    const durationMs = (lease.spec?.leaseDurationSeconds ?? Math.ceil(leaseDurationMs / 1000)) * 1000;
    const expired = clock.now() >= observed!.seenAt + durationMs;
    if (holder !== '' && holder !== identity && !expired) return false;
    const updated = await api.replaceNamespacedLease({ namespace, name, body: desired(lease, now) });
    observe(updated);
    return true;
  }

  async function campaign(): Promise<void> {
    while (!stopping.signal.aborted) {
      const started = clock.now();
      try {
        if (await tryAcquireOrRenew()) {
          if (stopping.signal.aborted) break;
          lastRenew = started;
          opts.onRenewed?.(started);
          setLeading(true, 'lease acquired');
          armDeadline(started + renewDeadlineMs);
        } else {
          setLeading(false, `lease held by ${observed?.holder ?? 'another replica'}`);
        }
      } catch (err) {
        const code = httpCode(err);
        // 409: another replica wrote first; it is the leader for now.
        if (code !== 409)
          log.warn({ err: err instanceof Error ? err.message.split('\n')[0] : String(err) }, 'lease update failed');
        isLeader();
      }
      activity = clock.now();
      await clock.sleep(retryPeriodMs, stopping.signal);
    }
  }

  return {
    isLeader,
    start() {
      if (loop !== undefined) return;
      activity = clock.now();
      loop = campaign();
    },
    lastActivity: () => (loop === undefined ? undefined : activity),
    async stop(release) {
      stopping.abort();
      await loop;
      const wasLeading = leading;
      setLeading(false, 'shutting down');
      if (!release || !wasLeading || current === undefined) return;
      const now = clock.wall();
      try {
        const held = current;
        const release = (signal: AbortSignal): Promise<unknown> =>
          raw.replaceNamespacedLease({
            namespace,
            name,
            signal,
            body: {
              ...held,
              spec: {
                ...held.spec,
                holderIdentity: '',
                leaseDurationSeconds: 1,
                renewTime: microTime(now),
                acquireTime: microTime(now),
              },
            },
          });
        // Stopping has aborted the campaign's signal: the release gets its own timeout only.
        await withTimeout(clock, release, requestTimeoutMs, 'Lease release', new AbortController().signal);
        log.info('lease released');
      } catch (err) {
        log.warn(
          { err: err instanceof Error ? err.message.split('\n')[0] : String(err) },
          'could not release the lease',
        );
      }
    },
  };
}
