// A pod's container statuses → what the housekeeping strategies read: restart counts, and the reasons and exit
// codes of containers that are not running (PodInfo.statusDetail; ephemeral containers' reasons only, for podLifeTime's
// includingEphemeralContainers). A running container with no status reason adds
// nothing, so most pods of a large cluster carry two numbers and no object.
import { intern } from '../../model/intern.js';
import { isObj, type Obj } from '../../model/rawJson.js';
import type { PodStatusDetail } from '../../model/types.js';
import { EMPTY, getList, getString } from './fields.js';

interface ContainerSummary {
  restarts: number;
  reasons: string[] | undefined;
  exitCodes: number[] | undefined;
}

function summarise(status: Obj | undefined, key: string): ContainerSummary {
  const out: ContainerSummary = { restarts: 0, reasons: undefined, exitCodes: undefined };
  const list = getList(status, key, 'status');
  if (list === undefined) return out;
  for (const c of list) {
    if (!isObj(c)) continue;
    const count = c['restartCount'];
    if (typeof count === 'number' && Number.isSafeInteger(count) && count > 0) out.restarts += count;
    const state = c['state'];
    if (!isObj(state)) continue;
    for (const which of ['waiting', 'terminated'] as const) {
      const s = state[which];
      if (!isObj(s)) continue;
      const reason = s['reason'];
      if (typeof reason === 'string' && reason !== '') (out.reasons ??= []).push(intern(reason));
      const code = s['exitCode'];
      if (which === 'terminated' && typeof code === 'number' && Number.isSafeInteger(code)) {
        (out.exitCodes ??= []).push(code);
      }
    }
  }
  return out;
}

export interface PodStatusSummary {
  readonly restarts: number;
  readonly initRestarts: number;
  readonly statusDetail: PodStatusDetail | undefined;
}

export function podStatusSummary(status: Obj | undefined): PodStatusSummary {
  const main = summarise(status, 'containerStatuses');
  const init = summarise(status, 'initContainerStatuses');
  const ephemeral = summarise(status, 'ephemeralContainerStatuses');
  const reasonText = getString(status, 'reason', 'status');
  const reason = reasonText === undefined || reasonText === '' ? undefined : intern(reasonText);
  const detail =
    reason === undefined &&
    main.reasons === undefined &&
    main.exitCodes === undefined &&
    init.reasons === undefined &&
    init.exitCodes === undefined &&
    ephemeral.reasons === undefined
      ? undefined
      : {
          reason,
          reasons: main.reasons ?? EMPTY,
          initReasons: init.reasons ?? EMPTY,
          exitCodes: main.exitCodes ?? EMPTY,
          initExitCodes: init.exitCodes ?? EMPTY,
          ...(ephemeral.reasons !== undefined ? { ephemeralReasons: ephemeral.reasons } : {}),
        };
  return { restarts: main.restarts, initRestarts: init.restarts, statusDetail: detail };
}
