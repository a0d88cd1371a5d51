import test from 'ava';
import { parse as parseYaml } from 'yaml';
import { Reader } from '../../../../apiserver/codec/reader';
import { makeBuiltinTypes } from '../../../../apiserver/registry/builtin';
import { GroupAliases } from '../../../../apiserver/server/group-alias';
import { openApiV2 } from '../../../../apiserver/server/openapi';
import { openApiV2MediaType, openApiV2Protobuf } from '../../../../apiserver/server/openapi-protobuf';

const PB_CLIENT_GO = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

test('Accept picks JSON or protobuf as upstream’s /openapi/v2 handler does; anything else is refused', (t) => {
  t.is(openApiV2MediaType(undefined), 'json');
  t.is(openApiV2MediaType(''), 'json');
  t.is(openApiV2MediaType('*/*'), 'json');
  t.is(openApiV2MediaType('application/*'), 'json');
  t.is(openApiV2MediaType(PB_CLIENT_GO), 'protobuf');
  t.is(openApiV2MediaType('application/com.github.proto-openapi.spec.v2.v1.0+protobuf'), 'protobuf');
  t.is(openApiV2MediaType(`application/json;q=0.9, ${PB_CLIENT_GO}`), 'protobuf');
  t.is(openApiV2MediaType(`*/*, ${PB_CLIENT_GO}`), 'protobuf', 'the more specific clause first at equal quality');
  t.is(openApiV2MediaType('application/json, */*'), 'json');
  t.is(openApiV2MediaType('application/vnd.kubernetes.protobuf'), undefined);
  t.is(openApiV2MediaType(`${PB_CLIENT_GO};q=0`), undefined);
});

test('a small document byte for byte: fields in number order, named maps, a oneof false written, x- keys as YAML', (t) => {
  const bytes = openApiV2Protobuf({
    swagger: '2.0',
    info: { title: 't', version: 'v' },
    definitions: { a: { type: 'object', additionalProperties: false, 'x-kubernetes-map-type': 'atomic' } },
  });
  const hex = (s: string) => [...Buffer.from(s)];
  // NamedAny {name 1, value 2: Any {yaml 2}}
  const ext = [0x0a, 0x15, ...hex('x-kubernetes-map-type'), 0x12, 0x09, 0x12, 0x07, ...hex('atomic\n')];
  const withExt = [
    ...[0xaa, 0x01, 0x02, 0x10, 0x00], // additional_properties 21 {boolean 2: false}
    ...[0xb2, 0x01, 0x08, 0x0a, 0x06, ...hex('object')], // type 22 {value 1: "object"}
    ...[0xfa, 0x01, ext.length, ...ext], // vendor_extension 31
  ];
  const named = [0x0a, 0x01, ...hex('a'), 0x12, withExt.length, ...withExt];
  const definitions = [0x0a, named.length, ...named];
  t.deepEqual(
    [...bytes],
    [0x0a, 0x03, ...hex('2.0'), 0x12, 0x06, 0x0a, 0x01, 0x74, 0x12, 0x01, 0x76, 0x4a, definitions.length, ...definitions],
  );
});

test('vendor extensions carry their value as YAML, which reads back as the JSON value', (t) => {
  const gvk = [{ group: '', version: 'v1', kind: 'Pod' }];
  const bytes = openApiV2Protobuf({ swagger: '2.0', paths: { '/p': { get: { 'x-kubernetes-group-version-kind': gvk, responses: { '200': { description: 'OK' } } } } } });
  // Document.paths 8 > Paths.path 2 > NamedPathItem.value 2 > PathItem.get 2 > Operation.vendor_extension 13 > NamedAny.value 2 > Any.yaml 2
  const field = (buf: Buffer, path: number[]): Buffer => {
    let cur = buf;
    for (const no of path) {
      const r = new Reader(cur);
      let found: Buffer | undefined;
      while (r.pos < r.end && !found) {
        const tag = r.uint32();
        if (tag >>> 3 === no && (tag & 7) === 2) found = r.bytes();
        else r.skipField(tag & 7);
      }
      if (!found) throw new Error(`no field ${no}`);
      cur = found;
    }
    return cur;
  };
  const yaml = field(bytes, [8, 2, 2, 2, 13, 2, 2]).toString('utf8');
  t.deepEqual(parseYaml(yaml), gvk);
  t.regex(yaml, /^- group: ""\n/);
});

test('every served document converts; a key gnostic has no field for is refused by name', (t) => {
  const aliases = new GroupAliases(['coordination.svc.io', 'rbac.authorization.svc.io', 'certificates.svc.io', 'authorization.svc.io', 'authentication.svc.io', 'events.svc.io'], true);
  const doc = openApiV2(aliases.documentTypes(makeBuiltinTypes()), 'v1.0.0');
  t.true(openApiV2Protobuf(doc).length > 100_000);
  t.throws(() => openApiV2Protobuf({ swagger: '2.0', definitions: { a: { type: 'object', nullable: true } } }), { message: /Document\.definitions\.a\.nullable has no field/ });
  t.throws(() => openApiV2Protobuf({ swagger: '2.0', paths: { '/p': { get: { parameters: [{ name: 'x', in: 'cookie' }] } } } }), { message: /parameters\[0\]\.in is not body/ });
});
