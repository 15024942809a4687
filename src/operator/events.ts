// Kubernetes Events (core/v1), on evicted pods and on RebalancePolicies. Recording never blocks the caller and
// never throws: the request is sent in the background (through the shared rate limiter) and a failure is logged.
//
// Like client-go's recorder, repeats are aggregated: the same reason and message on the same object within the
// aggregation window patches the existing Event (count, lastTimestamp) instead of creating a new one, so a budget
// that blocks the same pod every cycle produces one Event with a growing count, not one per cycle.
// A repeat that arrives while the first Event is still being created waits for that creation and then patches it,
// so two identical Events in quick succession make one Event with count 2, not two Events.
// Events of cluster-scoped objects (RebalancePolicy) go to the `default` namespace, as kubectl describe expects.
//
// Events must not take the API budget from evictions, nor memory while they wait. They are sent through a client
// and a token bucket of their own (operator.ts, ADR 0019), as the descheduler's event client is: in the evictions'
// bucket, even at low priority, a run of 9,000 evictions gave 1,855 tokens to Events (16% of its requests). While
// they wait they stay in this recorder's queue, at most `concurrency` of them handed to the client at a time, and an
// Event of a group (one workload's evictions of one kind in one policy) that is still queued absorbs the next ones of
// its group: a run that evicts 3 pods of each of 1,000 Deployments queues 1,000 Events naming 3 pods each, not
// 3,000. The queue is bounded (`maxQueued`, 1,000 as client-go's broadcaster); past it an Event is dropped, logged
// and counted, as client-go drops when its queue is full.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';

export interface EventTarget {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** Undefined for cluster-scoped objects. */
  readonly namespace?: string;
  readonly uid?: string;
}

export type EventType = 'Normal' | 'Warning';

/** Events that may be told as one while they wait: one workload's evictions of one kind by one policy. */
export interface EventGroup {
  readonly key: string;
  /** What the group is, for the merged message: `Deployment shop/web`. */
  readonly label: string;
}

export interface EventRecorder {
  record(target: EventTarget, type: EventType, reason: string, message: string, group?: EventGroup): void;
  /** Waits for the Events in flight (at most `timeoutMs`). */
  flush(timeoutMs: number): Promise<void>;
}

/** A core/v1 Event as the recorder writes it. */
export interface EventBody {
  readonly apiVersion: 'v1';
  readonly kind: 'Event';
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly involvedObject: Readonly<Record<string, string>>;
  readonly reason: string;
  readonly message: string;
  readonly type: EventType;
  readonly count: number;
  readonly firstTimestamp: string;
  readonly lastTimestamp: string;
  readonly source: { readonly component: string };
  readonly reportingComponent: string;
  readonly reportingInstance: string;
}

/** The two calls the recorder makes (kubeClient.ts; named as client-node's CoreV1Api names them). */
export interface EventApi {
  createNamespacedEvent(p: { namespace: string; body: EventBody }): Promise<unknown>;
  patchNamespacedEvent(p: { namespace: string; name: string; body: unknown }): Promise<unknown>;
}

export interface EventRecorderOptions {
  readonly api: EventApi;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly component: string;
  /** This replica's identity (reportingInstance). */
  readonly instance: string;
  /** Repeats within this window update the existing Event (default 10 minutes, as client-go). */
  readonly aggregationWindowMs?: number;
  /** Most distinct Events remembered for aggregation (default 4096). */
  readonly maxRemembered?: number;
  /** Events waiting to be sent, at most (default 1000); past it they are dropped. */
  readonly maxQueued?: number;
  /** Events handed to the client at a time (default 4). */
  readonly concurrency?: number;
  /** Called for each Event dropped because the queue was full. */
  readonly onDropped?: () => void;
}

interface Queued {
  readonly target: EventTarget;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
  readonly group: EventGroup | undefined;
  /** Names of the group's later objects this Event now tells of too. */
  readonly more: string[];
}

/** Names listed in a merged message, at most; the rest are counted. */
const MAX_NAMES = 10;

/** The message of a queued Event, with the objects of its group it absorbed. */
function messageOf(q: Queued): string {
  if (q.more.length === 0 || q.group === undefined) return q.message;
  const names = q.more.slice(0, MAX_NAMES).join(', ');
  const rest = q.more.length > MAX_NAMES ? `, and ${q.more.length - MAX_NAMES} more` : '';
  const pods = q.more.length === 1 ? 'pod' : 'pods';
  return `${q.message} (also ${q.more.length} more ${pods} of ${q.group.label} in this run: ${names}${rest})`;
}

interface Remembered {
  readonly namespace: string;
  readonly name: string;
  count: number;
  lastSeen: number;
}

const MAX_MESSAGE = 1024;

export function createEventRecorder(opts: EventRecorderOptions): EventRecorder {
  const window = opts.aggregationWindowMs ?? 10 * 60_000;
  const maxRemembered = opts.maxRemembered ?? 4096;
  const remembered = new Map<string, Remembered>();
  const pending = new Set<Promise<void>>();
  /** Creations in flight, by key: a repeat waits for them instead of creating a second Event. */
  const creating = new Map<string, Promise<void>>();
  const log = opts.logger.child({ component: 'events' });

  function remember(key: string, value: Remembered): void {
    remembered.delete(key);
    remembered.set(key, value);
    if (remembered.size > maxRemembered) {
      const oldest = remembered.keys().next().value;
      if (oldest !== undefined) remembered.delete(oldest);
    }
  }

  async function create(key: string, target: EventTarget, type: EventType, reason: string, message: string) {
    const now = new Date(opts.clock.wall()).toISOString();
    const namespace = target.namespace ?? 'default';
    const name = `${target.name}.${randomBytes(8).toString('hex')}`;
    const body: EventBody = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: target.apiVersion,
        kind: target.kind,
        name: target.name,
        ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
        ...(target.uid !== undefined ? { uid: target.uid } : {}),
      },
      reason,
      message,
      type,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: opts.component },
      reportingComponent: opts.component,
      reportingInstance: opts.instance,
    };
    await opts.api.createNamespacedEvent({ namespace, body });
    remember(key, { namespace, name, count: 1, lastSeen: opts.clock.now() });
  }

  async function send(target: EventTarget, type: EventType, reason: string, rawMessage: string): Promise<void> {
    const message = rawMessage.length > MAX_MESSAGE ? `${rawMessage.slice(0, MAX_MESSAGE - 1)}…` : rawMessage;
    const key = [target.kind, target.namespace ?? '', target.name, target.uid ?? '', type, reason, message].join(
      '\u0000',
    );
    const inFlight = creating.get(key);
    if (inFlight !== undefined) await inFlight.catch(() => undefined);
    const now = opts.clock.now();
    const seen = remembered.get(key);
    if (seen !== undefined && now - seen.lastSeen < window) {
      const count = seen.count + 1;
      seen.count = count;
      seen.lastSeen = now;
      try {
        await opts.api.patchNamespacedEvent({
          namespace: seen.namespace,
          name: seen.name,
          body: [
            { op: 'replace', path: '/count', value: count },
            { op: 'replace', path: '/lastTimestamp', value: new Date(opts.clock.wall()).toISOString() },
          ],
        });
        return;
      } catch (err) {
        // The Event expired or was deleted: record a fresh one.
        if ((err as { code?: unknown }).code !== 404) throw err;
        remembered.delete(key);
      }
    }
    const creation = create(key, target, type, reason, message);
    creating.set(key, creation);
    try {
      await creation;
    } finally {
      if (creating.get(key) === creation) creating.delete(key);
    }
  }

  const maxQueued = opts.maxQueued ?? 1000;
  const concurrency = opts.concurrency ?? 4;
  const queue: Queued[] = [];
  const queuedByGroup = new Map<string, Queued>();
  let dropped = 0;
  const drained: Array<() => void> = [];

  function pump(): void {
    while (pending.size < concurrency && queue.length > 0) {
      const q = queue.shift()!;
      if (q.group !== undefined) queuedByGroup.delete(q.group.key);
      const promise = send(q.target, q.type, q.reason, messageOf(q)).catch((err: unknown) => {
        log.warn(
          {
            err: err instanceof Error ? err.message.split('\n')[0] : String(err),
            reason: q.reason,
            object: q.target.name,
          },
          'could not record an Event',
        );
      });
      pending.add(promise);
      void promise.finally(() => {
        pending.delete(promise);
        pump();
        if (pending.size === 0 && queue.length === 0) for (const resolve of drained.splice(0)) resolve();
      });
    }
  }

  return {
    record(target, type, reason, message, group) {
      const joined = group === undefined ? undefined : queuedByGroup.get(group.key);
      if (joined !== undefined) {
        joined.more.push(target.name);
        return;
      }
      if (queue.length >= maxQueued) {
        dropped++;
        opts.onDropped?.();
        if (dropped === 1 || dropped % 100 === 0) {
          log.warn({ dropped, queued: queue.length, reason, object: target.name }, 'Event queue full; Event dropped');
        }
        return;
      }
      const q: Queued = { target, type, reason, message, group, more: [] };
      queue.push(q);
      if (group !== undefined) queuedByGroup.set(group.key, q);
      pump();
    },
    async flush(timeoutMs) {
      if (pending.size === 0 && queue.length === 0) return;
      const timer = new AbortController();
      const done = new Promise<void>((resolve) => drained.push(resolve));
      await Promise.race([done, opts.clock.sleep(timeoutMs, timer.signal)]);
      timer.abort();
    },
  };
}
