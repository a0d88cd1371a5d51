import test from 'ava';
import { BRIDGE_NF_SYSCTLS, ensureBridgeNetfilter, type BridgeNetfilterHost } from '../../../../agent/podnet/bridge-netfilter';

const [IPV4, IPV6] = BRIDGE_NF_SYSCTLS;

/** A node's sysctls as a map (absent: the module not loaded); `module` gives them when loaded. */
function fakeHost(files: Record<string, string>, module?: Record<string, string> | Error): BridgeNetfilterHost & { files: Map<string, string>; loads: number } {
  const h = {
    files: new Map(Object.entries(files)),
    loads: 0,
    read: (p: string) => h.files.get(p),
    write: (p: string, v: string) => {
      if (!h.files.has(p)) throw new Error(`ENOENT ${p}`);
      h.files.set(p, v);
    },
    loadModule: () => {
      h.loads++;
      if (module instanceof Error) return Promise.reject(module);
      for (const [k, v] of Object.entries(module ?? {})) h.files.set(k, v);
      return Promise.resolve();
    },
  };
  return h;
}

function recordingLog() {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (_o: object, msg: string) => void lines.push({ level, msg });
  return { lines, log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } as never };
}

test('settings off (module loaded): both turned on, the module not loaded again', async (t) => {
  const host = fakeHost({ [IPV4]: '0', [IPV6]: '0' });
  const { log, lines } = recordingLog();
  t.true(await ensureBridgeNetfilter(host, log));
  t.is(host.files.get(IPV4), '1');
  t.is(host.files.get(IPV6), '1');
  t.is(host.loads, 0);
  t.is(lines.filter((l) => l.level === 'info').length, 2);
});

test('already on: nothing written, nothing logged', async (t) => {
  const host = fakeHost({ [IPV4]: '1', [IPV6]: '1' });
  const { log, lines } = recordingLog();
  t.true(await ensureBridgeNetfilter(host, log));
  t.deepEqual(lines, []);
});

test('module missing: loaded, then its settings turned on', async (t) => {
  const host = fakeHost({}, { [IPV4]: '0', [IPV6]: '0' });
  const { log } = recordingLog();
  t.true(await ensureBridgeNetfilter(host, log));
  t.is(host.loads, 1);
  t.is(host.files.get(IPV4), '1');
  t.is(host.files.get(IPV6), '1');
});

test('module that cannot be loaded, or a setting that cannot be written: a warning, false, never a rejection', async (t) => {
  const none = recordingLog();
  t.false(await ensureBridgeNetfilter(fakeHost({}, new Error('modprobe: FATAL: Module br_netfilter not found')), none.log));
  t.regex(none.lines[0]?.msg ?? '', /cannot load br_netfilter/);
  const readOnly = fakeHost({ [IPV4]: '0' });
  readOnly.write = () => {
    throw new Error('EROFS');
  };
  const ro = recordingLog();
  t.false(await ensureBridgeNetfilter(readOnly, ro.log));
  t.is(ro.lines.filter((l) => l.level === 'warn').length, 1);
});

test('no IPv6 setting (a kernel without IPv6): IPv4 alone is enough', async (t) => {
  const host = fakeHost({ [IPV4]: '0' });
  t.true(await ensureBridgeNetfilter(host, recordingLog().log));
  t.is(host.files.get(IPV4), '1');
  t.false(host.files.has(IPV6));
});
