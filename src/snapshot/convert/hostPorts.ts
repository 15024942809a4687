// The host ports a pod's containers bind: what kube-scheduler's NodePorts filter compares between pods on a node.
// Only regular containers count (v1.26 reads spec.containers; init containers have exited before the pod runs).
import { FieldError } from '../../errors.js';
import { intern } from '../../model/intern.js';
import { isObj, typeName, type Obj } from '../../model/rawJson.js';
import type { HostPort } from '../../model/types.js';
import { EMPTY, getEnum, getInt, getList, getString } from './fields.js';

const PROTOCOLS: readonly HostPort['protocol'][] = ['TCP', 'UDP', 'SCTP'];

/** spec.containers[].ports[] with a hostPort; EMPTY for the pods that bind none (nearly all). */
export function hostPortsOf(spec: Obj | undefined): readonly HostPort[] {
  const containers = getList(spec, 'containers', 'spec');
  if (containers === undefined) return EMPTY;
  let out: HostPort[] | undefined;
  for (let i = 0; i < containers.length; i++) {
    const container = containers[i];
    if (!isObj(container)) continue;
    const ports = container['ports'];
    if (ports === undefined || ports === null) continue;
    const path = `spec.containers[${i}]`;
    if (!Array.isArray(ports)) throw new FieldError(`${path}.ports`, `must be a list (got ${typeName(ports)})`);
    for (let j = 0; j < ports.length; j++) {
      const port = ports[j] as unknown;
      const portPath = `${path}.ports[${j}]`;
      if (!isObj(port)) throw new FieldError(portPath, `must be an object (got ${typeName(port)})`);
      const hostPort = getInt(port, 'hostPort', portPath);
      if (hostPort === undefined || hostPort === 0) continue;
      if (hostPort < 0 || hostPort > 65535) throw new FieldError(`${portPath}.hostPort`, 'must be between 1 and 65535');
      const hostIP = getString(port, 'hostIP', portPath) || '0.0.0.0';
      const protocol = getEnum(port, 'protocol', portPath, PROTOCOLS) ?? 'TCP';
      (out ??= []).push({ hostIP: intern(hostIP), protocol, port: hostPort });
    }
  }
  return out ?? EMPTY;
}
