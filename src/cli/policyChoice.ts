// Which RebalancePolicy of a snapshot or a live cluster `plan` and `simulate` apply (DESIGN.md, `--policy-name`):
// the one named, else the only one there is; with several and no name the choice is the user's, so it is refused
// with the list to choose from rather than made silently (alphabetical order once picked the wrong one).
import { InputError } from '../errors.js';
import { isObj } from '../model/rawJson.js';
import type { RawPolicy } from '../snapshot/load.js';

function nameOf(policy: RawPolicy): string | undefined {
  const meta = isObj(policy.raw) ? policy.raw['metadata'] : undefined;
  const name = isObj(meta) ? meta['name'] : undefined;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/**
 * The policy to apply among `policies` (file order), or undefined when there is none and no name was asked for
 * (the CRD's defaults then apply). `file` is the snapshot or the live cluster, for the error.
 */
export function choosePolicy(
  policies: readonly RawPolicy[],
  name: string | undefined,
  file: string,
): RawPolicy | undefined {
  const names = policies.map((p) => nameOf(p) ?? p.object);
  if (name !== undefined) {
    const found = policies.find((p) => nameOf(p) === name);
    if (found !== undefined) return found;
    const known = names.length === 0 ? 'it has no RebalancePolicy' : `it has ${names.join(', ')}`;
    throw new InputError(file, `RebalancePolicy ${name}`, undefined, `not found (--policy-name); ${known}`);
  }
  if (policies.length <= 1) return policies[0];
  throw new InputError(
    file,
    undefined,
    undefined,
    `has ${policies.length} RebalancePolicies (${names.join(', ')}); choose one with --policy-name NAME`,
  );
}
