// Cron expressions checked before node-cron ever sees them. node-cron expands a range such as `0-200000000` into an
// array before validating it (gigabytes, then the process dies), so every number is bounded here first, per field,
// with a plain scan that allocates nothing in proportion to the values. The CRD's pattern rejects numbers of more than
// two digits for the same reason, before the object is stored.

/** Numeric bounds of each field, seconds first (a 5-field expression has no seconds). */
const FIELDS = [
  { name: 'second', min: 0, max: 59 },
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 7 },
] as const;

/** `"…"`-quoted, at most `max` characters of `value` (a bad value can be megabytes long). */
function quoted(value: string, max = 40): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value);
}

/** Why a number-bearing part of one field is out of bounds, or undefined. */
function fieldProblem(text: string, field: (typeof FIELDS)[number]): string | undefined {
  for (const item of text.split(',')) {
    const [range = '', step, extra] = item.split('/');
    if (extra !== undefined) return `${field.name} ${quoted(item)} has more than one step`;
    if (step !== undefined) {
      if (!/^\d{1,2}$/.test(step) || Number(step) < 1 || Number(step) > field.max + 1) {
        return `${field.name} step ${quoted(step)} must be a number from 1 to ${field.max + 1}`;
      }
    }
    for (const bound of range.split('-')) {
      if (!/^\d+$/.test(bound)) continue; // *, ?, names (JAN, MON) and L/W/# forms: node-cron judges those
      const n = bound.length > 2 ? Infinity : Number(bound);
      if (n < field.min || n > field.max) {
        return `${field.name} ${quoted(bound)} is out of range ${field.min}-${field.max}`;
      }
    }
  }
  return undefined;
}

/**
 * Why `schedule` is not an acceptable cron expression (5 fields, or 6 with seconds first, every number within its
 * field's bounds), or undefined. `validate` is node-cron's own check, called only once the bounds hold.
 */
export function cronProblem(schedule: string, validate: (expression: string) => boolean): string | undefined {
  if (schedule.length > 128) return `must be at most 128 characters (got ${schedule.length}: ${quoted(schedule)})`;
  const parts = schedule.trim().split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) {
    return `must be a cron expression with 5 fields, or 6 with seconds first (got ${parts.length} in ${quoted(schedule)})`;
  }
  const fields = parts.length === 6 ? FIELDS : FIELDS.slice(1);
  for (let i = 0; i < parts.length; i++) {
    const problem = fieldProblem(parts[i]!, fields[i]!);
    if (problem !== undefined) return `${quoted(schedule)}: ${problem}`;
  }
  return validate(schedule) ? undefined : `${quoted(schedule)} is not a valid cron expression`;
}
