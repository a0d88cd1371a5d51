import { ApiError, errors } from '../api/errors';
import { labelSelectorString } from '../api/label-selector';
import { isObject, type KObject } from '../api/types';
import { applyPatch, type PatchFormat } from '../patch/patch-by-format';
import type { ScaleDeclaration } from '../registry/resource-type';
import { scaleType, validateScale } from '../registry/types/autoscaling-scale';
import { checkObject, decodeObject, objectFormat, parseDocument, readBody } from '../server/decode';
import { bodyFormat } from '../server/negotiation';
import { parseFieldValidation } from '../validation/field-validation';
import { cborServed, reply, writeContext, type ResourceRequest } from './context';

/**
 * The generic scale sub-resource (`{resource}/scale`) of every type whose ResourceType declares
 * `scale`, as upstream's ScaleREST of Deployments and ReplicaSets and the scale sub-resource of
 * custom resources: GET answers an autoscaling/v1 Scale built from the object; PUT takes a Scale
 * and PATCH (json, merge, strategic merge) patches the current Scale; either way only the desired
 * replicas are written back to the object, through the store with subresource 'scale' (so the
 * object's own validation, admission and generation rules apply), and the answer is the Scale of
 * the updated object. A resourceVersion in the Scale pins the write (409 when stale), a uid must
 * be the object's (409), as upstream's scaleUpdatedObjectInfo.
 */
export async function handleScale(r: ResourceRequest, decl: ScaleDeclaration): Promise<void> {
  const scaleReq: ResourceRequest = { ...r, type: scaleType };
  if (r.info.verb === 'get') {
    const obj = await r.store.get(r.type, r.info.namespace, r.info.name);
    return reply(scaleReq, 200, scaleOf(obj, decl));
  }
  if (r.info.verb !== 'update' && r.info.verb !== 'patch') {
    throw errors.methodNotAllowed(`the server does not allow this method on the requested resource (${r.req.method ?? ''})`);
  }
  const fv = parseFieldValidation(r.query.get('fieldValidation'));
  const ctx = writeContext(r);
  const body = await readBody(r.req);
  let warnings: string[] = [];
  let wanted: (current: KObject) => KObject;
  if (r.info.verb === 'update') {
    const format = bodyFormat(r.req.headers['content-type'], 'PUT', { protobuf: true, cbor: cborServed(r) });
    const decoded = decodeObject(body, objectFormat(format), scaleType, fv);
    warnings = decoded.warnings;
    wanted = () => decoded.object;
  } else {
    const format = bodyFormat(r.req.headers['content-type'], 'PATCH', { cbor: cborServed(r) });
    if (format === 'apply-patch' || format === 'apply-patch-cbor') throw new ApiError('UnsupportedMediaType', 'server-side apply (application/apply-patch+yaml) is not served by this version of svc-apiserver yet');
    const { value: patch, duplicates } = parseDocument(body, 'json');
    wanted = (current) => {
      const checked = checkObject(applyPatch(format as PatchFormat, scaleOf(current, decl), patch, scaleType.schema), duplicates, scaleType, fv);
      warnings = checked.warnings;
      return checked.object;
    };
  }
  const { object } = await r.store.update(
    r.type,
    r.info.namespace,
    r.info.name,
    (current) => {
      if (!current) throw errors.notFound(r.type.resource, r.info.name, r.type.group);
      const scale = wanted(current);
      if (scale.metadata.name !== undefined && scale.metadata.name !== r.info.name) {
        throw errors.badRequest(`the name of the object (${scale.metadata.name}) does not match the name on the URL (${r.info.name})`);
      }
      const causes = validateScale(scale);
      if (causes.length) throw errors.invalid('Scale', r.info.name, causes, 'autoscaling');
      if (scale.metadata.uid && scale.metadata.uid !== current.metadata.uid) {
        throw errors.conflict(`${r.type.resource}/scale`, r.info.name, `Precondition failed: UID in precondition: ${scale.metadata.uid}, UID in object meta: ${current.metadata.uid}`, r.type.group);
      }
      const next = structuredClone(current);
      setPath(next, decl.specReplicasPath, replicasOf(scale));
      // The Scale's resourceVersion is the object's: set, it pins the write; empty, any version goes.
      if (scale.metadata.resourceVersion) next.metadata.resourceVersion = scale.metadata.resourceVersion;
      else delete next.metadata.resourceVersion;
      return next;
    },
    ctx,
  );
  reply(scaleReq, 200, scaleOf(object, decl), { warnings });
}

function replicasOf(scale: KObject): number {
  const n = isObject(scale.spec) ? scale.spec.replicas : undefined;
  return typeof n === 'number' ? n : 0;
}

/** The autoscaling/v1 Scale of an object (upstream scaleFromDeployment / the CRD scale's conversion). */
export function scaleOf(obj: KObject, decl: ScaleDeclaration): KObject {
  const m = obj.metadata;
  const desired = getPath(obj, decl.specReplicasPath);
  const observed = getPath(obj, decl.statusReplicasPath);
  const sel = decl.labelSelectorPath ? getPath(obj, decl.labelSelectorPath) : undefined;
  const selector = typeof sel === 'string' ? sel : isObject(sel) ? labelSelectorString(sel) : '';
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: typeof desired === 'number' && desired !== 0 ? { replicas: desired } : {},
    status: { replicas: typeof observed === 'number' ? observed : 0, ...(selector ? { selector } : {}) },
  };
}

/** The parts of a simple JSON path (`.spec.replicas`). */
function parts(path: string): string[] {
  return path.split('.').filter((p) => p !== '');
}

function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const p of parts(path)) cur = isObject(cur) ? cur[p] : undefined;
  return cur;
}

function setPath(obj: KObject, path: string, value: unknown): void {
  const ps = parts(path);
  let cur: Record<string, unknown> = obj;
  for (const p of ps.slice(0, -1)) {
    const next = cur[p];
    cur = isObject(next) ? next : (cur[p] = {});
  }
  cur[ps[ps.length - 1]] = value;
}
