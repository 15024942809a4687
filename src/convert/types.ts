// What convert reads from a DeschedulerPolicy and what it produces, shared by its parts.
import type { Obj } from '../model/rawJson.js';

export interface ConvertedPolicy {
  readonly name: string;
  readonly spec: Record<string, unknown>;
  /** One line each: a setting that was not carried over or a default introduced, and why. */
  readonly notes: string[];
  /**
   * Where each part of the spec came from: a spec path (`spec.eviction.maxPerNode`) → the DeschedulerPolicy field
   * (`maxNoOfPodsToEvictPerNode`), so a value the CRD would refuse is reported at the field the user wrote.
   */
  readonly sources: ReadonlyMap<string, string>;
}

/** What one descheduler strategy or plugin asks for, whatever the API version. */
export interface PluginSettings {
  readonly name: string;
  readonly args: Obj;
  /** The field holding its args (`profiles[0].pluginConfig[2].args`, `strategies.PodLifeTime.params`). */
  readonly path: string;
}

/** Settings of the evictor (v1alpha2 DefaultEvictor args, or v1alpha1 top-level fields) and the policy's top level. */
export interface EvictorSettings {
  readonly args: Obj;
  /** The field holding the evictor's args ('' for v1alpha1's top level). */
  readonly path: string;
  readonly top: Obj;
  readonly v1alpha1: boolean;
}

export const EVICTOR = 'DefaultEvictor';
