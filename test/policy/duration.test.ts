// Go duration strings (time.ParseDuration / Duration.String), the policy's duration format.
import { describe, expect, it } from 'vitest';
import { DurationError, parseDuration, parseDurationNs } from '../../src/policy/duration.js';

describe('parseDuration', () => {
  it.each([
    ['0', 0],
    ['+0', 0],
    ['-0', 0],
    ['0s', 0],
    ['90s', 90_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['2h45m30.5s', (2 * 3600 + 45 * 60 + 30.5) * 1000],
    ['300ms', 300],
    ['1.5ms', 1.5],
    ['10us', 0.01],
    ['10µs', 0.01],
    ['10μs', 0.01],
    ['1000ns', 0.001],
    ['.5s', 500],
    ['1.s', 1000],
    ['1h1h', 7_200_000],
    ['-1m', -60_000],
    ['+1m', 60_000],
    ['1m0s', 60_000],
  ])('%s = %d ms', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 9);
  });

  it('counts nanoseconds exactly', () => {
    expect(parseDurationNs('1h2m3s4ms5us6ns')).toBe(3_723_004_005_006n);
    expect(parseDurationNs('0.000000001s')).toBe(1n);
  });

  it.each([
    ['', /invalid duration ""/],
    ['5', /missing unit in duration "5"/],
    ['1.5', /missing unit/],
    ['5d', /unknown unit "d" in duration "5d"/],
    ['1M', /unknown unit "M"/],
    ['5 m', /unknown unit " m"/],
    ['s', /invalid duration "s"/],
    ['.s', /invalid duration/],
    ['-', /invalid duration/],
    ['1h-5m', /unknown unit "h-"/],
    ['3000000h', /too long/],
    [' 5m', /invalid duration/],
  ])('rejects %j', (text, message) => {
    expect(() => parseDuration(text)).toThrow(DurationError);
    expect(() => parseDuration(text)).toThrow(message);
  });
});
