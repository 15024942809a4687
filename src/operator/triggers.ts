// Event triggers (spec.triggers): besides its schedule, a policy runs a cycle, after its debounce, when
// - a node is added, becomes Ready or schedulable, or changes labels or taints (model/nodeChange.ts; every policy
//   with nodeChanges on);
// - the policy itself is created or its spec changes (metadata.generation moved).
// Only changes seen after the caches synced count: the first list of a starting operator is not a change.
// A node going NotReady or being cordoned is not a trigger (nothing can be moved onto it), though the taints the
// node controller adds then are.
import type { Logger } from 'pino';
import { nodeChange } from '../model/nodeChange.js';
import type { NodeInfo } from '../model/types.js';
import type { Clock } from '../clock.js';
import type { PolicyEntry } from './clusterCache.js';
import { Debouncer, type CycleTrigger, type Fired } from './debounce.js';
import type { Cached, InformerHandlers } from '../kube/informers.js';

export { nodeChange };

export interface TriggerDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly policies: () => readonly PolicyEntry[];
  readonly policy: (name: string) => PolicyEntry | undefined;
  /** Starts (or queues) a cycle of the policy. */
  readonly start: (name: string, trigger: CycleTrigger, changes: readonly string[]) => void;
}

export class Triggers {
  private readonly debouncer: Debouncer;

  constructor(private readonly deps: TriggerDeps) {
    this.debouncer = new Debouncer(deps.clock, (fired) => this.fire(fired));
  }

  /** A node was added or updated (after the node cache synced). */
  onNode(previous: NodeInfo | undefined, next: NodeInfo): void {
    const change = nodeChange(previous, next);
    if (change === undefined) return;
    for (const entry of this.deps.policies()) {
      const spec = entry.policy?.spec;
      if (spec === undefined || spec.suspend || !spec.triggers.nodeChanges) continue;
      this.debouncer.poke(entry.name, 'node', change, spec.triggers.debounceMs);
    }
  }

  /** A policy appeared or its spec changed (after the policy cache synced). */
  onPolicy(entry: PolicyEntry, previousGeneration: number | undefined): void {
    const spec = entry.policy?.spec;
    if (spec === undefined || spec.suspend) return;
    const change =
      previousGeneration === undefined
        ? `policy ${entry.name} created`
        : `spec of policy ${entry.name} changed (generation ${previousGeneration} → ${entry.generation})`;
    this.debouncer.poke(entry.name, 'policy', change, spec.triggers.debounceMs);
  }

  forget(name: string): void {
    this.debouncer.cancel(name);
  }

  stop(): void {
    this.debouncer.stop();
  }

  private fire(fired: Fired): void {
    const spec = this.deps.policy(fired.key)?.policy?.spec;
    if (spec === undefined || spec.suspend) return;
    const waitedMs = this.deps.clock.now() - fired.since;
    this.deps.logger.info(
      { policy: fired.key, trigger: fired.trigger, changes: fired.changes, waitedMs },
      `${fired.trigger} change: starting a cycle`,
    );
    this.deps.start(fired.key, fired.trigger, fired.changes);
  }
}

/**
 * The cache's node handlers, reporting each node change to `onChange` with the node as it was. `ready` says whether
 * the node list has synced (before that, every node would look added).
 */
export function watchNodeChanges(
  handlers: InformerHandlers<NodeInfo>,
  lookup: (name: string) => NodeInfo | undefined,
  ready: () => boolean,
  onChange: (previous: NodeInfo | undefined, next: NodeInfo) => void,
): InformerHandlers<NodeInfo> {
  return {
    upsert: (e: Cached<NodeInfo>) => {
      const previous = lookup(e.metadata.name);
      handlers.upsert(e);
      if (e.value !== undefined && ready()) onChange(previous, e.value);
    },
    remove: (e) => handlers.remove(e),
  };
}
