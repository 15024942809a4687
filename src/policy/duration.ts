// Go durations (time.ParseDuration), the format of the policy's minPodAge, replacementTimeout and
// cooldown: a possibly signed sequence of decimal numbers, each with an optional fraction and a unit suffix, such as
// "300ms", "1.5h" or "2h45m". Units: ns, us (or µs / μs), ms, s, m, h. "0" is the only number allowed without a unit.
// Values are returned in milliseconds (fractional below a millisecond); nanoseconds are counted exactly with BigInt.

const UNIT_NS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['µs', 1_000n], // U+00B5 micro sign
  ['μs', 1_000n], // U+03BC Greek mu
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const MAX_NS = 2n ** 63n - 1n;

export class DurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

/** Nanoseconds of a Go duration string; throws DurationError with Go's wording when it is not one. */
export function parseDurationNs(text: string): bigint {
  const quoted = JSON.stringify(text);
  let s = text;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw new DurationError(`invalid duration ${quoted}`);
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0]))) throw new DurationError(`invalid duration ${quoted}`);
    let i = 0;
    while (isDigit(s[i])) i++;
    const whole = s.slice(0, i);
    let fraction = '';
    if (s[i] === '.') {
      const start = ++i;
      while (isDigit(s[i])) i++;
      fraction = s.slice(start, i);
    }
    if (whole === '' && fraction === '') throw new DurationError(`invalid duration ${quoted}`);
    const unitStart = i;
    while (i < s.length && s[i] !== '.' && !isDigit(s[i])) i++;
    const unitText = s.slice(unitStart, i);
    if (unitText === '') throw new DurationError(`missing unit in duration ${quoted}`);
    const unit = UNIT_NS.get(unitText);
    if (unit === undefined) {
      throw new DurationError(
        `unknown unit ${JSON.stringify(unitText)} in duration ${quoted} (use ns, us, ms, s, m or h)`,
      );
    }
    total += BigInt(whole === '' ? '0' : whole) * unit;
    if (fraction !== '') total += (BigInt(fraction) * unit) / 10n ** BigInt(fraction.length);
    if (total > MAX_NS) throw new DurationError(`invalid duration ${quoted} (too long)`);
    s = s.slice(i);
  }
  return negative ? -total : total;
}

/** Milliseconds of a Go duration string (may be negative or fractional); throws DurationError. */
export function parseDuration(text: string): number {
  return Number(parseDurationNs(text)) / 1e6;
}
