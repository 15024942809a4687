// Reading the real control plane's audit log while kube-apiserver writes it (no binaries needed): a cut event left
// by a killed API server, continued on the same line by the restarted one, reads as the event that is whole.
import { describe, expect, it } from 'vitest';
import { parseAuditLine } from './controlPlane.js';

const event = (id: string): string =>
  JSON.stringify({ kind: 'Event', apiVersion: 'audit.k8s.io/v1', auditID: id, stage: 'ResponseComplete' });

describe('audit log lines', () => {
  it('reads a whole event', () => {
    expect(parseAuditLine(event('a'), 'audit.log:1').auditID).toBe('a');
  });

  it('reads the whole event that follows a cut one on the same line', () => {
    const cut = event('a').slice(0, 40);
    expect(parseAuditLine(cut + event('b'), 'audit.log:7').auditID).toBe('b');
  });

  it('names the file and line of a line that holds no whole event', () => {
    expect(() => parseAuditLine('{"kind":"Eve', 'audit.log:9')).toThrow(/^audit\.log:9: not an audit event/);
  });
});
