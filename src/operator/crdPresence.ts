// Whether the RebalancePolicy CRD is installed, as the policy informer's lists find it. Without the CRD the API server
// answers 404 to every list and watch of rebalancepolicies: the informer retries (with its backoff) forever, which is
// right for an operator that should recover by itself when the CRD is applied, but a user must be told, by name,
// what is missing. So: one error line per transition (missing, back), /readyz fails while it is missing, and
// `run --once` gives up at once with that same line rather than waiting for a sync that cannot happen.
import type { Logger } from 'pino';

export const POLICY_CRD = 'rebalancepolicies.rebalancer.dev';

export const CRD_MISSING_MESSAGE =
  `the CustomResourceDefinition ${POLICY_CRD} is not installed (the API server answers 404 for RebalancePolicies); ` +
  'apply crds/rebalancer.dev_rebalancepolicies.yaml (or kubectl apply -k manifests/)';

function statusOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | null;
  const code = e?.code ?? e?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

export class CrdPresence {
  private missing = false;
  private readonly waiters: Array<(message: string) => void> = [];

  constructor(private readonly logger: Logger) {}

  /** The message while the CRD is missing, else undefined. */
  problem(): string | undefined {
    return this.missing ? CRD_MISSING_MESSAGE : undefined;
  }

  /** Resolves with the message the first time (from now) a list finds the CRD missing. */
  whenMissing(): Promise<string> {
    if (this.missing) return Promise.resolve(CRD_MISSING_MESSAGE);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Wraps the informer's list: a 404 marks the CRD missing, an answer marks it present. Rethrows as it was. */
  watchList<A extends unknown[], R>(list: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return async (...args) => {
      try {
        const answer = await list(...args);
        this.present();
        return answer;
      } catch (err) {
        if (statusOf(err) === 404) this.absent();
        throw err;
      }
    };
  }

  private absent(): void {
    if (this.missing) return;
    this.missing = true;
    this.logger.error({ crd: POLICY_CRD }, CRD_MISSING_MESSAGE);
    for (const resolve of this.waiters.splice(0)) resolve(CRD_MISSING_MESSAGE);
  }

  private present(): void {
    if (!this.missing) return;
    this.missing = false;
    this.logger.info(
      { crd: POLICY_CRD },
      `the CustomResourceDefinition ${POLICY_CRD} is installed again; policies are read`,
    );
  }
}
