import { errors, fieldError, type Cause } from '../api/errors';
import { isObject } from '../api/types';
import { rec, str } from '../registry/obj-access';
import { assignPod, type Assignment } from '../store/assign-pod';
import { parseDocument, readBody } from '../server/decode';
import { bodyFormat } from '../server/negotiation';
import { cborServed, reply, writeContext, type ResourceRequest } from './context';

/**
 * The pods/binding sub-resource (register under '/pods/binding': the core group is ''). POST a
 * core/v1 Binding {metadata {name, namespace}, target {kind Node, name}} to bind the pod to that
 * node, as upstream's BindingREST: spec.nodeName set once together with PodScheduled=True; 409
 * "pod X is already assigned to node Y" when bound. Answers 201 with a Success Status (upstream's
 * reply). Other verbs are 405.
 */
export async function handlePodBinding(r: ResourceRequest): Promise<void> {
  if (r.info.verb !== 'create') {
    throw errors.methodNotAllowed(`the server does not allow this method on the requested resource (${r.req.method ?? ''})`);
  }
  const format = bodyFormat(r.req.headers['content-type'], 'POST', { cbor: cborServed(r) });
  const ctx = writeContext(r);
  const { value } = parseDocument(await readBody(r.req), format === 'yaml' || format === 'cbor' ? format : 'json');
  const assignment = parseBinding(value, r.info.name, r.info.namespace);
  await assignPod(r.store, r.type, r.info.namespace, r.info.name, assignment, ctx, r.now);
  reply(r, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
}

/**
 * Checks a decoded Binding against the request (upstream: name must match the URL, namespace the
 * request's; ValidatePodBinding: target.kind empty or Node, target.name required → 422) and
 * returns what to assign.
 */
export function parseBinding(value: unknown, name: string, namespace: string): Assignment {
  if (!isObject(value)) throw errors.badRequest('the request body must be a JSON or YAML object');
  if (value.apiVersion !== undefined && value.apiVersion !== 'v1') {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
    throw errors.badRequest(`the API version in the data (${String(value.apiVersion)}) does not match the expected API version (v1)`);
  }
  if (value.kind !== undefined && value.kind !== 'Binding') {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
    throw errors.badRequest(`the kind in the data (${String(value.kind)}) does not match the expected kind (Binding)`);
  }
  const meta = rec(value.metadata) ?? {};
  if (str(meta.name) !== name) throw errors.badRequest('name in URL does not match name in Binding object');
  const ns = str(meta.namespace);
  if (ns && ns !== namespace) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  const target = rec(value.target) ?? {};
  const causes: Cause[] = [];
  const kind = str(target.kind) ?? '';
  if (kind !== '' && kind !== 'Node') causes.push(fieldError('target.kind', `Unsupported value: "${kind}": supported values: "Node", "<empty>"`, 'FieldValueNotSupported'));
  const node = str(target.name) ?? '';
  if (node === '') causes.push(fieldError('target.name', 'Required value', 'FieldValueRequired'));
  if (causes.length > 0) throw errors.invalid('Binding', name, causes);
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(rec(meta.annotations) ?? {})) {
    if (typeof v !== 'string') throw errors.badRequest(`metadata.annotations.${k}: must be a string`);
    annotations[k] = v;
  }
  return { node, uid: str(meta.uid) || undefined, resourceVersion: str(meta.resourceVersion) || undefined, annotations };
}
