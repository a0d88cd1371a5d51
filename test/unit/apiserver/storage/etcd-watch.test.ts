import test from 'ava';
import { EventEmitter } from 'node:events';
import type { Etcd3 } from 'etcd3';
import { EtcdWatchStream } from '../../../../apiserver/storage/etcd-watch';

/** The Watch RPC's duplex as EtcdWatchStream uses it: responses are emitted as 'data'; pause/resume are recorded. */
class FakeDuplex extends EventEmitter {
  paused = false;
  write(): boolean {
    return true;
  }
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
  end(): void {}
  cancel(): void {}
}

const event = (rev: number, bytes: number) => ({
  type: 'Put',
  kv: { key: Buffer.from(`/k/${rev}`), value: Buffer.alloc(bytes), mod_revision: String(rev), create_revision: String(rev) },
  prev_kv: { key: Buffer.from(`/k/${rev}`), value: Buffer.alloc(bytes), mod_revision: String(rev - 1), create_revision: String(rev) },
});

test('a stream stops reading once its unread events pass 16 MiB, however few they are, and reads on once they are taken', async (t) => {
  const duplex = new FakeDuplex();
  const client = { watchClient: { watch: () => Promise.resolve(duplex) } } as unknown as Etcd3;
  const w = await EtcdWatchStream.open(client, { key: Buffer.from('/k/') });
  duplex.emit('data', { created: true, canceled: false, events: [] });
  // Eight events of 1 MiB value + 1 MiB previous value: 16 MiB, far below the 1,024-event mark.
  for (let rev = 1; rev <= 7; rev++) duplex.emit('data', { created: false, canceled: false, events: [event(rev, 1024 * 1024)] });
  t.false(duplex.paused, '14 MiB unread: still reading');
  duplex.emit('data', { created: false, canceled: false, events: [event(8, 1024 * 1024)] });
  t.true(duplex.paused, '16 MiB unread: paused (HTTP/2 flow control then holds etcd)');
  const batch = await w.next();
  t.true(Array.isArray(batch) && batch.length === 8);
  t.false(duplex.paused, 'reading again once the events were taken');
  w.close();
});
