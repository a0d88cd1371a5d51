import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { WebhookConverter, type ConversionTransport } from '../../../../../apiserver/registry/crd/conversion-webhook';
import { crd } from './crd-fixtures';

// The conversion webhook's ConversionReview and upstream's checks of its answer (webhook_converter.go).

type Rec = Record<string, any>;

const webhookCrd = (reviewVersions: string[] = ['v1']): KObject => {
  const o = crd();
  (o.spec as Rec).conversion = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://conv.example.com/convert' }, conversionReviewVersions: reviewVersions } };
  return o;
};

const obj = (apiVersion: string, name: string, extra: Rec = {}): KObject =>
  ({ apiVersion, kind: 'Widget', metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '7', labels: { a: '1' } }, spec: { size: 1 }, ...extra });

/** A transport that records each review and answers with what answer makes of it. */
function transport(answer: (review: Rec) => unknown): ConversionTransport & { reviews: Rec[] } {
  const reviews: Rec[] = [];
  return {
    reviews,
    post: (_cc, review) => {
      reviews.push(review as Rec);
      return Promise.resolve(answer(review as Rec));
    },
  };
}

/** A well-behaved webhook: sets apiVersion and renames spec.size to spec.count. */
const converting = (review: Rec): Rec => ({
  apiVersion: review.apiVersion,
  kind: 'ConversionReview',
  response: {
    uid: review.request.uid,
    result: { status: 'Success' },
    convertedObjects: review.request.objects.map((o: Rec) => ({ ...o, apiVersion: review.request.desiredAPIVersion, spec: { count: o.spec.size } })),
  },
});

async function failure(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  const err = await p.then(
    () => undefined,
    (e: { code: number; message: string }) => e,
  );
  if (!err) throw new Error('the conversion succeeded');
  return err;
}

test('one review for all the objects at another version; those already there are not sent and keep their place', async (t) => {
  const tr = transport(converting);
  const c = new WebhookConverter(webhookCrd(), 'example.com/v1', tr, () => 'the-uid');
  const at2 = obj('example.com/v2', 'b', { spec: { count: 5 } });
  const out = await c.convert([obj('example.com/v1', 'a'), at2, obj('example.com/v1', 'c')], 'example.com/v2');
  t.is(tr.reviews.length, 1);
  t.like(tr.reviews[0], { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'the-uid', desiredAPIVersion: 'example.com/v2' } });
  t.deepEqual(tr.reviews[0].request.objects.map((o: Rec) => o.metadata.name), ['a', 'c']);
  t.deepEqual(out.map((o) => o.metadata.name), ['a', 'b', 'c']);
  t.is(out[1], at2);
  t.deepEqual(out[0].spec, { count: 1 });
  t.is(out[0].apiVersion, 'example.com/v2');
  // Nothing to convert: no call at all.
  await c.convert([at2], 'example.com/v2');
  t.is(tr.reviews.length, 1);
});

test('the first review version spoken is used; v1beta1 answers are not checked for uid (upstream compatibility)', async (t) => {
  const tr = transport((r) => {
    const a = converting(r);
    a.response.uid = 'other';
    return a;
  });
  const c = new WebhookConverter(webhookCrd(['v2alpha9', 'v1beta1', 'v1']), 'example.com/v1', tr);
  const [out] = await c.convert([obj('example.com/v1', 'a')], 'example.com/v2');
  t.is(tr.reviews[0].apiVersion, 'apiextensions.k8s.io/v1beta1');
  t.is(out.apiVersion, 'example.com/v2');
});

test('v1 answers: apiVersion and kind, the uid, and the result status are checked with upstream messages (500)', async (t) => {
  const cases: Array<[(r: Rec) => unknown, RegExp]> = [
    [(r) => ({ ...converting(r), apiVersion: 'apiextensions.k8s.io/v1beta1' }), /conversion webhook for example\.com\/v1, Kind=Widget failed: expected webhook response of apiextensions\.k8s\.io\/v1, Kind=ConversionReview, got apiextensions\.k8s\.io\/v1beta1, Kind=ConversionReview/],
    [(r) => ({ apiVersion: r.apiVersion, kind: 'ConversionReview' }), /failed: no response provided/],
    [(r) => ({ ...converting(r), response: { ...converting(r).response, uid: 'x' } }), /failed: expected response\.uid="the-uid", got "x"/],
    [(r) => ({ ...converting(r), response: { uid: 'the-uid', result: { status: 'Failure', message: 'cannot convert size' } } }), /conversion webhook for example\.com\/v1, Kind=Widget failed: cannot convert size$/],
    [(r) => ({ ...converting(r), response: { uid: 'the-uid', result: { status: 'Failure' } } }), /failed: response\.result\.status was 'Failure', not 'Success'/],
    [(r) => ({ ...converting(r), response: { uid: 'the-uid', result: { status: 'Success' }, convertedObjects: [] } }), /conversion webhook for example\.com\/v1, Kind=Widget returned 0 objects, expected 1/],
  ];
  for (const [answer, message] of cases) {
    const c = new WebhookConverter(webhookCrd(), 'example.com/v1', transport(answer), () => 'the-uid');
    const err = await failure(c.convert([obj('example.com/v1', 'a')], 'example.com/v2'));
    t.is(err.code, 500);
    t.regex(err.message, message);
  }
});

test('converted objects: apiVersion, kind, name, namespace and uid must hold; metadata is the original with the answer\'s labels and annotations', async (t) => {
  const edit = (f: (o: Rec) => void) => (r: Rec) => {
    const a = converting(r);
    for (const o of a.response.convertedObjects) f(o);
    return a;
  };
  const cases: Array<[(o: Rec) => void, RegExp]> = [
    [(o) => (o.apiVersion = 'example.com/v3'), /returned invalid converted object at index 0: invalid groupVersion \(expected example\.com\/v2, received example\.com\/v3\)/],
    [(o) => (o.kind = 'Gadget'), /returned invalid converted object at index 0: invalid kind \(expected Widget, received Gadget\)/],
    [(o) => (o.metadata = { ...o.metadata, name: 'z' }), /returned invalid converted object at index 0: must have the same name: a != z/],
    [(o) => (o.metadata = { ...o.metadata, uid: 'u2' }), /must have the same UID: uid-a != u2/],
    // Without metadata the name differs first, as upstream checks identity before restoring metadata.
    [(o) => delete o.metadata, /returned invalid converted object at index 0: must have the same name: a != $/],
    [(o) => (o.metadata = 'x'), /must have the same name: a != $/],
    [(o) => (o.metadata = { ...o.metadata, labels: { 'bad key!': 'v' } }), /returned invalid metadata in object at index 0: metadata\.labels: Invalid value: "bad key!"/],
  ];
  for (const [change, message] of cases) {
    const c = new WebhookConverter(webhookCrd(), 'example.com/v1', transport(edit(change)));
    const err = await failure(c.convert([obj('example.com/v1', 'a'), obj('example.com/v1', 'b')], 'example.com/v2'));
    t.is(err.code, 500);
    t.regex(err.message, message);
  }
  // Other metadata changes are undone; labels and annotations are the webhook's.
  const c = new WebhookConverter(
    webhookCrd(),
    'example.com/v1',
    transport(edit((o) => (o.metadata = { ...o.metadata, resourceVersion: '99', finalizers: ['x/y'], labels: { b: '2' }, annotations: { note: 'converted' } }))),
  );
  const [out] = await c.convert([obj('example.com/v1', 'a')], 'example.com/v2');
  t.deepEqual(out.metadata, { name: 'a', namespace: 'default', uid: 'uid-a', resourceVersion: '7', labels: { b: '2' }, annotations: { note: 'converted' } });
});

test('a call that fails is a 500 naming what was converted and the cause (the URL in it)', async (t) => {
  const tr: ConversionTransport = {
    post: () => Promise.reject(new Error('Post "https://conv.example.com/convert?timeout=30s": connect ECONNREFUSED')),
  };
  const c = new WebhookConverter(webhookCrd(), 'example.com/v1', tr);
  const err = await failure(c.convert([obj('example.com/v1', 'a')], 'example.com/v2'));
  t.is(err.code, 500);
  t.is(err.message, 'Internal error occurred: conversion webhook for example.com/v1, Kind=Widget failed: Post "https://conv.example.com/convert?timeout=30s": connect ECONNREFUSED');
});
