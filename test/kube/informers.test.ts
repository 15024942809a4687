// The reflector (src/kube/informers.ts) on a manual clock, against a fake watch that takes a token of the shared rate
// limiter per watch request as LimitedWatch does, and answers as a failing server would: an ERROR event on every
// watch, watches that end at once, bookmarks between errors. Then LimitedWatch itself against a small fake server
// (node:http): a silent stream is closed after its idle deadline and the informer catches up on a fresh one; each
// watch asks for a random timeoutSeconds between 5 and 10 minutes.
//
//   defect 2  ERROR events and very short watches go through exponential backoff with jitter, the backoff is not
//             reset by ERROR or BOOKMARK, repeated failures relist; an ERROR storm sends <= 20 watch requests in
//             20 s while evictions on the same limiter keep their rate
//   defect 3  idle-read deadline; timeoutSeconds randomised
//   smaller   a version that no longer converts drops the stale cache entry
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { SupervisedInformer, type Cached, type RawList } from '../../src/kube/informers.js';
import { createKubeClients, type LimitedWatch, type WatchCallback } from '../../src/kube/kubeClient.js';
import { createRateLimiter, type RateLimiter } from '../../src/kube/rateLimiter.js';
import { captureLogger, flush, ManualClock } from '../operator/fakes.js';
import { closeFakeServers, credentialsFor, fakeServer, json } from './fakeServer.js';

/** What one watch request does once its limiter token is granted. */
type WatchScript = (callback: WatchCallback, done: (err: unknown) => void, clock: ManualClock) => void;

/** A LimitedWatch stand-in: one limiter token per request, then the script plays. */
class FakeWatch {
  requests = 0;
  constructor(
    private readonly limiter: RateLimiter,
    private readonly clock: ManualClock,
    private readonly script: WatchScript,
  ) {}

  async watch(
    _path: string,
    _params: Record<string, unknown>,
    callback: WatchCallback,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    await this.limiter.acquire();
    this.requests++;
    const controller = new AbortController();
    let ended = false;
    const end = (err: unknown): void => {
      if (ended) return;
      ended = true;
      done(err);
    };
    controller.signal.addEventListener('abort', () => end(new Error('aborted')));
    // Events arrive after the request returned, as on a socket.
    setImmediate(() => this.script(callback, end, this.clock));
    return controller;
  }

  close(): void {}
}

interface Node {
  readonly name: string;
  readonly zone: string;
}

function pod(name: string, rv: string, zone = 'a'): unknown {
  return { metadata: { name, resourceVersion: rv }, zone };
}

function informerWith(clock: ManualClock, limiter: RateLimiter, script: WatchScript, lists: RawList[] = []) {
  const watch = new FakeWatch(limiter, clock, script);
  const cache = new Map<string, Node | undefined>();
  let listCalls = 0;
  const informer = new SupervisedInformer<Node>(
    {
      resource: 'nodes',
      path: '/api/v1/nodes',
      list: () => {
        listCalls++;
        return Promise.resolve(lists.shift() ?? { items: [], metadata: { resourceVersion: '1' } });
      },
      convert: (raw) => {
        const r = raw as { metadata: { name: string }; zone?: unknown };
        if (typeof r.zone !== 'string') throw new Error('zone: not a string');
        return { name: r.metadata.name, zone: r.zone };
      },
    },
    {
      upsert: (e: Cached<Node>) => cache.set(e.metadata.name, e.value),
      remove: (e: Cached<Node>) => cache.delete(e.metadata.name),
    },
    {
      clock,
      logger: captureLogger().logger,
      newWatch: () => watch as unknown as LimitedWatch,
      backoff: { initialMs: 800, maxMs: 30_000, jitter: 1, random: () => 0.5 },
    },
  );
  return { informer, watch, cache, lists: () => listCalls };
}

/** Advances the manual clock in steps, so timers and socket-free promise chains interleave as in real time. */
async function run(clock: ManualClock, ms: number, step = 100): Promise<void> {
  for (let t = 0; t < ms; t += step) await clock.advance(step);
}

describe('watch failures are backed off (defect 2)', () => {
  it('an ERROR storm sends at most 20 watch requests in 20 s, and evictions keep their rate on the shared limiter', async () => {
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 5, burst: 10, clock });
    const { informer, watch } = informerWith(clock, limiter, (callback, done) => {
      callback('ERROR', { kind: 'Status', code: 500, message: 'internal error' });
      done(null); // the server closes the stream after the ERROR
    });
    informer.start();
    let evictions = 0;
    let evicting = true;
    void (async () => {
      while (evicting) {
        await limiter.acquire();
        if (evicting) evictions++;
      }
    })();
    await run(clock, 20_000);
    evicting = false;
    informer.stop();
    expect(watch.requests).toBeLessThanOrEqual(20);
    expect(watch.requests).toBeGreaterThanOrEqual(3);
    // 5 QPS for 20 s plus the burst, less what the watches (and the first list) took.
    expect(evictions).toBeGreaterThanOrEqual(100 + 10 - watch.requests - 1 - 2);
  });

  it('a watch that ends at once without an event is a failure, backed off the same way', async () => {
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 100, burst: 100, clock });
    const { informer, watch } = informerWith(clock, limiter, (_callback, done) => done(null));
    informer.start();
    await run(clock, 20_000);
    informer.stop();
    expect(watch.requests).toBeLessThanOrEqual(20);
  });

  it('bookmarks and ERROR events do not reset the backoff: the delays keep growing', async () => {
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 100, burst: 100, clock });
    const starts: number[] = [];
    const { informer } = informerWith(clock, limiter, (callback, done, c) => {
      starts.push(c.now());
      callback('BOOKMARK', { metadata: { resourceVersion: '5' } });
      callback('ERROR', { kind: 'Status', code: 500, message: 'boom' });
      done(null);
    });
    informer.start();
    await run(clock, 30_000);
    informer.stop();
    const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
    expect(gaps.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]!).toBeGreaterThan(gaps[i - 1]!);
    // 800 ms × 2^n, each with jitter 1 × 0.5, rounded to the 100 ms steps the clock moves in.
    expect(gaps[0]).toBeGreaterThanOrEqual(1_200);
  });

  it('lists again after repeated watch failures, instead of resuming from the same version for ever', async () => {
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 100, burst: 100, clock });
    const { informer, lists } = informerWith(clock, limiter, (callback, done) => {
      callback('ERROR', { kind: 'Status', code: 500, message: 'boom' });
      done(null);
    });
    informer.start();
    await run(clock, 1_000);
    expect(lists()).toBe(1);
    await run(clock, 30_000);
    informer.stop();
    expect(lists()).toBeGreaterThanOrEqual(2);
  });

  it('a watch that ends cleanly after a while is opened again at once (the server timeout)', async () => {
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 100, burst: 100, clock });
    const starts: number[] = [];
    const { informer } = informerWith(clock, limiter, (callback, done, c) => {
      starts.push(c.now());
      void c.sleep(5_000).then(() => done(null));
    });
    informer.start();
    await run(clock, 20_000);
    informer.stop();
    expect(starts.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeLessThanOrEqual(5_100);
  });
});

describe('conversion', () => {
  it('drops the cached value when a newer version of the object does not convert', async () => {
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 100, burst: 100, clock });
    let sent = false;
    const { informer, cache } = informerWith(
      clock,
      limiter,
      (callback, _done, c) => {
        if (sent) return;
        sent = true;
        void c
          .sleep(1_000)
          .then(() => callback('MODIFIED', { metadata: { name: 'n1', resourceVersion: '7' }, zone: 42 }));
      },
      [{ items: [pod('n1', '5')], metadata: { resourceVersion: '6' } }],
    );
    informer.start();
    await flush();
    await informer.waitForSync();
    expect(cache.get('n1')).toEqual({ name: 'n1', zone: 'a' });
    await run(clock, 1_500);
    expect(cache.has('n1')).toBe(false);
    informer.stop();
  });
});

describe('LimitedWatch against a fake server (defect 3)', () => {
  const cleanups: Array<() => void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) c();
    await closeFakeServers();
  });

  async function watchServer(onWatch: (res: ServerResponse, n: number, url: URL) => void) {
    const watches: Array<{ at: number; url: URL }> = [];
    const server = await fakeServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.searchParams.get('watch') !== 'true') {
        json(res, 200, { items: [], metadata: { resourceVersion: '10' } });
        return;
      }
      watches.push({ at: performance.now(), url });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders();
      onWatch(res, watches.length, url);
    });
    return { watches, credentials: credentialsFor(server.url) };
  }

  it('replaces a silent watch within twice the idle deadline, and the cache catches up', async () => {
    const idleMs = 400;
    const { watches, credentials } = await watchServer((res, n) => {
      // The first stream goes silent (a dead peer: no FIN, no data); the second carries the change.
      if (n >= 2) res.write(`${JSON.stringify({ type: 'ADDED', object: pod('n2', '11') })}\n`);
    });
    const clients = createKubeClients(credentials, {
      limiter: createRateLimiter({ qps: 100, burst: 100, clock: systemClock }),
      clock: systemClock,
      watchIdleTimeoutMs: idleMs,
    });
    const cache = new Map<string, unknown>();
    const informer = new SupervisedInformer<unknown>(
      {
        resource: 'nodes',
        path: '/api/v1/nodes',
        list: (page) => clients.core.listNode({ limit: page?.limit }),
        convert: (raw) => raw,
      },
      { upsert: (e) => cache.set(e.metadata.name, e.value), remove: (e) => cache.delete(e.metadata.name) },
      { clock: systemClock, logger: captureLogger().logger, newWatch: () => clients.newWatch() },
    );
    cleanups.push(() => {
      informer.stop();
      clients.close();
    });
    informer.start();
    await informer.waitForSync();
    const deadline = performance.now() + 5_000;
    while (!cache.has('n2') && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(cache.has('n2')).toBe(true);
    expect(watches.length).toBeGreaterThanOrEqual(2);
    expect(watches[1]!.at - watches[0]!.at).toBeLessThan(2 * idleMs);
    // Resumed from the list's version, not relisted.
    expect(watches[1]!.url.searchParams.get('resourceVersion')).toBe('10');
  });

  it('asks each watch for a random timeoutSeconds between 5 and 10 minutes', async () => {
    const { watches, credentials } = await watchServer((res) => res.end());
    const randoms = [0, 0.5, 0.999];
    const clients = createKubeClients(credentials, {
      limiter: createRateLimiter({ qps: 100, burst: 100, clock: systemClock }),
      clock: systemClock,
      random: () => randoms.shift() ?? 0.25,
    });
    cleanups.push(() => clients.close());
    for (let i = 0; i < 3; i++) {
      const w = clients.newWatch();
      await new Promise<void>(
        (resolve) =>
          void w.watch(
            '/api/v1/nodes',
            {},
            () => undefined,
            () => resolve(),
          ),
      );
    }
    expect(watches.map((w) => Number(w.url.searchParams.get('timeoutSeconds')))).toEqual([300, 450, 599]);
  });
});

describe('an optional API the cluster does not serve', () => {
  it('is synced and empty at the first 404, reported once, and keeps being tried', async () => {
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 100, burst: 100, clock });
    const { logger, lines } = captureLogger();
    let lists = 0;
    const informer = new SupervisedInformer<Node>(
      {
        resource: 'csinodes',
        path: '/apis/storage.k8s.io/v1/csinodes',
        optional: true,
        list: () => {
          lists++;
          return Promise.reject(
            Object.assign(new Error('GET /apis/storage.k8s.io/v1/csinodes: HTTP 404'), { code: 404 }),
          );
        },
        convert: (raw) => raw as Node,
      },
      { upsert: () => undefined, remove: () => undefined },
      {
        clock,
        logger,
        newWatch: () => new FakeWatch(limiter, clock, () => undefined) as unknown as LimitedWatch,
        backoff: { initialMs: 800, maxMs: 30_000, jitter: 1, random: () => 0.5 },
      },
    );
    informer.start();
    await informer.waitForSync();
    expect(informer.synced()).toBe(true);
    await run(clock, 60_000, 500);
    informer.stop();
    expect(lists).toBeGreaterThan(2);
    const warnings = lines.filter((l) => l.level >= 40).map((l) => l.msg);
    expect(warnings).toEqual([
      'the cluster does not serve /apis/storage.k8s.io/v1/csinodes; read as empty until it does',
    ]);
  });
});
