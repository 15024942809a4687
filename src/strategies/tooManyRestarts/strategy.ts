// TooManyRestarts: Running pods whose containers' restart counts sum to podRestartThreshold or more (init
// containers' too with includingInitContainers), most restarts first; with `states`, only those Running (the phase)
// or with a container waiting in CrashLoopBackOff (an init container too with includingInitContainers). A new pod, perhaps on another node, starts
// from a clean state; where it lands is the scheduler's choice, so no landing is required.
import { stringItems } from '../../model/rawJson.js';
import type { PodInfo } from '../../model/types.js';
import { containerReasons, oldestFirst } from '../housekeeping.js';
import type { HousekeepingStrategy } from '../types.js';
import { tooManyRestartsSection, type TooManyRestartsConfig } from './policy.js';

const NAME = 'TooManyRestarts';

function restartsOf(pod: PodInfo, config: TooManyRestartsConfig): number {
  return pod.restarts + (config.includingInitContainers ? pod.initRestarts : 0);
}

/** The state of `states` the pod is in, if any ('' when states is empty: every Running pod counts). */
function stateOf(pod: PodInfo, config: TooManyRestartsConfig): string | undefined {
  const states = config.states ?? [];
  if (states.length === 0) return '';
  if (states.includes(pod.phase)) return pod.phase;
  return containerReasons(pod, config.includingInitContainers).find((r) => states.includes(r));
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
      .filter(
        (pod) => pod.phase === 'Running' && restartsOf(pod, config) >= threshold && stateOf(pod, config) !== undefined,
      )
      .sort((a, b) => restartsOf(b, config) - restartsOf(a, config) || oldestFirst(a, b))
      .map((pod) => ({
        pod,
        reason: () => {
          const state = stateOf(pod, config);
          const inState = state === '' || state === undefined ? '' : `, in state ${state}`;
          return `${restartsOf(pod, config)} restarts of its ${what}, at or above podRestartThreshold ${threshold}${inState}`;
        },
      }));
  },

  descheduler: {
    plugin: 'RemovePodsHavingTooManyRestarts',
    convertArgs(args, section) {
      // v1alpha1 nests them in podsHavingTooManyRestarts (flattened by the converter).
      if (typeof args['podRestartThreshold'] === 'number') section['podRestartThreshold'] = args['podRestartThreshold'];
      if (typeof args['includingInitContainers'] === 'boolean')
        section['includingInitContainers'] = args['includingInitContainers'];
      // Values outside RESTART_STATES the descheduler refuses (convert/pluginRules.ts).
      const states = stringItems(args['states']);
      if (states.length > 0) section['states'] = states;
    },
  },
};
