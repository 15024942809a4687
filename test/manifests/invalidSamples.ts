// Each sample in manifests/samples/invalid/ and what rejects it: a schema error at a path, or a CEL rule's message.
// Checked twice: by test/manifests/crd.test.ts (ajv plus the rules' intent) and by test/integration/install.test.ts
// (the real API server, whose message must name the same field).
export const INVALID_SAMPLES: Readonly<Record<string, { readonly openApi: string } | { readonly cel: string }>> = {
  'bad-cron.yaml': {
    cel: '.spec.schedule: must be a cron expression with 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, each number at most two digits',
  },
  'huge-cron-range.yaml': {
    cel: '.spec.schedule: must be a cron expression with 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, each number at most two digits',
  },
  'bad-duration.yaml': { openApi: '/spec/eviction/minPodAge' },
  'bad-debounce.yaml': { openApi: '/spec/triggers/debounce' },
  'bad-window-cron.yaml': {
    cel: ".spec.windows[0].schedule: a window's schedule must be a cron expression with 5 fields, or 6 with seconds first, each number at most two digits",
  },
  'bad-timezone.yaml': { openApi: '/spec/timeZone' },
  'zero-window-duration.yaml': { cel: ".spec.windows[0].duration: a window's duration must be positive" },
  'negative-maxskew.yaml': { openApi: '/spec/strategies/topologySpread/defaultConstraints/0/maxSkew' },
  'both-value-and-classname.yaml': {
    cel: '.spec.eviction.priorityThreshold: priorityThreshold must set exactly one of value and className',
  },
  'minDomains-with-scheduleanyway.yaml': {
    cel: '.spec.strategies.topologySpread.defaultConstraints[0]: minDomains may only be set when whenUnsatisfiable is DoNotSchedule',
  },
  'include-and-exclude-overlap.yaml': {
    cel: '.spec.namespaces: namespaces.include and namespaces.exclude must not share a namespace',
  },
  'prometheus-with-cpu-thresholds.yaml': {
    cel: ".spec.strategies.lowNodeUtilization: with usage: Prometheus, thresholds and targetThresholds name only MetricResource (the query's value in percent); without it, neither names it",
  },
  'exists-with-values.yaml': {
    cel: '.spec.podSelector.matchExpressions[0]: values must be empty for operators Exists and DoesNotExist',
  },
};

/** The field as the API server names it in an Invalid error: `spec.strategies.topologySpread.defaultConstraints[0]`. */
export function apiServerField(expected: { readonly openApi: string } | { readonly cel: string }): string {
  if ('cel' in expected) return expected.cel.slice(1, expected.cel.indexOf(': '));
  return expected.openApi
    .slice(1)
    .split('/')
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('');
}
