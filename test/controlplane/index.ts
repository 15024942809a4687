// The real-control-plane harness: binaries found through KUBEBUILDER_ASSETS, one control plane per suite, a
// stand-in kubelet, and the cluster helpers the suites in test/integration share.
export { controlPlaneAvailable, controlPlaneVersion, ENABLE_HINT, findAssets, type KubeVersion } from './assets.js';
export {
  startControlPlane,
  freePort,
  type AuditEvent,
  type ControlPlane,
  type ControlPlaneOptions,
} from './controlPlane.js';
export { StandInKubelet, HOSTNAME, ZONE, type KubeletOptions, type NodeOptions, type PodReadiness } from './kubelet.js';
