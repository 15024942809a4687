// Certificates and keys of one test control plane, made with the openssl CLI (Node's crypto can make keys but cannot
// issue X.509 certificates): a CA, the API server's serving certificate for 127.0.0.1/localhost, a client certificate
// in system:masters (the admin, as in a kubeadm cluster), and the ServiceAccount token signing key pair.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Pki {
  readonly caCert: string;
  readonly caKey: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly adminCert: string;
  readonly adminKey: string;
  /** ServiceAccount token signing key (private) and its public half. */
  readonly saKey: string;
  readonly saPub: string;
}

function openssl(cwd: string, args: readonly string[]): void {
  execFileSync('openssl', [...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function issue(dir: string, name: string, subject: string, extensions?: string): void {
  const args = ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`];
  openssl(dir, [...args, '-subj', subject, ...(extensions ? ['-addext', extensions] : [])]);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    ...(extensions ? ['-copy_extensions', 'copy'] : []),
  ]);
}

export function createPki(dir: string): Pki {
  openssl(
    dir,
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt'].concat([
      '-days',
      '2',
      '-subj',
      '/CN=kube-rebalancer-test-ca',
    ]),
  );
  issue(dir, 'serving', '/CN=kube-apiserver', 'subjectAltName=IP:127.0.0.1,DNS:localhost');
  issue(dir, 'admin', '/O=system:masters/CN=test-admin');
  openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  const at = (f: string): string => join(dir, f);
  return {
    caCert: at('ca.crt'),
    caKey: at('ca.key'),
    servingCert: at('serving.crt'),
    servingKey: at('serving.key'),
    adminCert: at('admin.crt'),
    adminKey: at('admin.key'),
    saKey: at('sa.key'),
    saPub: at('sa.pub'),
  };
}

/** A client certificate signed by the control plane's CA (`createPki` must have run in `dir`). */
export function issueClientCert(dir: string, name: string, subject: string): { certFile: string; keyFile: string } {
  issue(dir, name, subject);
  return { certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`) };
}

/** A kubeconfig file for `server`, authenticating with a client certificate or a bearer token. */
export function writeKubeconfig(
  path: string,
  server: string,
  caCert: string,
  user: { readonly certFile: string; readonly keyFile: string } | { readonly token: string },
): void {
  const credentials =
    'token' in user ? { token: user.token } : { 'client-certificate': user.certFile, 'client-key': user.keyFile };
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server, 'certificate-authority': caCert } }],
    users: [{ name: 'user', user: credentials }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'user' } }],
    'current-context': 'test',
  };
  // JSON is YAML: every kubeconfig reader accepts it.
  writeFileSync(path, JSON.stringify(config, null, 2));
}
