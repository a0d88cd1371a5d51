import type { UserInfo } from '../../../../apiserver/api/user';
import type { RequestInfo } from '../../../../apiserver/server/request-info';

/** A resource request's attributes, as parseRequestInfo would produce them. */
export function res(verb: string, resource: string, o: Partial<RequestInfo> = {}): RequestInfo {
  const [r, sub = ''] = resource.split('/');
  return { isResourceRequest: true, path: '', verb, apiPrefix: 'api', apiGroup: '', apiVersion: 'v1', namespace: '', resource: r, subresource: sub, name: '', ...o };
}

/** A non-resource request. */
export function nonRes(verb: string, path: string): RequestInfo {
  return { isResourceRequest: false, path, verb, apiPrefix: '', apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' };
}

export function user(name: string, ...groups: string[]): UserInfo {
  return { username: name, groups: [...groups, 'system:authenticated'] };
}

/** Polls until fn returns true (the informers apply watch events asynchronously). */
export async function eventually(fn: () => boolean | Promise<boolean>, what = 'condition', timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
