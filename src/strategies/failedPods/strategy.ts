// FailedPods: pods in phase Failed, older than minPodLifetime (by creationTimestamp, as the descheduler measures),
// optionally only those with one of `reasons` (the pod's status reason, or a container's waiting or terminated
// reason) or `exitCodes`, and not owned by one of `excludeOwnerKinds`. The one strategy that acts on pods that are
// not Running. A Failed pod holds no resources and counts as healthy for no budget: the Eviction API deletes it
// without consulting PodDisruptionBudgets (README, "Housekeeping"), and its owner has already replaced it.
import { stringItems } from '../../model/rawJson.js';
import {
  containerReasons,
  exitCodesOf,
  formatAge,
  oldestFirst,
  ownerKind,
  secondsAsDuration,
} from '../housekeeping.js';
import type { HousekeepingCandidate, HousekeepingStrategy } from '../types.js';
import { failedPodsSection, type FailedPodsConfig } from './policy.js';

const NAME = 'FailedPods';

export const failedPods: HousekeepingStrategy<FailedPodsConfig, 'failedPods'> = {
  kind: 'housekeeping',
  name: NAME,
  key: 'failedPods',
  policy: failedPodsSection,

  phases: () => ['Failed'],

  select(ctx, config) {
    const out: HousekeepingCandidate[] = [];
    // Filtered before sorting: of a large cluster's pods, few are Failed.
    for (const pod of ctx.pods.filter((p) => p.phase === 'Failed').sort(oldestFirst)) {
      const age = ctx.now - pod.createdAt;
      if (age < config.minPodLifetimeMs) continue;
      const kind = ownerKind(pod);
      if (kind !== undefined && config.excludeOwnerKinds.includes(kind)) continue;
      const reasons = [
        ...(pod.statusDetail?.reason !== undefined ? [pod.statusDetail.reason] : []),
        ...containerReasons(pod, config.includingInitContainers),
      ];
      const codes = exitCodesOf(pod, config.includingInitContainers);
      if (config.reasons.length > 0 && !reasons.some((r) => config.reasons.includes(r))) continue;
      if (config.exitCodes.length > 0 && !codes.some((c) => config.exitCodes.includes(c))) continue;
      const reason = (): string => {
        const why = [
          ...(reasons.length > 0 ? [`reason ${[...new Set(reasons)].join(', ')}`] : []),
          ...(codes.length > 0 ? [`exit code ${[...new Set(codes)].join(', ')}`] : []),
        ];
        const detail = why.length > 0 ? ` (${why.join('; ')})` : '';
        return `pod Failed${detail}, created ${formatAge(age)} ago, past minPodLifetime ${formatAge(config.minPodLifetimeMs)}`;
      };
      out.push({ pod, reason });
    }
    return out;
  },

  descheduler: {
    plugin: 'RemoveFailedPods',
    convertArgs(args, section) {
      // v1alpha1 nests them in failedPods (flattened by the converter).
      if (args['reasons'] !== undefined) section['reasons'] = stringItems(args['reasons']);
      if (Array.isArray(args['exitCodes'])) section['exitCodes'] = args['exitCodes'].filter(Number.isInteger);
      const seconds = args['minPodLifetimeSeconds'];
      // The descheduler's default is no minimum: carried over as 0s, not our default 1h.
      section['minPodLifetime'] = typeof seconds === 'number' ? secondsAsDuration(seconds) : '0s';
      if (typeof args['includingInitContainers'] === 'boolean')
        section['includingInitContainers'] = args['includingInitContainers'];
      // The descheduler excludes no owner kind unless told; ours leaves Jobs alone by default.
      section['excludeOwnerKinds'] = stringItems(args['excludeOwnerKinds']);
    },
  },
};
