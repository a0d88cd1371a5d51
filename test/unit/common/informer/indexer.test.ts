import test from 'ava';
import { Indexer, NAMESPACE_INDEX } from '../../../../common/informer/indexer';
import { objectKey, splitKey } from '../../../../common/informer/list-watch';

interface Pod {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  node?: string;
}

const pod = (ns: string, name: string, node?: string): Pod => ({ metadata: { name, namespace: ns }, node });

test('keys are namespace/name, or name for cluster-scoped objects', (t) => {
  t.is(objectKey(pod('ns', 'a')), 'ns/a');
  t.is(objectKey({ metadata: { name: 'n1' } }), 'n1');
  t.deepEqual(splitKey('ns/a'), { namespace: 'ns', name: 'a' });
  t.deepEqual(splitKey('n1'), { namespace: '', name: 'n1' });
});

test('get by key, list, and the built-in namespace index', (t) => {
  const ix = new Indexer<Pod>();
  ix.set(pod('a', 'p1'));
  ix.set(pod('a', 'p2'));
  ix.set(pod('b', 'p1'));
  ix.set({ metadata: { name: 'cluster-wide' } });
  t.is(ix.get('a/p2')?.metadata.name, 'p2');
  t.is(ix.get('p2'), undefined);
  t.is(ix.size(), 4);
  t.deepEqual(ix.listKeys().sort(), ['a/p1', 'a/p2', 'b/p1', 'cluster-wide']);
  t.deepEqual(ix.indexKeys(NAMESPACE_INDEX, 'a').sort(), ['a/p1', 'a/p2']);
  t.deepEqual(ix.byIndex(NAMESPACE_INDEX, '').map((p) => p.metadata.name), ['cluster-wide']);
  t.deepEqual(ix.byIndex(NAMESPACE_INDEX, 'none'), []);
  t.throws(() => ix.byIndex('nope', 'x'), { message: /index "nope" does not exist/ });
});

test('custom indexes follow updates and deletes; several values per object; added later indexes what is there', (t) => {
  const ix = new Indexer<Pod>({ node: (p) => (p.node ? [p.node] : []) });
  ix.set(pod('a', 'p1', 'n1'));
  ix.set(pod('a', 'p2', 'n1'));
  ix.set(pod('a', 'p3'));
  t.deepEqual(ix.indexKeys('node', 'n1').sort(), ['a/p1', 'a/p2']);
  const old = ix.set(pod('a', 'p2', 'n2'));
  t.is(old?.node, 'n1', 'set returns the object it replaced');
  t.deepEqual(ix.indexKeys('node', 'n1'), ['a/p1']);
  t.deepEqual(ix.indexKeys('node', 'n2'), ['a/p2']);
  t.is(ix.delete('a/p1')?.metadata.name, 'p1');
  t.is(ix.delete('a/p1'), undefined);
  t.deepEqual(ix.indexKeys('node', 'n1'), []);
  ix.addIndexers({ letters: (p) => [...new Set(p.metadata.name.split(''))] });
  t.deepEqual(ix.indexKeys('letters', 'p').sort(), ['a/p2', 'a/p3']);
  t.deepEqual(ix.indexKeys('letters', '3'), ['a/p3']);
  t.throws(() => ix.addIndexers({ node: () => [] }), { message: /already exists/ });
});
