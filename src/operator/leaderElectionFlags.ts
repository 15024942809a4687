// The leader-election timings of `run`, named and checked as kube-controller-manager and controller-runtime name and
// check theirs (--leader-elect-lease-duration 15s, --leader-elect-renew-deadline 10s, --leader-elect-retry-period 2s):
// Go durations, lease > renew deadline > retry period × 1.2 (client-go's jitter). Shorter timings hand the Lease
// over sooner after a replica dies, at the price of more Lease requests and a leader that gives up sooner when the
// API server is slow; the defaults suit a cluster.
import { DurationError, parseDuration } from '../policy/duration.js';
import type { LeaderElectionTimings } from './operator.js';

export interface LeaderElectionFlags {
  readonly leaderElectLeaseDuration?: string;
  readonly leaderElectRenewDeadline?: string;
  readonly leaderElectRetryPeriod?: string;
}

/** The flags' defaults, as the elector applies them (src/kube/leaderElection.ts). */
export const LEADER_ELECTION_DEFAULTS = { leaseDuration: '15s', renewDeadline: '10s', retryPeriod: '2s' } as const;

/** client-go's JitterFactor: a retry may come this much later than the period, and must still beat the deadline. */
const JITTER = 1.2;

/** The timings in milliseconds, or the one-line problem with the flags as given. */
export function leaderElectionTimings(
  flags: LeaderElectionFlags,
): { readonly timings: LeaderElectionTimings } | { readonly problem: string } {
  const read = (flag: string, text: string): number | string => {
    let ms: number;
    try {
      ms = parseDuration(text);
    } catch (err) {
      if (err instanceof DurationError) return `invalid --${flag} ${JSON.stringify(text)}: ${err.message}`;
      throw err;
    }
    return ms > 0 ? ms : `--${flag} must be longer than 0 (got ${JSON.stringify(text)})`;
  };
  const lease = read(
    'leader-elect-lease-duration',
    flags.leaderElectLeaseDuration ?? LEADER_ELECTION_DEFAULTS.leaseDuration,
  );
  if (typeof lease === 'string') return { problem: lease };
  const renew = read(
    'leader-elect-renew-deadline',
    flags.leaderElectRenewDeadline ?? LEADER_ELECTION_DEFAULTS.renewDeadline,
  );
  if (typeof renew === 'string') return { problem: renew };
  const retry = read('leader-elect-retry-period', flags.leaderElectRetryPeriod ?? LEADER_ELECTION_DEFAULTS.retryPeriod);
  if (typeof retry === 'string') return { problem: retry };
  // The Lease stores whole seconds: a fraction would be rounded up there, and every replica judges expiry by it.
  if (!Number.isInteger(lease / 1000)) {
    return {
      problem: `--leader-elect-lease-duration must be whole seconds (the Lease stores seconds), got ${lease} ms`,
    };
  }
  if (!(renew < lease)) {
    return {
      problem: `--leader-elect-renew-deadline (${renew} ms) must be shorter than --leader-elect-lease-duration (${lease} ms)`,
    };
  }
  if (!(renew > JITTER * retry)) {
    return {
      problem: `--leader-elect-renew-deadline (${renew} ms) must be longer than ${JITTER} × --leader-elect-retry-period (${retry} ms)`,
    };
  }
  return { timings: { leaseDurationMs: lease, renewDeadlineMs: renew, retryPeriodMs: retry } };
}
