// Credentials read without client-node (src/kube/credentials.ts): what each kind of kubeconfig user and cluster
// puts on a request, kubectl's merge of several files, the in-cluster service account with its rotated token, and
// the hand-over to client-node's KubeConfig for what is not read here (exec plugins, auth providers, proxies).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type * as https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inClusterCredentials, loadKubeconfig, StaticCredentials } from '../../src/kube/credentials.js';

const dir = mkdtempSync(join(tmpdir(), 'kr-credentials-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(text: string, name = `kubeconfig-${++n}`): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function kubeconfig(user: string, cluster = 'server: "https://10.0.0.1:6443"', current = 'ctx'): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: c, cluster: {${cluster}}}]`,
    `users: [{name: u, user: {${user}}}]`,
    'contexts: [{name: ctx, context: {cluster: c, user: u}}]',
    `current-context: ${current}`,
  ].join('\n');
}

async function applied(path: string | string[]): Promise<https.RequestOptions> {
  const { credentials } = await loadKubeconfig(Array.isArray(path) ? path : [path], undefined, 'test');
  const options: https.RequestOptions = { headers: { Accept: 'application/json' } };
  await credentials.applyToHTTPSOptions(options);
  return options;
}

/** A TLS option (Buffer) as text. */
const text = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('utf8') : JSON.stringify(v));
const header = (o: https.RequestOptions): unknown => (o.headers as Record<string, unknown>)['Authorization'];

describe('a kubeconfig read without client-node', () => {
  it('a bearer token', async () => {
    const o = await applied(file(kubeconfig('token: abc')));
    expect(header(o)).toBe('Bearer abc');
    expect((o.headers as Record<string, unknown>)['Accept']).toBe('application/json');
  });

  it('basic auth', async () => {
    const o = await applied(file(kubeconfig('username: admin, password: "s3cret"')));
    expect(header(o)).toBe(`Basic ${Buffer.from('admin:s3cret').toString('base64')}`);
  });

  it('client certificate and key as data, CA as data, tls-server-name and insecure-skip-tls-verify', async () => {
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    const o = await applied(
      file(
        kubeconfig(
          `client-certificate-data: ${b64('CERT')}, client-key-data: ${b64('KEY')}`,
          `server: "https://10.0.0.1:6443", certificate-authority-data: ${b64('CA')}, tls-server-name: api.internal, insecure-skip-tls-verify: true`,
        ),
      ),
    );
    expect(text(o.cert)).toBe('CERT');
    expect(text(o.key)).toBe('KEY');
    expect(text(o.ca)).toBe('CA');
    expect(o.servername).toBe('api.internal');
    expect(o.rejectUnauthorized).toBe(false);
    expect(header(o)).toBeUndefined();
  });

  it('file paths relative to the kubeconfig that names them', async () => {
    file('CA-FILE', 'ca.crt');
    file('CERT-FILE', 'client.crt');
    file('KEY-FILE', 'client.key');
    const o = await applied(
      file(
        kubeconfig(
          'client-certificate: client.crt, client-key: client.key',
          'server: "https://10.0.0.1:6443", certificate-authority: ca.crt',
        ),
      ),
    );
    expect([text(o.ca), text(o.cert), text(o.key)]).toEqual(['CA-FILE', 'CERT-FILE', 'KEY-FILE']);
  });

  it('a certificate file that cannot be read is bad input naming the file and field', async () => {
    const path = file(kubeconfig('client-certificate: missing.crt, client-key: missing.key'));
    await expect(loadKubeconfig([path], undefined, path)).rejects.toThrow(
      /users\[u\]\.client-certificate: cannot read/,
    );
  });

  it('several files merge as kubectl merges them: first name and first current-context win', async () => {
    const first = file(
      [
        'clusters: [{name: c, cluster: {server: "https://first:6443"}}]',
        'users: [{name: u, user: {token: first}}]',
        'current-context: ctx',
      ].join('\n'),
    );
    const second = file(kubeconfig('token: second', 'server: "https://second:6443"', 'other'));
    const { credentials } = await loadKubeconfig([first, second], undefined, 'test');
    expect(credentials.getCurrentCluster()?.server).toBe('https://first:6443');
    expect(credentials.getCurrentContext()).toBe('ctx');
    expect(header(await applied([first, second]))).toBe('Bearer first');
  });

  it.each([
    ['no current context', kubeconfig('token: t', undefined, '""'), undefined, /current-context: is not set/],
    ['a context with no cluster', kubeconfig('token: t', undefined, 'nowhere'), undefined, /names context "nowhere"/],
    ['an unknown --context', kubeconfig('token: t'), 'three', /has no context "three" \(it has: ctx\)/],
    [
      'a cluster without a server',
      kubeconfig('token: t', 'insecure-skip-tls-verify: true'),
      undefined,
      /server: is not set/,
    ],
    ['not a mapping', '- a\n- b\n', undefined, /not a YAML mapping/],
    ['not YAML', 'a: [b\n', undefined, /cannot load the kubeconfig/],
  ])('%s is bad input', async (_name, text, context, problem) => {
    await expect(loadKubeconfig([file(text)], context, 'test')).rejects.toThrow(problem);
  });

  it('an exec plugin is handed to client-node, which runs it', async () => {
    const plugin = file(
      '#!/bin/sh\necho \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-exec"}}\'\n',
      'plugin.sh',
    );
    chmodSync(plugin, 0o755);
    const path = file(
      kubeconfig(`exec: {apiVersion: client.authentication.k8s.io/v1, command: "${plugin}", interactiveMode: Never}`),
    );
    const loaded = await loadKubeconfig([path], undefined, 'test');
    expect(loaded.delegatedFor).toBe('exec');
    expect(loaded.credentials).not.toBeInstanceOf(StaticCredentials);
    expect(header(await applied(path))).toBe('Bearer from-exec');
  });
});

describe('the in-cluster service account', () => {
  it('reads the server from the environment and the token again after a minute (rotation)', async () => {
    const sa = mkdtempSync(join(dir, 'sa-'));
    writeFileSync(join(sa, 'ca.crt'), 'CA');
    writeFileSync(join(sa, 'token'), 'one');
    let now = 0;
    const clocked = inClusterCredentials(
      { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      sa,
      () => now,
    );
    expect(clocked.getCurrentCluster().server).toBe('https://[fd00::1]:443');
    const o1: https.RequestOptions = {};
    await clocked.applyToHTTPSOptions(o1);
    expect(header(o1)).toBe('Bearer one');
    writeFileSync(join(sa, 'token'), 'two');
    now = 30_000;
    const o2: https.RequestOptions = {};
    await clocked.applyToHTTPSOptions(o2);
    expect(header(o2)).toBe('Bearer one');
    now = 61_000;
    const o3: https.RequestOptions = {};
    await clocked.applyToHTTPSOptions(o3);
    expect(header(o3)).toBe('Bearer two');
    expect(text(o3.ca)).toBe('CA');
  });

  it('a missing token is bad input naming the folder', () => {
    const sa = mkdtempSync(join(dir, 'sa-empty-'));
    expect(() => inClusterCredentials({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }, sa)).toThrow(
      /in-cluster service account/,
    );
  });
});
