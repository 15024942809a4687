// How an evicted pod leaves its node, as the API server deletes it (pkg/registry/core/pod/strategy.go
// CheckGracefulDelete, apiserver registry/rest/delete.go BeforeDelete and the store's graceful deletion): the grace
// period is the Eviction's deleteOptions.gracePeriodSeconds when the policy sets one, else the pod's
// terminationGracePeriodSeconds (30 when a saved pod does not say, as the API server defaults it), a negative one
// counting as 1.
//
// With a grace period above 0 the pod stays, terminating, until its kubelet has stopped it: the ReplicaSet controller
// creates the replacement as soon as it sees the deletion timestamp, and kube-scheduler places it while the evicted
// pod still holds its node's resources (placement.ts). With 0 the API server writes the deletion timestamp and removes
// the pod in the same request: the controller may create the replacement on that first write, and kube-scheduler may
// place it before or after its own informer has seen the removal. Both happen (issue 28: on a 1.37 control plane one
// replacement of a HighNodeUtilization run was scored with its evicted pod terminating, the next, 100 ms later, with
// it gone), so either outcome is a landing the plan must accept.
import type { PodInfo } from '../model/types.js';

/** The grace period the API server gives when a saved pod does not say (the Pod API's default). */
const DEFAULT_GRACE_SECONDS = 30;

/** Whether evicting `pod` deletes it within the eviction request; `policyGrace` is eviction.gracePeriodSeconds. */
export function deletedAtOnce(pod: PodInfo, policyGrace: number | undefined): boolean {
  const grace = policyGrace ?? pod.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
  return grace === 0;
}
