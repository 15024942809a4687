// `--log-format text`: the operator's log for a person at a terminal, one line per record with a readable time,
// beside the default JSON lines a log pipeline parses. A pino destination that rewrites each JSON line, so every
// part keeps logging through the one pino logger and the records are the same in both formats.
import type { DestinationStream } from 'pino';

export const LOG_FORMATS = ['json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const LEVELS: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** Fields every record has, shown in the line's head rather than as key=value. */
const HEAD = new Set(['level', 'time', 'msg', 'name', 'pid', 'hostname']);

function valueText(value: unknown): string {
  if (typeof value === 'string') return /[\s="]/.test(value) || value === '' ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

/** One JSON record as `2026-11-27T15:20:01.123Z INFO  message key=value …`; a line that is not JSON as it is. */
export function textLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = typeof record['time'] === 'number' ? new Date(record['time']).toISOString() : '';
  const level = (LEVELS[Number(record['level'])] ?? String(record['level'])).padEnd(5);
  const fields = Object.entries(record)
    .filter(([k]) => !HEAD.has(k))
    .map(([k, v]) => `${k}=${valueText(v)}`);
  const msg = typeof record['msg'] === 'string' ? record['msg'] : '';
  return `${[time, level, msg, ...fields].filter((p) => p !== '').join(' ')}\n`;
}

/** A destination writing text lines to `out`. */
export function textDestination(out: { write(s: string): unknown }): DestinationStream {
  return { write: (line: string) => void out.write(textLine(line)) };
}
