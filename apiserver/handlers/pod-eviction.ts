import type { AdmissionAttributes } from '../admission/admission';
import { errors } from '../api/errors';
import { isObject, type KObject } from '../api/types';
import { decodeObject as decodeProtobuf, PROTOBUF_MEDIA_TYPE } from '../codec/envelope';
import { rec, str } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import { evictionSchema } from '../registry/types/poddisruptionbudgets';
import { parseDocument, readBody } from '../server/decode';
import { bodyFormat } from '../server/negotiation';
import { evictPod } from '../store/evict-pod';
import { cborServed, reply, writeContext, type ResourceRequest } from './context';
import { deleteOptionsFrom } from './delete-options';

/** The API versions an Eviction body may carry (upstream's EvictionREST.AcceptsGroupVersion). */
const EVICTION_VERSIONS = ['policy/v1', 'policy/v1beta1'];

export interface PodEvictionDeps {
  /** policy/v1 poddisruptionbudgets. */
  podDisruptionBudgets: ResourceType;
  /** The admission chain: an eviction is admitted as a CREATE of pods/eviction (NodeRestriction limits nodes to their own pods). */
  admit: (attrs: AdmissionAttributes) => Promise<void>;
}

/**
 * The pods/eviction sub-resource (register under '/pods/eviction'): POST a policy/v1 (or
 * v1beta1) Eviction — JSON, YAML, CBOR when served, or protobuf as kubectl drain sends it — to
 * evict the pod within its PodDisruptionBudget (store/evict-pod.ts). Answers 201 with a Success
 * Status, as upstream; 429 when the budget allows no disruption now; upstream's 500 Status when
 * several budgets cover the pod. The Eviction's deleteOptions (grace period, preconditions,
 * dryRun) apply to the pod's deletion; dryRun may also come in the query.
 */
export function makePodEvictionHandler(d: PodEvictionDeps): (r: ResourceRequest) => Promise<void> {
  return async (r) => {
    if (r.info.verb !== 'create') {
      throw errors.methodNotAllowed(`the server does not allow this method on the requested resource (${r.req.method ?? ''})`);
    }
    const ctx = writeContext(r);
    const eviction = parseEviction(await decodeBody(r), r.info.name, r.info.namespace);
    const { options, dryRun: bodyDryRun } = deleteOptionsFrom(new URLSearchParams(), rec(eviction.deleteOptions), r.gates);
    delete options.unsafeIgnoreReadError;
    // Upstream propagateDryRun: the query's dryRun, or the body's; both say All, the only value.
    const dryRun = ctx.dryRun || bodyDryRun;
    await d.admit({ operation: 'CREATE', type: r.type, namespace: r.info.namespace, name: r.info.name, subresource: 'eviction', object: eviction, user: r.user, dryRun });
    const outcome = await evictPod(
      r.store,
      { pods: r.type, podDisruptionBudgets: d.podDisruptionBudgets },
      { namespace: r.info.namespace, name: r.info.name, options, dryRun, ctx: { ...ctx, dryRun } },
      r.now,
    );
    if (!outcome.evicted) {
      // Upstream answers this Status as the result of the create, with its code and no reason.
      reply(r, outcome.code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: outcome.message, code: outcome.code });
      return;
    }
    reply(r, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  };
}

async function decodeBody(r: ResourceRequest): Promise<unknown> {
  const body = await readBody(r.req);
  const mediaType = (r.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (mediaType === PROTOBUF_MEDIA_TYPE) return decodeProtobuf(evictionSchema, body);
  const format = bodyFormat(r.req.headers['content-type'], 'POST', { cbor: cborServed(r) });
  return parseDocument(body, format === 'yaml' || format === 'cbor' ? format : 'json').value;
}

/**
 * Checks a decoded Eviction against the request, with upstream's messages: its apiVersion (when
 * given) policy/v1 or policy/v1beta1, kind Eviction, metadata.name the URL's name, and its
 * namespace (when given) the request's.
 */
export function parseEviction(value: unknown, name: string, namespace: string): KObject {
  if (!isObject(value)) throw errors.badRequest('the request body must be a JSON or YAML object');
  if (value.apiVersion !== undefined && !EVICTION_VERSIONS.includes(value.apiVersion as string)) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
    throw errors.badRequest(`the API version in the data (${String(value.apiVersion)}) does not match the expected API version (policy/v1)`);
  }
  if (value.kind !== undefined && value.kind !== 'Eviction') {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
    throw errors.badRequest(`the kind in the data (${String(value.kind)}) does not match the expected kind (Eviction)`);
  }
  const meta = rec(value.metadata) ?? {};
  if (str(meta.name) !== name) throw errors.badRequest('name in URL does not match name in Eviction object');
  const ns = str(meta.namespace);
  if (ns && ns !== namespace) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  if (value.deleteOptions !== undefined && value.deleteOptions !== null && !isObject(value.deleteOptions)) {
    throw errors.badRequest('deleteOptions: Invalid value: must be an object');
  }
  return { ...value, metadata: { ...meta, name, namespace } };
}
