// The watch caches the operator keeps, in the order they start: what each lists and watches, how its objects are
// converted on arrival and which of ClusterCache's handlers receives them. Apart from operator.ts because the list is
// long and says nothing about how the parts are wired; the node informer also tells the triggers what changed, and
// every list of RebalancePolicies tells whether the CRD is installed.
import type { Clock } from '../clock.js';
import type { Logger } from 'pino';
import type { BackoffOptions } from '../kube/backoff.js';
import {
  pageParams,
  SupervisedInformer,
  type InformerDeps,
  type InformerSpec,
  type ListPage,
} from '../kube/informers.js';
import type { KubeClients } from '../kube/kubeClient.js';
import type { NamespaceInfo, NodeInfo, PriorityClassInfo } from '../model/types.js';
import { convertNamespace, convertNode, convertPriorityClass } from '../snapshot/convert.js';
import type { ClusterCache, PdbEntry, PodEntry, PolicyEntry } from './clusterCache.js';
import type { CrdPresence } from './crdPresence.js';
import { POLICY_GROUP, POLICY_PLURAL, POLICY_VERSION } from './status.js';
import { watchNodeChanges } from './triggers.js';
import { volumeInformers } from './volumeInformers.js';

export interface ClusterInformersDeps {
  readonly clients: KubeClients;
  readonly cache: ClusterCache;
  readonly crd: CrdPresence;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The reflector's backoff (client-go's when undefined). */
  readonly backoff: BackoffOptions | undefined;
  /** A node changed after the first sync (what the triggers react to). */
  readonly onNodeChange: (previous: NodeInfo | undefined, next: NodeInfo) => void;
}

function policyInformerSpec(
  clients: KubeClients,
  convert: (raw: unknown) => PolicyEntry,
  crd: CrdPresence,
): InformerSpec<PolicyEntry> {
  return {
    resource: POLICY_PLURAL,
    path: `/apis/${POLICY_GROUP}/${POLICY_VERSION}/${POLICY_PLURAL}`,
    // Every list tells whether the CRD is there (a 404 means it is not installed): crdPresence.ts.
    list: crd.watchList((page?: ListPage) =>
      clients.custom.listClusterCustomObject({
        group: POLICY_GROUP,
        version: POLICY_VERSION,
        plural: POLICY_PLURAL,
        ...pageParams(page),
      }),
    ),
    convert,
  };
}

/** Every informer of the operator, and the two it refers to by name (their sync gates the triggers). */
export function clusterInformers(deps: ClusterInformersDeps) {
  const { clients, cache, crd } = deps;
  const informerDeps: InformerDeps = {
    clock: deps.clock,
    logger: deps.logger,
    newWatch: () => clients.newWatch(),
    ...(deps.backoff !== undefined ? { backoff: deps.backoff } : {}),
  };
  const nodeInformer: SupervisedInformer<NodeInfo> = new SupervisedInformer<NodeInfo>(
    {
      resource: 'nodes',
      path: '/api/v1/nodes',
      list: (page) => clients.core.listNode(pageParams(page)),
      convert: convertNode,
    },
    watchNodeChanges(
      cache.nodeHandlers,
      (name) => cache.node(name),
      () => nodeInformer.synced(),
      deps.onNodeChange,
    ),
    informerDeps,
  );
  const policyInformer = new SupervisedInformer<PolicyEntry>(
    policyInformerSpec(clients, cache.convertPolicy, crd),
    cache.policyHandlers,
    informerDeps,
  );
  const informers = [
    new SupervisedInformer<PriorityClassInfo>(
      {
        resource: 'priorityclasses',
        path: '/apis/scheduling.k8s.io/v1/priorityclasses',
        list: (page) => clients.scheduling.listPriorityClass(pageParams(page)),
        convert: convertPriorityClass,
      },
      cache.priorityClassHandlers,
      informerDeps,
    ),
    new SupervisedInformer<NamespaceInfo>(
      {
        resource: 'namespaces',
        path: '/api/v1/namespaces',
        list: (page) => clients.core.listNamespace(pageParams(page)),
        convert: convertNamespace,
      },
      cache.namespaceHandlers,
      informerDeps,
    ),
    nodeInformer,
    new SupervisedInformer<PodEntry>(
      {
        resource: 'pods',
        path: '/api/v1/pods',
        list: (page) => clients.core.listPodForAllNamespaces(pageParams(page)),
        convert: cache.convertPod,
      },
      cache.podHandlers,
      informerDeps,
    ),
    new SupervisedInformer<PdbEntry>(
      {
        resource: 'poddisruptionbudgets',
        path: '/apis/policy/v1/poddisruptionbudgets',
        list: (page) => clients.policy.listPodDisruptionBudgetForAllNamespaces(pageParams(page)),
        convert: cache.convertPdb,
      },
      cache.pdbHandlers,
      informerDeps,
    ),
    policyInformer,
    ...volumeInformers(clients, cache, informerDeps),
  ];
  return { nodeInformer, policyInformer, informers };
}
