// Credentials read without client-node (src/kube/credentials.ts): what each kind of kubeconfig user and cluster
// puts on a request, kubectl's merge of several files, the in-cluster service account with its rotated token, and
// the hand-over to client-node's KubeConfig for what is not read here (exec plugins, auth providers, proxies).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type * as https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inClusterCredentials, loadKubeconfig, StaticCredentials } from '../../src/kube/credentials.js';
import { excluded, proxyFromEnvironment } from '../../src/kube/proxy.js';

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

  it('client certificate and key as data, CA as data and tls-server-name', async () => {
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    const o = await applied(
      file(
        kubeconfig(
          `client-certificate-data: ${b64('CERT')}, client-key-data: ${b64('KEY')}`,
          `server: "https://10.0.0.1:6443", certificate-authority-data: ${b64('CA')}, tls-server-name: api.internal`,
        ),
      ),
    );
    expect(text(o.cert)).toBe('CERT');
    expect(text(o.key)).toBe('KEY');
    expect(text(o.ca)).toBe('CA');
    expect(o.servername).toBe('api.internal');
    expect(o.rejectUnauthorized).toBeUndefined();
    expect(header(o)).toBeUndefined();
  });

  it('insecure-skip-tls-verify without a CA', async () => {
    const o = await applied(
      file(kubeconfig('token: t', 'server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true')),
    );
    expect(o.rejectUnauthorized).toBe(false);
    expect(o.ca).toBeUndefined();
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
  it('reads the server from the environment, and the token and CA again after a minute (rotation)', async () => {
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
    writeFileSync(join(sa, 'ca.crt'), 'CA-2');
    now = 30_000;
    const o2: https.RequestOptions = {};
    await clocked.applyToHTTPSOptions(o2);
    expect(header(o2)).toBe('Bearer one');
    expect(text(o2.ca)).toBe('CA');
    now = 61_000;
    const o3: https.RequestOptions = {};
    await clocked.applyToHTTPSOptions(o3);
    expect(header(o3)).toBe('Bearer two');
    // The CA is read again too (client-go reloads rotated CA and certificate files).
    expect(text(o3.ca)).toBe('CA-2');
  });

  it('a missing token is bad input naming the folder', () => {
    const sa = mkdtempSync(join(dir, 'sa-empty-'));
    expect(() => inClusterCredentials({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }, sa)).toThrow(
      /in-cluster service account/,
    );
  });
});

describe('client-go rules (issue 22)', () => {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const headers = (o: https.RequestOptions): Record<string, unknown> => o.headers as Record<string, unknown>;

  function execPlugin(token: string): string {
    const plugin = file(
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${token}"}}'\n`,
      `plugin-${++n}.sh`,
    );
    chmodSync(plugin, 0o755);
    return plugin;
  }

  it('merges KUBECONFIG=a:b naming the same cluster twice before delegating an exec user (defect 5)', async () => {
    const plugin = execPlugin('merged-exec');
    const a = file(
      [
        'clusters: [{name: c, cluster: {server: "https://first:6443"}}]',
        `users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: "${plugin}", interactiveMode: Never}}}]`,
        'contexts: [{name: ctx, context: {cluster: c, user: u}}]',
        'current-context: ctx',
      ].join('\n'),
    );
    const b = file(kubeconfig('token: second', 'server: "https://second:6443"', 'ctx'));
    const loaded = await loadKubeconfig([a, b], undefined, 'test', {});
    expect(loaded.delegatedFor).toBe('exec');
    expect(loaded.credentials.getCurrentCluster()?.server).toBe('https://first:6443');
    const o: https.RequestOptions = { headers: {} };
    await loaded.credentials.applyToHTTPSOptions(o);
    expect(header(o)).toBe('Bearer merged-exec');
  });

  it('delegates a relative CA of the second file with the path resolved against that file', async () => {
    const sub = mkdtempSync(join(dir, 'second-'));
    writeFileSync(join(sub, 'ca.crt'), 'SECOND-CA');
    const plugin = execPlugin('x');
    const a = file(
      [
        `users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: "${plugin}", interactiveMode: Never}}}]`,
        'contexts: [{name: ctx, context: {cluster: c, user: u}}]',
        'current-context: ctx',
      ].join('\n'),
    );
    const b = join(sub, 'config');
    writeFileSync(
      b,
      'clusters: [{name: c, cluster: {server: "https://second:6443", certificate-authority: ca.crt}}]\n',
    );
    const { credentials } = await loadKubeconfig([a, b], undefined, 'test', {});
    const o: https.RequestOptions = { headers: {} };
    await credentials.applyToHTTPSOptions(o);
    expect(text(o.ca)).toBe('SECOND-CA');
  });

  it('delegates whole when the cluster, user or context has a key not implemented here', async () => {
    const loaded = await loadKubeconfig(
      [file(kubeconfig('token: t', 'server: "https://10.0.0.1:6443", proxy-url: "http://proxy.local:3128"'))],
      undefined,
      'test',
      {},
    );
    expect(loaded.delegatedFor).toBe('proxy-url');
    expect(loaded.credentials).not.toBeInstanceOf(StaticCredentials);
    const unknown = await loadKubeconfig([file(kubeconfig('token: t, some-new-auth: {a: b}'))], undefined, 'test', {});
    expect(unknown.delegatedFor).toBe('some-new-auth');
    const plain = await loadKubeconfig([file(kubeconfig('token: t, extensions: []'))], undefined, 'test', {});
    expect(plain.delegatedFor).toBeUndefined();
  });

  it('impersonates: as, as-groups, as-uid and as-user-extra become Impersonate-* headers (defect 6)', async () => {
    const o = await applied(
      file(
        kubeconfig(
          'token: t, as: jane, as-groups: [dev, ops], as-uid: "42", as-user-extra: {scopes: [view, edit], "team/name": [blue]}',
        ),
      ),
    );
    expect(headers(o)).toMatchObject({
      Authorization: 'Bearer t',
      'Impersonate-User': 'jane',
      'Impersonate-Group': ['dev', 'ops'],
      'Impersonate-Uid': '42',
      'Impersonate-Extra-scopes': ['view', 'edit'],
      'Impersonate-Extra-team%2Fname': ['blue'],
    });
  });

  it('impersonates with a delegated (exec) user too, groups included (client-node knows `as` only)', async () => {
    const plugin = execPlugin('exec-imp');
    const o = await applied(
      file(
        kubeconfig(
          `as: jane, as-groups: [dev], exec: {apiVersion: client.authentication.k8s.io/v1, command: "${plugin}", interactiveMode: Never}`,
        ),
      ),
    );
    expect(headers(o)).toMatchObject({
      Authorization: 'Bearer exec-imp',
      'Impersonate-User': 'jane',
      'Impersonate-Group': ['dev'],
    });
  });

  it('impersonation groups without a user are bad input', async () => {
    await expect(
      loadKubeconfig([file(kubeconfig('token: t, as-groups: [dev]'))], undefined, 'test', {}),
    ).rejects.toThrow(/users\[u\]\.as: is not set/);
  });

  it('a tokenFile wins over a token', async () => {
    file('FROM-FILE', 'token.txt');
    expect(header(await applied(file(kubeconfig('token: inline, tokenFile: token.txt'))))).toBe('Bearer FROM-FILE');
  });

  it('insecure-skip-tls-verify together with a CA is bad input', async () => {
    const path = file(
      kubeconfig(
        'token: t',
        `server: "https://10.0.0.1:6443", certificate-authority-data: ${b64('CA')}, insecure-skip-tls-verify: true`,
      ),
    );
    await expect(loadKubeconfig([path], undefined, 'test', {})).rejects.toThrow(
      /clusters\[c\]\.insecure-skip-tls-verify: cannot be true together with a certificate-authority/,
    );
  });

  it('refuses to send a token or password over plain http, except to a loopback address', async () => {
    for (const user of ['token: t', 'username: a, password: b', `exec: {command: "${execPlugin('x')}"}`]) {
      await expect(
        loadKubeconfig([file(kubeconfig(user, 'server: "http://10.0.0.1:8080"'))], undefined, 'test', {}),
      ).rejects.toThrow(/clusters\[c\]\.server: is plain http .* in clear text/);
    }
    const local = await loadKubeconfig(
      [file(kubeconfig('token: t', 'server: "http://127.0.0.1:8080"'))],
      undefined,
      'test',
      {},
    );
    expect(local.credentials.getCurrentCluster()?.server).toBe('http://127.0.0.1:8080');
    const anonymous = await loadKubeconfig(
      [file(kubeconfig('', 'server: "http://10.0.0.1:8080"'))],
      undefined,
      'test',
      {},
    );
    expect(anonymous.credentials.getCurrentCluster()?.server).toBe('http://10.0.0.1:8080');
  });

  it('delegates to a proxy from HTTPS_PROXY unless NO_PROXY names the host', async () => {
    const path = file(kubeconfig('token: t'));
    const proxied = await loadKubeconfig([path], undefined, 'test', { HTTPS_PROXY: 'http://proxy.local:3128' });
    expect(proxied.delegatedFor).toBe('proxy (from the environment)');
    const direct = await loadKubeconfig([path], undefined, 'test', {
      HTTPS_PROXY: 'http://proxy.local:3128',
      NO_PROXY: 'localhost,10.0.0.0/8',
    });
    expect(direct.delegatedFor).toBeUndefined();
  });

  it('in a pod, KUBERNETES_SERVICE_PORT must be set too (no guessed port)', () => {
    const sa = mkdtempSync(join(dir, 'sa-port-'));
    writeFileSync(join(sa, 'ca.crt'), 'CA');
    writeFileSync(join(sa, 'token'), 't');
    expect(() => inClusterCredentials({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }, sa)).toThrow(
      /KUBERNETES_SERVICE_PORT is not set/,
    );
  });
});

describe('NO_PROXY', () => {
  it.each([
    ['10.0.0.1', '443', 'example.com', false],
    ['api.example.com', '443', 'example.com', true],
    ['api.example.com', '443', '.example.com', true],
    ['example.com', '443', '.example.com', true],
    ['notexample.com', '443', 'example.com', false],
    ['10.1.2.3', '443', '10.0.0.0/8', true],
    ['11.1.2.3', '443', '10.0.0.0/8', false],
    ['api.local', '6443', 'api.local:443', false],
    ['api.local', '443', 'api.local:443', true],
    ['anything', '443', '*', true],
  ])('%s:%s with NO_PROXY=%s is excluded: %s', (host, port, noProxy, expected) => {
    expect(excluded(host, port, noProxy)).toBe(expected);
  });

  it('HTTP_PROXY for http servers, HTTPS_PROXY for https ones, lower case too', () => {
    expect(proxyFromEnvironment('https://a:6443', { https_proxy: 'http://p:1' })).toBe('http://p:1');
    expect(proxyFromEnvironment('http://a:8080', { HTTPS_PROXY: 'http://p:1' })).toBeUndefined();
    expect(proxyFromEnvironment('http://a:8080', { HTTP_PROXY: 'http://p:2' })).toBe('http://p:2');
  });

  it.each([
    ['https://127.0.0.1:6443'],
    ['https://127.8.9.10:6443'],
    ['https://localhost:6443'],
    ['https://LOCALHOST'],
    ['https://[::1]:6443'],
    ['https://[0:0:0:0:0:0:0:1]:6443'],
    ['https://[::ffff:127.0.0.1]:6443'],
  ])('%s is never proxied from the environment (Go leaves loopback alone)', (server) => {
    expect(proxyFromEnvironment(server, { HTTPS_PROXY: 'http://p:1' })).toBeUndefined();
  });

  it.each([['https://128.0.0.1:6443'], ['https://localhost.corp:6443'], ['https://[::2]:6443'], ['https://10.0.0.1']])(
    '%s is proxied (not loopback)',
    (server) => {
      expect(proxyFromEnvironment(server, { HTTPS_PROXY: 'http://p:1' })).toBe('http://p:1');
    },
  );

  it('a proxy without a scheme is http://, as Go reads it', () => {
    expect(proxyFromEnvironment('https://a:6443', { HTTPS_PROXY: 'proxy.corp:3128' })).toBe('http://proxy.corp:3128');
    expect(proxyFromEnvironment('https://a:6443', { HTTPS_PROXY: 'https://p:1' })).toBe('https://p:1');
  });
});
