// Proxies from the environment, as Go's http.ProxyFromEnvironment (which client-go uses): HTTPS_PROXY for https
// servers, HTTP_PROXY for http ones (upper or lower case), unless NO_PROXY names the host; a proxy without a scheme
// is http://; a server named `localhost` or by a loopback address is never proxied (golang.org/x/net/http/httpproxy
// does the same, without resolving names). A kubeconfig cluster's `proxy-url` wins over the environment and applies
// to every server, loopback too, as Go's http.ProxyURL does. The tunnel is made by client-node's proxy agent: a kubeconfig that needs a
// proxy is delegated to it with the proxy as the cluster's proxy-url (credentials.ts). client-node builds a new agent
// per request; the transport (kubeClient.ts) keeps one pooled keep-alive agent per proxy instead.

/** The proxy URL for requests to `server`, or undefined when none applies. */
export function proxyFromEnvironment(server: string, env: NodeJS.ProcessEnv): string | undefined {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return undefined;
  }
  const pick = (name: string): string => env[name] ?? env[name.toLowerCase()] ?? '';
  const proxy = url.protocol === 'https:' ? pick('HTTPS_PROXY') : pick('HTTP_PROXY');
  if (proxy === '') return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isLoopback(host)) return undefined;
  const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
  return excluded(host, port, pick('NO_PROXY')) ? undefined : withScheme(proxy);
}

/** `localhost`, 127.0.0.0/8 and ::1 (IPv4-mapped loopback included): Go's environment proxy leaves them alone. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost') return true;
  const v4 = ipv4(h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h);
  if (v4 !== undefined) return v4 >>> 24 === 127;
  // An IPv4-mapped address as URL writes it: [::ffff:127.0.0.1] is ::ffff:7f00:1.
  const mapped = /^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(h);
  if (mapped !== null) return parseInt(mapped[1]!, 16) >> 8 === 127;
  return /^(0{0,4}:){2,7}0{0,3}1$/.test(h) || h === '::1';
}

/** `proxy.corp:3128` is http://proxy.corp:3128, as Go reads a proxy without a scheme. */
export function withScheme(proxy: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`;
}

/**
 * NO_PROXY's rules: `*` matches all; an entry matches the host itself and, for a domain (`example.com` or
 * `.example.com`), its subdomains; an entry with `:port` only that port; an IP range in CIDR notation its addresses.
 */
export function excluded(host: string, port: string, noProxy: string): boolean {
  for (const raw of noProxy.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    if (entry.includes('/')) {
      if (inCidr(host, entry)) return true;
      continue;
    }
    const [name, entryPort] = splitPort(entry);
    if (entryPort !== undefined && entryPort !== port) continue;
    const domain = name.replace(/^\./, '');
    const h = host.toLowerCase();
    if (h === domain || h.endsWith(`.${domain}`)) return true;
  }
  return false;
}

function splitPort(entry: string): [string, string | undefined] {
  if (entry.startsWith('[')) {
    const end = entry.indexOf(']');
    const rest = entry.slice(end + 1);
    return [entry.slice(1, end), rest.startsWith(':') ? rest.slice(1) : undefined];
  }
  const colon = entry.lastIndexOf(':');
  if (colon > 0 && entry.indexOf(':') === colon) return [entry.slice(0, colon), entry.slice(colon + 1)];
  return [entry, undefined];
}

/** Whether an IPv4 address lies in an IPv4 CIDR range (IPv6 ranges are compared as exact prefixes of text). */
function inCidr(host: string, cidr: string): boolean {
  const [base, bitsText] = cidr.split('/');
  const bits = Number(bitsText);
  const a = ipv4(host);
  const b = ipv4(base ?? '');
  if (a === undefined || b === undefined || !Number.isInteger(bits) || bits < 0 || bits > 32) return false;
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (a & mask) >>> 0 === (b & mask) >>> 0;
}

function ipv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let out = 0;
  for (const p of parts) {
    const n = Number(p);
    if (!/^\d{1,3}$/.test(p) || n > 255) return undefined;
    out = out * 256 + n;
  }
  return out >>> 0;
}
