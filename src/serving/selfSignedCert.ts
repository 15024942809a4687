// A self-signed serving certificate for /metrics when --metrics-cert-dir gives none, as kube-scheduler and the
// descheduler make one at start-up. Node.js signs and parses X.509 but cannot build a certificate, so the few DER
// structures of one (RFC 5280) are written here: an ECDSA P-256 key, a random serial, one year of validity, the
// given DNS names and IP addresses as subjectAltName, key usage digitalSignature and extended key usage serverAuth.
// No dependency: node-forge or selfsigned would add ~1.7 MB of JavaScript crypto for these hundred lines, and Node's
// own X509Certificate and TLS handshake check the result in test/metrics/secureServing.test.ts.
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

export interface SelfSignedCert {
  /** PEM certificate. */
  readonly cert: string;
  /** PEM PKCS#8 private key. */
  readonly key: string;
  /** End of validity, epoch ms. */
  readonly notAfter: number;
}

export interface SelfSignedOptions {
  /** Subject common name. */
  readonly commonName: string;
  /** DNS names and IP addresses the certificate is valid for. */
  readonly altNames: readonly string[];
  /**
   * Start of validity; the certificate is valid for `validDays` from it (default 365). Default: an hour before
   * `now`, as client-go backdates its self-signed certificates for clients whose clock runs behind, valid for
   * `validDays` from `now`.
   */
  readonly notBefore?: Date;
  readonly validDays?: number;
  /** Epoch ms (default Date.now()). */
  readonly now?: number;
}

/** How far a self-signed certificate is backdated (client-go's clock-skew allowance). */
export const BACKDATE_MS = 3_600_000;

// DER: tag, definite length, content.
function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let length: Buffer;
  if (n < 0x80) length = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, content]);
}

const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 + n, inner);
const octets = (b: Buffer): Buffer => tlv(0x04, b);
const bitString = (b: Buffer): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), b]));
const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0]));

function integer(bytes: Buffer): Buffer {
  // Positive: a leading 1 bit would read as negative.
  return tlv(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out = [40 * parts[0]! + parts[1]!];
  for (const part of parts.slice(2)) {
    const base128: number[] = [];
    for (let v = part; ; v = Math.floor(v / 128)) {
      base128.unshift((v % 128) | (base128.length > 0 ? 0x80 : 0));
      if (v < 128) break;
    }
    out.push(...base128);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime before 2050, GeneralizedTime from then on (RFC 5280 4.1.2.5). */
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14); // YYYYMMDDHHMMSS
  return date.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`, 'ascii'))
    : tlv(0x18, Buffer.from(`${iso}Z`, 'ascii'));
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  // IPv6: expand `::`, then eight 16-bit groups.
  const [head = '', tail] = ip.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), 2 * i));
  return out;
}

function subjectAltNames(names: readonly string[]): Buffer {
  // GeneralName: dNSName [2] IA5String, iPAddress [7] OCTET STRING (both implicit, primitive).
  const general = names.map((n) => (isIP(n) !== 0 ? tlv(0x87, ipBytes(n)) : tlv(0x82, Buffer.from(n, 'ascii'))));
  return sequence(...general);
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [bool(true)] : []), octets(value));
}

/** A new key and a certificate it signs itself. */
export function selfSignedCert(opts: SelfSignedOptions): SelfSignedCert {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { cert, notAfter } = certificateFor(privateKey, publicKey, opts);
  return { cert, key: exportKey(privateKey), notAfter };
}

function exportKey(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

function certificateFor(
  privateKey: KeyObject,
  publicKey: KeyObject,
  opts: SelfSignedOptions,
): { cert: string; notAfter: number } {
  const validMs = (opts.validDays ?? 365) * 86_400_000;
  const now = opts.now ?? Date.now();
  const notBefore = opts.notBefore ?? new Date(now - BACKDATE_MS);
  const notAfter = new Date((opts.notBefore?.getTime() ?? now) + validMs);
  const name = sequence(set(sequence(oid('2.5.4.3'), utf8(opts.commonName))));
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f || 0x01;
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serial),
    ECDSA_WITH_SHA256,
    name,
    sequence(time(notBefore), time(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(
      3,
      sequence(
        extension('2.5.29.19', true, sequence()), // basicConstraints: not a CA
        extension('2.5.29.15', true, tlv(0x03, Buffer.from([0x07, 0x80]))), // keyUsage: digitalSignature
        extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
        extension('2.5.29.17', false, subjectAltNames(opts.altNames)),
      ),
    ),
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const der = sequence(tbs, ECDSA_WITH_SHA256, bitString(signature));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`,
    notAfter: notAfter.getTime(),
  };
}
