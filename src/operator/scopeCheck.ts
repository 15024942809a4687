// A scope that selects nothing is almost always a mistake (a namespace misspelt or not created yet, a label the pods
// do not carry), and a policy that reports "Ready, 0 skipped" for it hides the mistake. So each cycle checks the
// scope against the cache and says what is wrong in the Ready condition's message and in an Event (DESIGN.md,
// "Reports a user can act on"). Pure: the cache's namespace names and pods in, one line out.
import { namespaceScope } from '../analysis/scope.js';
import { matchesSelector, selectorText } from '../model/labels.js';
import type { PodInfo } from '../model/types.js';
import type { Policy } from '../policy/types.js';

/** What is wrong with the policy's scope, or undefined when it selects at least one pod. */
export function scopeProblem(
  policy: Policy,
  view: { readonly namespaces: ReadonlySet<string>; readonly pods: Iterable<Pick<PodInfo, 'namespace' | 'labels'>> },
): string | undefined {
  const spec = policy.spec;
  const missing = spec.namespaces.include.filter((ns) => !view.namespaces.has(ns));
  const inScope = namespaceScope(spec);
  let inNamespaces = 0;
  let selected = 0;
  for (const pod of view.pods) {
    if (!inScope(pod.namespace)) continue;
    inNamespaces++;
    if (matchesSelector(spec.podSelector, pod.labels)) {
      selected++;
      break;
    }
  }
  const parts: string[] = [];
  if (missing.length > 0) {
    parts.push(
      `spec.namespaces.include names ${missing.length === 1 ? 'a namespace' : 'namespaces'} that ${missing.length === 1 ? 'does' : 'do'} not exist: ${missing.join(', ')}`,
    );
  }
  if (selected === 0) {
    const selector = selectorText(spec.podSelector);
    parts.push(
      inNamespaces > 0 && selector !== ''
        ? `spec.podSelector (${selector}) matches no pod in the policy's namespaces`
        : "the policy's namespaces hold no pod",
    );
  }
  return parts.length === 0 ? undefined : `the scope selects nothing: ${parts.join('; ')}`;
}
