import { randomUUID } from 'node:crypto';
import { ApiError, type Reason } from '../api/errors';
import type { KObject } from '../api/types';
import { applyJsonPatch } from '../patch/json-patch';
import type { AdmissionAttributes } from '../store/write-admission';

/**
 * The AdmissionReview exchanged with a webhook (upstream k8s.io/api/admission/v1 and v1beta1,
 * the same shape): the request the API server sends and the checks of the answer (upstream
 * VerifyAdmissionResponse). The answer must be an AdmissionReview of the request's apiVersion
 * (spec 4.12) carrying the request's uid.
 */

type Rec = Record<string, unknown>;

/** The AdmissionReview versions spoken here, preferred first (v1beta1 only when a hook lists it before v1). */
export const SPOKEN_REVIEW_VERSIONS: readonly string[] = ['v1', 'v1beta1'];

/** The first version of the hook's admissionReviewVersions spoken here (upstream: the hook's order wins). */
export function reviewVersionFor(hookVersions: readonly string[]): string | undefined {
  return hookVersions.find((v) => SPOKEN_REVIEW_VERSIONS.includes(v));
}

/** One admission request's uid, shared by every hook and policy it is shown to. */
const uids = new WeakMap<AdmissionAttributes, string>();
export function uidOf(a: AdmissionAttributes): string {
  let uid = uids.get(a);
  if (!uid) {
    uid = randomUUID();
    uids.set(a, uid);
  }
  return uid;
}

const OPTIONS_KIND: Record<string, string> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' };

/** The request's options as upstream sends them (CreateOptions, UpdateOptions or DeleteOptions; meta.k8s.io/v1). */
function optionsOf(a: AdmissionAttributes): Rec | undefined {
  const kind = OPTIONS_KIND[a.operation];
  if (!kind) return undefined;
  const o: Rec = { kind, apiVersion: 'meta.k8s.io/v1' };
  if (a.dryRun) o.dryRun = ['All'];
  if (kind !== 'DeleteOptions' && a.fieldManager) o.fieldManager = a.fieldManager;
  return o;
}

/** AdmissionRequest (shared by the CEL `request` variable): kind, resource, names, user, objects, dry run and options. */
export function admissionRequest(a: AdmissionAttributes, uid: string): Rec {
  const gvk = { group: a.type.group, version: a.type.version, kind: a.type.kind };
  const gvr = { group: a.type.group, version: a.type.version, resource: a.type.resource };
  const userInfo: Rec = { username: a.user.username, groups: a.user.groups };
  if (a.user.uid) userInfo.uid = a.user.uid;
  if (a.user.extra && Object.keys(a.user.extra).length > 0) userInfo.extra = a.user.extra;
  const req: Rec = {
    uid,
    kind: gvk,
    resource: gvr,
    requestKind: gvk,
    requestResource: gvr,
    name: a.name,
    namespace: a.namespace,
    operation: a.operation,
    userInfo,
    object: a.operation === 'DELETE' ? null : (a.object ?? null),
    oldObject: a.oldObject ?? null,
    dryRun: a.dryRun,
  };
  if (a.subresource) {
    req.subResource = a.subresource;
    req.requestSubResource = a.subresource;
  }
  const options = optionsOf(a);
  if (options) req.options = options;
  return req;
}

/** The body POSTed to a hook. */
export function admissionReview(version: string, request: Rec): Rec {
  return { kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${version}`, request };
}

/** What a hook answered, checked. */
export interface HookAnswer {
  allowed: boolean;
  /** The failure status (message, reason, code) when not allowed. */
  result?: { message?: string; reason?: string; code?: number };
  /** The decoded JSON patch, when the hook sent one. */
  patch?: unknown;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** A hook could not be called or answered something unusable: failurePolicy decides (upstream ErrCallingWebhook). */
export class HookCallError extends Error {
  override readonly name = 'HookCallError';
}

/** A value of the answer as text (upstream prints what it decoded; absent is empty). */
const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
const gvkText = (apiVersion: unknown, kind: unknown): string => `${text(apiVersion)}, Kind=${text(kind)}`;

/** Upstream VerifyAdmissionResponse: the answer's kind, apiVersion and uid, then the response fields. */
export function parseReviewAnswer(body: unknown, version: string, uid: string, mutating: boolean): HookAnswer {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Rec;
  const expected = `admission.k8s.io/${version}`;
  if (b.apiVersion !== expected || b.kind !== 'AdmissionReview') {
    throw new HookCallError(`expected webhook response of ${gvkText(expected, 'AdmissionReview')}, got ${gvkText(b.apiVersion, b.kind)}`);
  }
  const r = (typeof b.response === 'object' && b.response !== null ? b.response : undefined) as Rec | undefined;
  if (!r) throw new HookCallError('webhook response was absent');
  if (r.uid !== uid) throw new HookCallError(`expected response.uid="${uid}", got "${text(r.uid)}"`);
  const answer: HookAnswer = { allowed: r.allowed === true, warnings: [], auditAnnotations: {} };
  const status = r.status as Rec | undefined;
  if (status && typeof status === 'object') {
    answer.result = {
      message: typeof status.message === 'string' ? status.message : undefined,
      reason: typeof status.reason === 'string' ? status.reason : undefined,
      code: typeof status.code === 'number' ? status.code : undefined,
    };
  }
  if (Array.isArray(r.warnings)) answer.warnings = r.warnings.filter((w): w is string => typeof w === 'string');
  if (r.auditAnnotations && typeof r.auditAnnotations === 'object') {
    for (const [k, v] of Object.entries(r.auditAnnotations as Rec)) if (typeof v === 'string') answer.auditAnnotations[k] = v;
  }
  const patch = typeof r.patch === 'string' ? r.patch : '';
  if (patch !== '') {
    if (!mutating) throw new HookCallError('validating webhook may not return response.patch');
    if (r.patchType !== 'JSONPatch') throw new HookCallError(`webhook returned response.patch but not response.patchType JSONPatch (got "${text(r.patchType)}")`);
    try {
      answer.patch = JSON.parse(Buffer.from(patch, 'base64').toString('utf8'));
    } catch (err) {
      throw new HookCallError(`the webhook's JSON patch is not valid JSON: ${(err as Error).message}`);
    }
  } else if (r.patchType !== undefined && r.patchType !== null && r.patchType !== '') {
    throw new HookCallError('webhook returned response.patchType but not response.patch');
  }
  return answer;
}

/** Applies a hook's JSON patch to the object; a patch that does not apply is the hook's failure. */
export function applyHookPatch(object: KObject, patch: unknown): KObject {
  let out: unknown;
  try {
    out = applyJsonPatch(object, patch);
  } catch (err) {
    throw new HookCallError(`JSON patch could not be applied: ${(err as Error).message}`);
  }
  if (typeof out !== 'object' || out === null || Array.isArray(out)) throw new HookCallError('JSON patch did not produce an object');
  return out as KObject;
}

const REASONS: Record<number, Reason> = { 400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict', 413: 'RequestEntityTooLarge', 422: 'Invalid', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable' };

/** Upstream webhookerrors.ToStatusErr: `admission webhook "name" denied the request: <message>`, the hook's code (default 403). */
export function denial(hookName: string, result: HookAnswer['result']): ApiError {
  const deniedBy = `admission webhook "${hookName}" denied the request`;
  const message = result?.message ? `${deniedBy}: ${result.message}` : result?.reason ? `${deniedBy}: ${result.reason}` : `${deniedBy} without explanation`;
  const code = result?.code && result.code >= 400 && result.code < 600 ? result.code : 403;
  const reason = (result?.reason && Object.values(REASONS).includes(result.reason as Reason) ? result.reason : (REASONS[code] ?? 'Forbidden')) as Reason;
  return new ApiError(reason, message, undefined, code);
}

/** What failurePolicy Fail turns a call error into (upstream: an internal error naming the hook). */
export function callFailure(hookName: string, err: Error): ApiError {
  return new ApiError('InternalError', `Internal error occurred: failed calling webhook "${hookName}": ${err.message}`);
}

/** Upstream NewDryRunUnsupportedErr. */
export function dryRunUnsupported(hookName: string): ApiError {
  return new ApiError('BadRequest', `admission webhook "${hookName}" does not support dry run`);
}
