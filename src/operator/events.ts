// Kubernetes Events (core/v1), on evicted pods and on RebalancePolicies. Recording never blocks the caller and
// never throws: the request is sent in the background (through the shared rate limiter) and a failure is logged.
//
// Like client-go's recorder, repeats are aggregated: the same reason and message on the same object within the
// aggregation window patches the existing Event (count, lastTimestamp) instead of creating a new one, so a budget
// that blocks the same pod every cycle produces one Event with a growing count, not one per cycle.
// A repeat that arrives while the first Event is still being created waits for that creation and then patches it,
// so two identical Events in quick succession make one Event with count 2, not two Events.
// Events of cluster-scoped objects (RebalancePolicy) go to the `default` namespace, as kubectl describe expects.
import { randomBytes } from 'node:crypto';
import type { CoreV1Api, CoreV1Event } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Clock } from './clock.js';

export interface EventTarget {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** Undefined for cluster-scoped objects. */
  readonly namespace?: string;
  readonly uid?: string;
}

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  record(target: EventTarget, type: EventType, reason: string, message: string): void;
  /** Waits for the Events in flight (at most `timeoutMs`). */
  flush(timeoutMs: number): Promise<void>;
}

/** The two calls the recorder makes; CoreV1Api provides them. */
export type EventApi = Pick<CoreV1Api, 'createNamespacedEvent' | 'patchNamespacedEvent'>;

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
    const now = new Date(opts.clock.wall());
    const namespace = target.namespace ?? 'default';
    const name = `${target.name}.${randomBytes(8).toString('hex')}`;
    const body: CoreV1Event = {
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

  return {
    record(target, type, reason, message) {
      const promise = send(target, type, reason, message).catch((err: unknown) => {
        log.warn(
          { err: err instanceof Error ? err.message.split('\n')[0] : String(err), reason, object: target.name },
          'could not record an Event',
        );
      });
      pending.add(promise);
      void promise.finally(() => pending.delete(promise));
    },
    async flush(timeoutMs) {
      const timer = new AbortController();
      await Promise.race([Promise.all([...pending]), opts.clock.sleep(timeoutMs, timer.signal)]);
      timer.abort();
    },
  };
}
