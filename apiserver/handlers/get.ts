import { gateOn } from '../config/feature-gates';
import { negotiate } from '../server/negotiation';
import { hasProtobuf } from '../codec/plan';
import { cachedStandIns, readsOf } from '../server/protobuf';
import { toTable } from '../server/table';
import { cborServed, reply, type ResourceRequest, protobufServed } from './context';

/** GET item (4.2 get; 4.6 get semantics). */
export async function handleGet(r: ResourceRequest): Promise<void> {
  const rendering = negotiate(r.req.headers.accept, { tableAllowed: true, includeObject: r.query.get('includeObject') ?? undefined, protobuf: protobufServed(r), cbor: cborServed(r) });
  // A protobuf answer whose message is cached needs no decoded object (EncodedCache).
  const cached = rendering.kind === 'protobuf' && hasProtobuf(r.type.schema) ? cachedStandIns(r.store, r.info.servedGroup) : undefined;
  const obj = await r.store.get(r.type, r.info.namespace, r.info.name, r.query.get('resourceVersion') ?? undefined, cached);
  if (rendering.kind === 'table') {
    reply(r, 200, toTable(r.type, [obj], { resourceVersion: obj.metadata.resourceVersion }, rendering), { compress: gateOn(r.gates, 'APIResponseCompression') });
    return;
  }
  reply(r, 200, obj, { yaml: rendering.kind === 'yaml', compress: gateOn(r.gates, 'APIResponseCompression'), protobufCache: readsOf(r.store, r.type, false, r.info.servedGroup) });
}
