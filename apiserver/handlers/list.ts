import { gateOn } from '../config/feature-gates';
import { negotiate } from '../server/negotiation';
import { hasProtobuf } from '../codec/plan';
import { cachedStandIns, readsOf } from '../server/protobuf';
import { toTable } from '../server/table';
import { cborServed, listQuery, reply, type ResourceRequest, protobufServed } from './context';

/** GET collection (4.2 list; 2.3 list shape; 4.6 and 4.7 semantics). */
export async function handleList(r: ResourceRequest): Promise<void> {
  const rendering = negotiate(r.req.headers.accept, { tableAllowed: true, includeObject: r.query.get('includeObject') ?? undefined, protobuf: protobufServed(r), cbor: cborServed(r) });
  // A protobuf list takes the items whose messages are cached without decoding them (EncodedCache).
  const cached = rendering.kind === 'protobuf' && hasProtobuf(r.type.schema);
  const list = await r.store.list(r.type, r.info.namespace, cached ? { ...listQuery(r), stored: cachedStandIns(r.store, r.info.servedGroup) } : listQuery(r));
  if (rendering.kind === 'table') {
    reply(r, 200, toTable(r.type, list.items, list.metadata, rendering), { compress: gateOn(r.gates, 'APIResponseCompression') });
    return;
  }
  reply(r, 200, list, { yaml: rendering.kind === 'yaml', compress: gateOn(r.gates, 'APIResponseCompression'), protobufCache: readsOf(r.store, r.type, false, r.info.servedGroup) });
}
