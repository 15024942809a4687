// A policy's record of how its predictions held (DESIGN.md, "The operator checks its own predictions"), kept in
// `status.landing` so a restart or a new leader carries it on, as cooldowns are carried.
//
// Each replacement that landed counts once: on the predicted target or a node scored equal to it (as predicted), or
// elsewhere. One unscheduled is not counted here: a replacement that cannot be placed is the ReplacementPending
// pause's business. Nor one elsewhere on a node added or changed after the plan read the cluster (a node back from
// NotReady takes every replacement until it fills up): the plan could not see it, and the model is not in question. When UNRELIABLE_AFTER of the last LANDING_WINDOW landed elsewhere, the scheduler is not the one
// the operator models (a configuration it was not given, an out-of-tree plugin, a mutating webhook): the policy
// turns Degraded (PredictionsUnreliable) and evicts nothing by prediction until its spec (generation) or the
// scheduler configuration it predicts with changes. Either change starts a fresh window: the old misses said
// nothing about the new configuration.
import { createHash } from 'node:crypto';
import type { Landing } from './eviction/landing.js';

export const LANDING_WINDOW = 10;
export const UNRELIABLE_AFTER = 3;
export const PREDICTIONS_UNRELIABLE = 'PredictionsUnreliable';

export type CountedOutcome = 'target' | 'tied' | 'elsewhere';

export interface LandingMiss {
  /** `namespace/name` of the evicted pod. */
  readonly pod: string;
  /** `namespace/name` of its replacement. */
  readonly replacement: string;
  /** The target, then the nodes scored equal to it (at most 10). */
  readonly predicted: readonly string[];
  readonly actual: string;
  /** RFC 3339. */
  readonly time: string;
}

export interface UnreliableStatus {
  /** RFC 3339. */
  readonly since: string;
  /** The spec generation it was found under; a new generation lifts it. */
  readonly generation: number;
  /** Fingerprint of the scheduler configuration predictions were made with; another one lifts it. */
  readonly schedulerConfig: string;
  readonly message: string;
}

export interface LandingStatus {
  /** The last landings, oldest first (at most LANDING_WINDOW). */
  readonly recent: readonly CountedOutcome[];
  /** `8/10`: of the recent landings, those on the target or a tied node (the printer column). */
  readonly share: string;
  readonly lastMiss?: LandingMiss;
  readonly unreliable?: UnreliableStatus;
}

const OUTCOMES: readonly string[] = ['target', 'tied', 'elsewhere'];

/** A short, stable name of a scheduler configuration (the parsed profile), for telling two apart. */
export function schedulerConfigFingerprint(profile: unknown): string {
  if (profile === undefined) return 'default';
  const json = JSON.stringify(profile, (_key, value: unknown) =>
    value instanceof Map ? [...value.entries()] : value instanceof Set ? [...value] : value,
  );
  return createHash('sha256').update(json).digest('hex').slice(0, 16);
}

export class LandingRecord {
  private recent: CountedOutcome[];
  private lastMiss: LandingMiss | undefined;
  private unreliable: UnreliableStatus | undefined;

  constructor(persisted: LandingStatus | undefined) {
    this.recent = [...(persisted?.recent ?? [])].slice(-LANDING_WINDOW);
    this.lastMiss = persisted?.lastMiss;
    this.unreliable = persisted?.unreliable;
  }

  /** Why predictions are not acted on under this spec and configuration, or undefined (lifting a stale verdict). */
  unreliableFor(generation: number, schedulerConfig: string): UnreliableStatus | undefined {
    const u = this.unreliable;
    if (u === undefined) return undefined;
    if (u.generation === generation && u.schedulerConfig === schedulerConfig) return u;
    this.unreliable = undefined;
    this.recent = [];
    return undefined;
  }

  /** Counts a landing; returns the verdict when this one made predictions unreliable. */
  add(
    landing: Landing,
    at: { readonly time: string; readonly generation: number; readonly schedulerConfig: string },
  ): UnreliableStatus | undefined {
    if (landing.outcome === 'unscheduled') return undefined;
    // A node that changed after the plan (back from NotReady, uncordoned, new) explains the miss: the model is not
    // in question, so it is neither counted nor taken as the last miss.
    if (landing.nodeChangedSincePlan === true) return undefined;
    this.recent.push(landing.outcome);
    if (this.recent.length > LANDING_WINDOW) this.recent.splice(0, this.recent.length - LANDING_WINDOW);
    if (landing.outcome === 'elsewhere') {
      const { move } = landing;
      this.lastMiss = {
        pod: `${move.pod.namespace}/${move.pod.name}`,
        replacement:
          landing.replacement === undefined ? '' : `${landing.replacement.namespace}/${landing.replacement.name}`,
        predicted: [move.target?.name ?? '', ...move.ties.map((t) => t.name)].filter((n) => n !== '').slice(0, 10),
        actual: landing.node ?? '',
        time: at.time,
      };
    }
    if (this.unreliable !== undefined) return undefined;
    const misses = this.recent.filter((o) => o === 'elsewhere').length;
    if (misses < UNRELIABLE_AFTER) return undefined;
    const miss = this.lastMiss;
    this.unreliable = {
      since: at.time,
      generation: at.generation,
      schedulerConfig: at.schedulerConfig,
      message:
        `${misses} of the last ${this.recent.length} replacements landed elsewhere than predicted` +
        (miss === undefined ? '' : ` (last: ${miss.replacement} on ${miss.actual}, predicted ${miss.predicted[0]})`) +
        '; the cluster schedules differently from the model (a scheduler configuration not given with ' +
        '--scheduler-config, a plugin, a webhook). Nothing is evicted by prediction until the spec or the ' +
        'scheduler configuration changes',
    };
    return this.unreliable;
  }

  status(): LandingStatus | undefined {
    if (this.recent.length === 0 && this.lastMiss === undefined && this.unreliable === undefined) return undefined;
    const asPredicted = this.recent.filter((o) => o !== 'elsewhere').length;
    return {
      recent: [...this.recent],
      share: `${asPredicted}/${this.recent.length}`,
      ...(this.lastMiss !== undefined ? { lastMiss: this.lastMiss } : {}),
      ...(this.unreliable !== undefined ? { unreliable: this.unreliable } : {}),
    };
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** `status.landing` as read back from the API (anything malformed is dropped, never thrown). */
export function readLanding(value: unknown): LandingStatus | undefined {
  if (!isObj(value)) return undefined;
  const recent = (Array.isArray(value['recent']) ? value['recent'] : []).filter(
    (o): o is CountedOutcome => typeof o === 'string' && OUTCOMES.includes(o),
  );
  const m = value['lastMiss'];
  const lastMiss: LandingMiss | undefined = isObj(m)
    ? {
        pod: text(m['pod']),
        replacement: text(m['replacement']),
        predicted: (Array.isArray(m['predicted']) ? m['predicted'] : []).map(text),
        actual: text(m['actual']),
        time: text(m['time']),
      }
    : undefined;
  const u = value['unreliable'];
  const unreliable: UnreliableStatus | undefined =
    isObj(u) && typeof u['generation'] === 'number' && text(u['schedulerConfig']) !== ''
      ? {
          since: text(u['since']),
          generation: u['generation'],
          schedulerConfig: text(u['schedulerConfig']),
          message: text(u['message']),
        }
      : undefined;
  const record = new LandingRecord({
    recent,
    share: '',
    ...(lastMiss !== undefined ? { lastMiss } : {}),
    ...(unreliable !== undefined ? { unreliable } : {}),
  });
  return record.status();
}
