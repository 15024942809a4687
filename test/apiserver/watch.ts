// HTTP watch streams: newline-delimited JSON watch events ({"type":..,"object":..}) over a chunked 200 response,
// as the real server writes them for `?watch=true`.
//  - resourceVersion unset or "0": synthetic ADDED events for the current state first, then changes;
//    N: every change after N (from the store's retained history) — or, when N is older than what is retained,
//    one ERROR event carrying a 410 Expired Status, after which the stream ends (the watch cache's behaviour).
//  - labelSelector/fieldSelector filter as the watch cache does: an object that stops matching is sent as DELETED
//    (its previous state with the new resourceVersion), one that starts matching as ADDED.
//  - allowWatchBookmarks=true: a BOOKMARK event with the current resourceVersion every bookmarkIntervalMs and just
//    before the stream times out; sendInitialEvents=true: the initial-events-end bookmark after the initial state.
//  - timeoutSeconds: the stream ends cleanly after that many seconds (default: the server's watchTimeoutSeconds).
//  - A client that reads too slowly (more than maxWatchBufferBytes unwritten) has its watch closed, as the real
//    server terminates watchers whose buffer fills.

import type { ServerResponse } from 'node:http';
import type { KubeApi } from './api.js';
import type { TimerHandle, TimerSet } from './clock.js';
import { ApiError, errors } from './errors.js';
import type { RequestInfo, RequestMatch } from './faults.js';
import { requestMatches } from './faults.js';
import type { ResourceDef } from './resources.js';
import { apiVersionOf } from './resources.js';
import type { EventSink, StoreEvent, WatchEventType } from './store.js';
import type { KubeObject } from './types.js';

export interface WatchParams {
  def: ResourceDef;
  info: RequestInfo;
  namespace: string | undefined;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
  resourceVersion: string | undefined;
  timeoutSeconds: number | undefined;
  allowWatchBookmarks: boolean;
  sendInitialEvents: boolean;
  /** Answer with a 410 ERROR event instead of streaming (fault injection). */
  forceExpired: boolean;
}

export interface WatchSettings {
  bookmarkIntervalMs: number;
  defaultTimeoutSeconds: number | undefined;
  maxBufferBytes: number;
}

type WireType = WatchEventType | 'BOOKMARK' | 'ERROR';

export class WatchHub {
  private readonly streams = new Set<WatchStream>();
  private readonly lineCache = new WeakMap<ResourceDef, WeakMap<KubeObject, Partial<Record<WireType, string>>>>();

  constructor(
    readonly api: KubeApi,
    readonly timers: TimerSet,
    readonly settings: WatchSettings,
  ) {}

  /** Starts streaming `params` into `res`. Throws an ApiError (400) before anything is written on bad input. */
  open(params: WatchParams, res: ServerResponse): WatchStream {
    const rv = params.resourceVersion;
    if (rv !== undefined && rv !== '' && !/^\d+$/.test(rv)) {
      throw errors.badRequest(
        `resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": invalid syntax`,
      );
    }
    const matches = this.api.matcher(params.def, {
      namespace: params.namespace,
      labelSelector: params.labelSelector,
      fieldSelector: params.fieldSelector,
    });
    const stream = new WatchStream(this, params, res, matches);
    this.streams.add(stream);
    stream.start();
    return stream;
  }

  /** @internal */
  forget(stream: WatchStream): void {
    this.streams.delete(stream);
  }

  /** Serialises a watch event once per (resource representation, object, type) and reuses it for every watcher. */
  line(def: ResourceDef, type: WireType, obj: KubeObject): string {
    let perDef = this.lineCache.get(def);
    if (perDef === undefined) {
      perDef = new WeakMap();
      this.lineCache.set(def, perDef);
    }
    let perObj = perDef.get(obj);
    if (perObj === undefined) {
      perObj = {};
      perDef.set(obj, perObj);
    }
    const cached = perObj[type];
    if (cached !== undefined) return cached;
    const text = `${JSON.stringify({ type, object: this.api.view(def, obj) })}\n`;
    perObj[type] = text;
    return text;
  }

  drop(match: RequestMatch, mode: 'end' | 'destroy'): number {
    let closed = 0;
    for (const stream of [...this.streams]) {
      if (requestMatches(match, stream.params.info)) {
        stream.close(mode);
        closed++;
      }
    }
    return closed;
  }

  count(match: RequestMatch = {}): number {
    let n = 0;
    for (const stream of this.streams) if (requestMatches(match, stream.params.info)) n++;
    return n;
  }

  closeAll(): void {
    for (const stream of [...this.streams]) stream.close('end');
  }
}

export class WatchStream implements EventSink {
  private closed = false;
  private timeout: TimerHandle | undefined;
  private bookmark: TimerHandle | undefined;

  constructor(
    private readonly hub: WatchHub,
    readonly params: WatchParams,
    private readonly res: ServerResponse,
    private readonly matches: (obj: KubeObject) => boolean,
  ) {}

  start(): void {
    const { res, params } = this;
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    res.flushHeaders();
    res.on('close', () => this.close('end'));
    const store = this.hub.api.store;
    const storage = params.def.storage;
    if (params.forceExpired) {
      this.sendError(
        errors.expired(`too old resource version: ${params.resourceVersion ?? '0'} (${store.resourceVersion})`),
      );
      return;
    }
    const rv = params.resourceVersion;
    if (rv === undefined || rv === '' || rv === '0' || params.sendInitialEvents) {
      const namespace = params.def.namespaced && params.namespace ? params.namespace : undefined;
      for (const obj of store.iterate(storage, namespace)) {
        if (this.matches(obj)) this.write(this.hub.line(params.def, 'ADDED', obj));
      }
      if (params.sendInitialEvents && params.allowWatchBookmarks) this.sendBookmark(true);
    } else {
      let backlog: StoreEvent[];
      try {
        backlog = store.eventsSince(storage, Number(rv));
      } catch (err) {
        if (err instanceof ApiError) {
          this.sendError(err);
          return;
        }
        throw err;
      }
      for (const event of backlog) this.deliver(event);
    }
    if (this.closed) return;
    store.addSink(storage, this);
    const timeoutSeconds = params.timeoutSeconds ?? this.hub.settings.defaultTimeoutSeconds;
    if (timeoutSeconds !== undefined && timeoutSeconds > 0) {
      this.timeout = this.hub.timers.set(() => {
        if (params.allowWatchBookmarks) this.sendBookmark(false);
        this.close('end');
      }, timeoutSeconds * 1000);
    }
    if (params.allowWatchBookmarks) this.scheduleBookmark();
  }

  private scheduleBookmark(): void {
    this.bookmark = this.hub.timers.set(
      () => {
        if (this.closed) return;
        this.sendBookmark(false);
        this.scheduleBookmark();
      },
      Math.max(1, this.hub.settings.bookmarkIntervalMs),
    );
  }

  private sendBookmark(initialEventsEnd: boolean): void {
    const def = this.params.def;
    const metadata: Record<string, unknown> = { resourceVersion: String(this.hub.api.store.resourceVersion) };
    if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    const object = { kind: def.kind, apiVersion: apiVersionOf(def), metadata };
    this.write(`${JSON.stringify({ type: 'BOOKMARK', object })}\n`);
  }

  private sendError(err: ApiError): void {
    this.write(`${JSON.stringify({ type: 'ERROR', object: err.status })}\n`);
    this.close('end');
  }

  deliver(event: StoreEvent): void {
    if (this.closed) return;
    const def = this.params.def;
    const prevMatched = event.prev !== undefined && this.matches(event.prev);
    switch (event.type) {
      case 'ADDED':
        if (this.matches(event.object)) this.write(this.hub.line(def, 'ADDED', event.object));
        return;
      case 'DELETED':
        if (prevMatched) this.write(this.hub.line(def, 'DELETED', event.object));
        return;
      case 'MODIFIED': {
        const nowMatches = this.matches(event.object);
        if (nowMatches && prevMatched) this.write(this.hub.line(def, 'MODIFIED', event.object));
        else if (nowMatches) this.write(this.hub.line(def, 'ADDED', event.object));
        else if (prevMatched && event.prev !== undefined) {
          const leaving = { ...event.prev, metadata: { ...event.prev.metadata, resourceVersion: String(event.rv) } };
          this.write(this.hub.line(def, 'DELETED', leaving));
        }
        return;
      }
    }
  }

  private write(text: string): void {
    if (this.closed) return;
    this.res.write(text);
    if (this.res.writableLength > this.hub.settings.maxBufferBytes) this.close('destroy');
  }

  close(mode: 'end' | 'destroy'): void {
    if (this.closed) return;
    this.closed = true;
    this.hub.api.store.removeSink(this.params.def.storage, this);
    this.hub.timers.clear(this.timeout);
    this.hub.timers.clear(this.bookmark);
    this.hub.forget(this);
    if (mode === 'destroy') this.res.destroy();
    else this.res.end();
  }
}
