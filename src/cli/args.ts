// Argument parsers shared by the commands; a bad value is bad input (exit 2).
import { InvalidArgumentError } from 'commander';
import { parseKubeRelease, SUPPORTED_KUBE_VERSIONS, type KubeRelease } from '../model/kubeVersion.js';

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a number > 0');
  return n;
}

/** `--kube-version`: a Kubernetes release (`1.37`, `v1.37.2`); whether it is supported is decided where it is used. */
export function kubeRelease(value: string): KubeRelease & { readonly text: string } {
  const release = parseKubeRelease(value);
  if (release === undefined) {
    throw new InvalidArgumentError(
      `must be a Kubernetes version such as ${SUPPORTED_KUBE_VERSIONS[SUPPORTED_KUBE_VERSIONS.length - 1]} or v1.35.4`,
    );
  }
  return { ...release, text: value };
}
