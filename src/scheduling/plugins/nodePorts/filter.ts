// kube-scheduler's NodePorts filter: a pod whose containers bind host ports cannot go to a node where another pod
// binds the same port and protocol on an overlapping address (0.0.0.0 overlaps every address).
import type { HostPort, NodeInfo, PodInfo } from '../../../model/types.js';
import type { FilterPlugin } from '../../framework/interface.js';
import { podsOnNode, type FilterInput } from '../../framework/nodePods.js';

const WILDCARD = '0.0.0.0';

/** Whether two host ports clash: same port and protocol, and the same address or either one the wildcard. */
export function portsClash(a: HostPort, b: HostPort): boolean {
  return (
    a.port === b.port &&
    a.protocol === b.protocol &&
    (a.hostIP === b.hostIP || a.hostIP === WILDCARD || b.hostIP === WILDCARD)
  );
}

const bindsPorts = (pod: PodInfo): boolean => pod.hostPorts.length > 0;

export function nodePortsProblem(input: FilterInput, node: NodeInfo): string | undefined {
  const wanted = input.pod.hostPorts;
  if (wanted.length === 0) return undefined;
  // The pod being replaced is among them on its own node: terminating, it still holds its ports.
  for (const other of podsOnNode(input.state, node, 'hostPorts', bindsPorts)) {
    for (const want of wanted) {
      const used = other.hostPorts.find((p) => portsClash(want, p));
      if (used === undefined) continue;
      const address = used.hostIP === WILDCARD ? '' : ` on ${used.hostIP}`;
      return `NodePorts: host port ${used.port}/${used.protocol}${address} is taken by pod ${other.namespace}/${other.name}`;
    }
  }
  return undefined;
}

export const nodePortsFilter: FilterPlugin = {
  name: 'NodePorts',
  preFilter: (input) => (input.pod.hostPorts.length === 0 ? undefined : (node) => nodePortsProblem(input, node)),
};
