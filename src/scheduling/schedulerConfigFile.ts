// `--scheduler-config FILE`: the file read and parsed (schedulerConfig.ts), its problems turned into the InputError
// every bad input gets (exit 2, naming the file and the field).
import { InputError } from '../errors.js';
import { readInputFile } from '../snapshot/load.js';
import type { SchedulerProfiles } from './profile.js';
import { parseSchedulerConfig } from './schedulerConfig.js';

/** The profiles the file describes (each by its schedulerName); warnings (what the prediction cannot follow) go to `warn`. */
export function loadSchedulerConfig(path: string, warn: (line: string) => void = () => {}): SchedulerProfiles {
  const result = parseSchedulerConfig(readInputFile(path), path);
  if (!result.ok) {
    const [first, ...rest] = result.problems;
    const more = rest.length === 0 ? '' : ` (and ${rest.length} more problem${rest.length === 1 ? '' : 's'})`;
    throw new InputError(
      path,
      'KubeSchedulerConfiguration',
      first?.field || undefined,
      `${first?.problem ?? 'invalid'}${more}`,
    );
  }
  for (const line of result.warnings) warn(`warning: ${path}: ${line}`);
  return result.profiles;
}
