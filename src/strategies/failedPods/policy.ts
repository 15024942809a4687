// spec.strategies.failedPods: its type, defaults and validation.
import { kindProblem, readExitCodes } from '../housekeeping.js';
import type { PolicySection, StrategyConfig } from '../types.js';

export interface FailedPodsConfig extends StrategyConfig {
  readonly reasons: readonly string[];
  readonly exitCodes: readonly number[];
  readonly minPodLifetimeMs: number;
  readonly includingInitContainers: boolean;
  readonly excludeOwnerKinds: readonly string[];
}

export const failedPodsSection: PolicySection<FailedPodsConfig> = {
  fields: ['enabled', 'reasons', 'exitCodes', 'minPodLifetime', 'includingInitContainers', 'excludeOwnerKinds'],
  defaults: {
    // A section present runs (what a policy names is what runs); `enabled: false` keeps it off.
    enabled: true,
    // Empty: any reason.
    reasons: [],
    // Empty: any exit code.
    exitCodes: [],
    // A failed pod is left an hour for someone to read its logs and status before it goes.
    minPodLifetimeMs: 3_600_000,
    // Only the containers' own reasons and exit codes unless asked.
    includingInitContainers: false,
    // A Job counts its failed pods against backoffLimit and keeps them for inspection; its TTL removes them.
    excludeOwnerKinds: ['Job'],
  },
  read: (r, section, path) => ({
    enabled: r.bool(section, 'enabled', path),
    reasons: r.stringList(section, 'reasons', path, (s) =>
      s === '' || s.length > 128 ? 'must be a reason such as Evicted, OOMKilled or Error' : undefined,
    ),
    exitCodes: readExitCodes(r, section, path),
    minPodLifetimeMs: r.duration(section, 'minPodLifetime', path),
    includingInitContainers: r.bool(section, 'includingInitContainers', path),
    excludeOwnerKinds: r.stringList(section, 'excludeOwnerKinds', path, kindProblem),
  }),
};
