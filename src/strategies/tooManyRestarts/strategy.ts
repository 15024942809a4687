// TooManyRestarts: Running pods whose containers' restart counts sum to podRestartThreshold or more (init
// containers' too with includingInitContainers), most restarts first. A new pod, perhaps on another node, starts
// from a clean state; where it lands is the scheduler's choice, so no landing is required.
import type { PodInfo } from '../../model/types.js';
import { oldestFirst } from '../housekeeping.js';
import type { HousekeepingStrategy } from '../types.js';
import { tooManyRestartsSection, type TooManyRestartsConfig } from './policy.js';

const NAME = 'TooManyRestarts';

function restartsOf(pod: PodInfo, config: TooManyRestartsConfig): number {
  return pod.restarts + (config.includingInitContainers ? pod.initRestarts : 0);
}

export const tooManyRestarts: HousekeepingStrategy<TooManyRestartsConfig, 'tooManyRestarts'> = {
  kind: 'housekeeping',
  name: NAME,
  key: 'tooManyRestarts',
  policy: tooManyRestartsSection,

  phases: () => ['Running'],

  select(ctx, config) {
    const threshold = config.podRestartThreshold;
    const what = config.includingInitContainers ? 'containers and init containers' : 'containers';
    return ctx.pods
      .filter((pod) => pod.phase === 'Running' && restartsOf(pod, config) >= threshold)
      .sort((a, b) => restartsOf(b, config) - restartsOf(a, config) || oldestFirst(a, b))
      .map((pod) => ({
        pod,
        reason: () =>
          `${restartsOf(pod, config)} restarts of its ${what}, at or above podRestartThreshold ${threshold}`,
      }));
  },

  descheduler: {
    plugin: 'RemovePodsHavingTooManyRestarts',
    convertArgs(args, section, notes) {
      // v1alpha1 nests them in podsHavingTooManyRestarts (flattened by the converter).
      if (typeof args['podRestartThreshold'] === 'number') section['podRestartThreshold'] = args['podRestartThreshold'];
      if (typeof args['includingInitContainers'] === 'boolean')
        section['includingInitContainers'] = args['includingInitContainers'];
      const states = Array.isArray(args['states']) ? args['states'] : [];
      if (states.length > 0) {
        notes.push(
          `RemovePodsHavingTooManyRestarts.states ${states.join(', ')}: not carried over: tooManyRestarts acts on ` +
            'Running pods (a pod in CrashLoopBackOff is Running), whatever their containers are waiting for',
        );
      }
    },
  },
};
