import { randomUUID } from 'node:crypto';
import { errors } from '../../api/errors';
import { labelValueErrors, qualifiedNameErrors } from '../../api/name-validation';
import type { KObject } from '../../api/types';
import type { ObjectConverter } from '../resource-type';
import { arr, rec, str, strs, type JsonMap } from '../obj-access';

/**
 * A CustomResourceDefinition's conversion webhook (`spec.conversion.strategy: Webhook`), as
 * upstream's apiextensions-apiserver webhookConverter: the objects not yet at the wanted version
 * are POSTed in one ConversionReview (the first of conversionReviewVersions we speak, v1 or
 * v1beta1); the answer must be a ConversionReview of that version (v1: apiVersion, kind and uid
 * checked; v1beta1 not, as upstream for compatibility) whose result is Success and whose
 * convertedObjects are as many as were sent, each at the wanted apiVersion, of the same kind,
 * name, namespace and uid. The metadata of the result is the original's, with only the labels and
 * annotations the webhook returned (upstream's restoreObjectMeta). Every failure is a 500
 * "conversion webhook for <apiVersion>, Kind=<kind> ..." in upstream's words.
 */

/** How the review reaches the webhook (wiring: the admission webhooks' HTTPS client). */
export interface ConversionTransport {
  /**
   * POSTs review to the webhook of clientConfig and resolves to the parsed JSON answer, bounded by
   * timeoutSeconds; rejects with an Error whose message says what failed (the URL and the cause).
   */
  post(clientConfig: JsonMap, review: unknown, timeoutSeconds: number): Promise<unknown>;
}

/** Upstream's webhook client default: conversion calls have no per-CRD timeout. */
export const CONVERSION_TIMEOUT_SECONDS = 30;

const REVIEW_GROUP = 'apiextensions.k8s.io';

export class WebhookConverter implements ObjectConverter {
  private readonly clientConfig: JsonMap;
  private readonly reviewVersion: string | undefined;

  constructor(
    crd: KObject,
    readonly storageApiVersion: string,
    private readonly transport: ConversionTransport,
    private readonly newUid: () => string = randomUUID,
  ) {
    const webhook = rec(rec(rec(crd.spec)?.conversion)?.webhook) ?? {};
    this.clientConfig = rec(webhook.clientConfig) ?? {};
    this.reviewVersion = strs(webhook.conversionReviewVersions).find((v) => v === 'v1' || v === 'v1beta1');
  }

  async convert(objs: KObject[], to: string): Promise<KObject[]> {
    const send = objs.filter((o) => o.apiVersion !== to);
    if (send.length === 0) return objs;
    // Upstream names the object (or list) it was asked to convert: here the first one sent.
    const what = `${send[0].apiVersion ?? ''}, Kind=${send[0].kind ?? ''}`;
    if (!this.reviewVersion) throw errors.internal('no supported conversion review versions');
    const uid = this.newUid();
    const apiVersion = `${REVIEW_GROUP}/${this.reviewVersion}`;
    const review = { apiVersion, kind: 'ConversionReview', request: { uid, desiredAPIVersion: to, objects: send } };
    let answer: unknown;
    try {
      answer = await this.transport.post(this.clientConfig, review, CONVERSION_TIMEOUT_SECONDS);
    } catch (err) {
      throw errors.internal(`conversion webhook for ${what} failed: ${(err as Error).message}`);
    }
    const converted = convertedObjects(answer, apiVersion, uid);
    if (typeof converted === 'string') throw errors.internal(`conversion webhook for ${what} failed: ${converted}`);
    if (converted.length !== send.length) throw errors.internal(`conversion webhook for ${what} returned ${converted.length} objects, expected ${send.length}`);
    const single = objs.length === 1;
    let j = 0;
    return objs.map((original) => {
      if (original.apiVersion === to) return original;
      const index = j++;
      const out = rec(converted[index]);
      // Upstream words a single object's problems without "converted" and index for lists.
      const at = single ? 'returned invalid object' : `returned invalid converted object at index ${index}`;
      const metaAt = single ? 'returned invalid metadata' : `returned invalid metadata in object at index ${index}`;
      if (!out) throw errors.internal(`conversion webhook for ${what} ${at}: not an object`);
      if (out.apiVersion !== to) throw errors.internal(`conversion webhook for ${what} ${at}${single ? ' at index 0' : ''}: invalid groupVersion (expected ${to}, received ${str(out.apiVersion) ?? ''})`);
      if (out.kind !== original.kind) throw errors.internal(`conversion webhook for ${what} ${at}${single ? ' at index 0' : ''}: invalid kind (expected ${original.kind ?? ''}, received ${str(out.kind) ?? ''})`);
      const same = sameIdentity(original, out);
      if (same) throw errors.internal(`conversion webhook for ${what} ${at}: ${same}`);
      const meta = restoreObjectMeta(original, out);
      if (typeof meta === 'string') throw errors.internal(`conversion webhook for ${what} ${metaAt}: ${meta}`);
      return { ...out, metadata: meta };
    });
  }
}

/** The answer's convertedObjects, or why it is refused (upstream's getConvertedObjectsFromResponse). */
function convertedObjects(answer: unknown, apiVersion: string, uid: string): unknown[] | string {
  const review = rec(answer) ?? {};
  const v1 = apiVersion.endsWith('/v1');
  if (v1 && (review.apiVersion !== apiVersion || review.kind !== 'ConversionReview')) {
    return `expected webhook response of ${apiVersion}, Kind=ConversionReview, got ${str(review.apiVersion) ?? ''}, Kind=${str(review.kind) ?? ''}`;
  }
  const response = rec(review.response);
  if (!response) return 'no response provided';
  if (v1 && response.uid !== uid) return `expected response.uid="${uid}", got "${str(response.uid) ?? ''}"`;
  const result = rec(response.result) ?? {};
  if (result.status !== 'Success') {
    const message = str(result.message) ?? '';
    return message !== '' ? message : `response.result.status was '${str(result.status) ?? ''}', not 'Success'`;
  }
  return arr(response.convertedObjects);
}

/** Upstream's validateConvertedObject: everything of metadata that identifies the object is kept. */
function sameIdentity(original: KObject, out: JsonMap): string | undefined {
  const meta = rec(out.metadata) ?? {};
  const was = original.metadata;
  if (str(meta.name) !== was.name) return `must have the same name: ${was.name ?? ''} != ${str(meta.name) ?? ''}`;
  if ((str(meta.namespace) ?? '') !== (was.namespace ?? '')) return `must have the same namespace: ${was.namespace ?? ''} != ${str(meta.namespace) ?? ''}`;
  if ((str(meta.uid) ?? '') !== (was.uid ?? '')) return `must have the same UID: ${was.uid ?? ''} != ${str(meta.uid) ?? ''}`;
  return undefined;
}

/** The original's metadata with the labels and annotations the webhook answered (validated), or why not (upstream's restoreObjectMeta). */
function restoreObjectMeta(original: KObject, out: JsonMap): KObject['metadata'] | string {
  if (!('metadata' in out)) return 'missing metadata in converted object';
  const answered = rec(out.metadata);
  if (!answered) return `invalid metadata of type ${typeof out.metadata} in converted object`;
  const meta: JsonMap = structuredClone(original.metadata) as JsonMap;
  for (const field of ['labels', 'annotations'] as const) {
    const value = answered[field];
    if (value === undefined || value === null) {
      delete meta[field];
      continue;
    }
    const map = rec(value);
    if (!map) return `invalid metadata.${field} of type ${typeof value} in converted object`;
    for (const [k, v] of Object.entries(map)) {
      if (typeof v !== 'string') return `metadata.${field}[${k}] must be a string, but is ${typeof v} in converted object`;
    }
    const problems = mapErrors(field, map as Record<string, string>);
    if (problems.length > 0) return problems.length === 1 ? problems[0] : `[${problems.join(', ')}]`;
    meta[field] = map;
  }
  return meta;
}

/** Label keys and values, annotation keys: upstream's ValidateLabels / ValidateAnnotations messages. */
function mapErrors(field: 'labels' | 'annotations', map: Record<string, string>): string[] {
  // Upstream's path for annotations here is metadata.annotation (its own spelling).
  const path = field === 'labels' ? 'metadata.labels' : 'metadata.annotation';
  const out: string[] = [];
  for (const [k, v] of Object.entries(map)) {
    for (const m of qualifiedNameErrors(k.toLowerCase())) out.push(`${path}: Invalid value: ${JSON.stringify(k)}: ${m}`);
    if (field === 'labels') for (const m of labelValueErrors(v)) out.push(`${path}: Invalid value: ${JSON.stringify(v)}: ${m}`);
  }
  return out;
}
