// Impersonation, as kubectl's --as, --as-group, --as-uid and --as-user-extra and a kubeconfig user's `as`,
// `as-groups`, `as-uid` and `as-user-extra` ask for it: Impersonate-* headers on every request, so the API server
// authorizes each request as the impersonated identity (and checks that the base identity may impersonate it).
// Dropping them would run every request with the base identity's privileges, more than the kubeconfig asks for.
import type { OutgoingHttpHeaders } from 'node:http';
import { InputError } from '../errors.js';

export interface Impersonation {
  readonly user: string;
  readonly groups: readonly string[];
  readonly uid?: string;
  readonly extra: ReadonlyMap<string, readonly string[]>;
}

type Obj = Record<string, unknown>;

/** Characters a header name may hold unescaped (RFC 7230 tchar, less '%', which escapes the others), as client-go. */
const HEADER_TOKEN = /[A-Za-z0-9!#$&'*+\-.^_`|~]/;

/** An extra's key as a header name suffix: every other byte percent-encoded (client-go's headerKeyEscape). */
export function extraHeaderKey(key: string): string {
  let out = '';
  for (const ch of key) {
    if (HEADER_TOKEN.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const stringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** The impersonation a kubeconfig user asks for; undefined for none. `where` names the file and user for errors. */
export function impersonationOf(user: Obj, file: string, where: string): Impersonation | undefined {
  const as = user['as'];
  const groups = user['as-groups'];
  const uid = user['as-uid'];
  const extra = user['as-user-extra'];
  if (as !== undefined && typeof as !== 'string')
    throw new InputError(file, undefined, `${where}.as`, 'must be a string');
  if (groups !== undefined && groups !== null && !stringList(groups)) {
    throw new InputError(file, undefined, `${where}.as-groups`, 'must be a list of strings');
  }
  if (uid !== undefined && typeof uid !== 'string') {
    throw new InputError(file, undefined, `${where}.as-uid`, 'must be a string');
  }
  const extras = new Map<string, readonly string[]>();
  if (extra !== undefined && extra !== null) {
    if (typeof extra !== 'object' || Array.isArray(extra)) {
      throw new InputError(file, undefined, `${where}.as-user-extra`, 'must be a map of lists of strings');
    }
    for (const [key, values] of Object.entries(extra as Obj)) {
      if (!stringList(values)) {
        throw new InputError(file, undefined, `${where}.as-user-extra.${key}`, 'must be a list of strings');
      }
      extras.set(key, values);
    }
  }
  const user_ = as ?? '';
  const groupList = stringList(groups) ? groups : [];
  if (user_ === '') {
    if (groupList.length > 0 || (uid ?? '') !== '' || extras.size > 0) {
      throw new InputError(
        file,
        undefined,
        `${where}.as`,
        'is not set: as-groups, as-uid and as-user-extra impersonate a user, so they need one',
      );
    }
    return undefined;
  }
  return { user: user_, groups: groupList, ...(uid !== undefined && uid !== '' ? { uid } : {}), extra: extras };
}

/** Sets the Impersonate-* headers (replacing any a delegate set: client-node knows `as` only). */
export function applyImpersonation(headers: OutgoingHttpHeaders, imp: Impersonation): void {
  for (const name of Object.keys(headers)) if (/^impersonate-/i.test(name)) delete headers[name];
  headers['Impersonate-User'] = imp.user;
  if (imp.groups.length > 0) headers['Impersonate-Group'] = [...imp.groups];
  if (imp.uid !== undefined) headers['Impersonate-Uid'] = imp.uid;
  for (const [key, values] of imp.extra) headers[`Impersonate-Extra-${extraHeaderKey(key)}`] = [...values];
}
