import test from 'ava';
import { PassThrough, Writable } from 'node:stream';
import { isSimCommand, runLine, runSimExec, words, type SimShellContext } from '../../../../agent/cri/sim-shell';
import { tarArchive } from '../../../../agent/cri/sim-tar';
import { untar } from '../../../../agent/cri/sim-tar-command';

function sink(): { w: Writable; text: () => string } {
  let out = '';
  return {
    w: new Writable({
      write(c: Buffer, _e, cb) {
        out += c.toString();
        cb();
      },
    }),
    text: () => out,
  };
}

function ctx(o: Partial<SimShellContext> = {}): { c: SimShellContext; out: () => string; err: () => string } {
  const out = sink();
  const err = sink();
  const files: Record<string, string> = { '/etc/config/a': 'A\n' };
  return {
    c: {
      stdout: out.w,
      stderr: err.w,
      env: { HOSTNAME: 'web', FOO: 'bar' },
      readFile: (p) => (p in files ? Promise.resolve(Buffer.from(files[p])) : Promise.reject(new Error('no'))),
      sleep: () => Promise.resolve(true),
      signal: new AbortController().signal,
      ...o,
    },
    out: out.text,
    err: err.text,
  };
}

test('words: blanks split, quotes group, backslashes escape', (t) => {
  t.deepEqual(words(`echo "a b" 'c  d' e\\ f ""`), ['echo', 'a b', 'c  d', 'e f', '']);
});

test('command lines: ; && || with exit codes, exit ends the line with its code', async (t) => {
  const x = ctx();
  t.is(await runLine('echo one; false && echo skipped || echo two; exit 4; echo never', x.c), 4);
  t.is(x.out(), 'one\ntwo\n');
  const y = ctx();
  t.is(await runLine('printenv FOO && hostname && cat /etc/config/a /missing', y.c), 1);
  t.is(y.out(), 'bar\nweb\nA\n');
  t.is(y.err(), 'cat: /missing: No such file or directory\n');
  t.is(await runLine('nosuch', ctx().c), 127);
});

test('a terminal\'s ^D ends an interactive sh (its last code), stdin still open; without a tty it is a plain byte', async (t) => {
  const stdin = new PassThrough();
  const x = ctx({ stdin, tty: true });
  const done = runSimExec(['sh'], x.c);
  stdin.write('echo typed\rfalse\r\x04echo never\r');
  t.is(await done, 1);
  t.is(x.out(), 'typed\n');
  const raw = new PassThrough();
  const y = ctx({ stdin: raw });
  const sh = runSimExec(['sh'], y.c);
  raw.end('echo \x04kept\n');
  t.is(await sh, 0);
  t.is(y.out(), '\x04kept\n');
});

test('cat copies stdin; sh without -c reads its lines until exit', async (t) => {
  const stdin = new PassThrough();
  const x = ctx({ stdin });
  const done = runSimExec(['sh'], x.c);
  stdin.write('echo first\nexit 9\necho never\n');
  t.is(await done, 9);
  t.is(x.out(), 'first\n');
  const cin = new PassThrough();
  const y = ctx({ stdin: cin });
  const cat = runSimExec(['/bin/cat'], y.c);
  cin.end('piped');
  t.is(await cat, 0);
  t.is(y.out(), 'piped');
  t.true(isSimCommand('/usr/bin/env'));
  t.false(isSimCommand('python3'));
});

test('stty size answers the last terminal size; sleep ended early is 130', async (t) => {
  const x = ctx({ terminalSize: () => ({ width: 100, height: 30 }), sleep: () => Promise.resolve(false) });
  t.is(await runLine('stty size; sleep 5', x.c), 130);
  t.is(x.out(), '30 100\n');
});

test('tar for kubectl cp: x keeps an archive\'s files, c writes them back (and the container\'s own), cat reads them', async (t) => {
  const written = new Map<string, Buffer>();
  const stdin = new PassThrough();
  const x = ctx({ stdin, written, now: () => 0 });
  const done = runSimExec(['tar', '--no-same-permissions', '--no-same-owner', '-xmf', '-', '-C', '/tmp'], x.c);
  stdin.end(tarArchive([{ name: 'dir/copied.txt', data: 'copied in', mtime: 0 }]));
  t.is(await done, 0);
  t.deepEqual([...written.keys()], ['/tmp/dir/copied.txt']);
  const y = ctx({ written, now: () => 0 });
  t.is(await runLine('cat /tmp/dir/copied.txt', y.c), 0);
  t.is(y.out(), 'copied in');
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(c: Buffer, _e, cb) {
      chunks.push(c);
      cb();
    },
  });
  const z = ctx({ written, stdout: out, now: () => 0 });
  t.is(await runSimExec(['tar', 'cf', '-', '/tmp/dir', '/etc/config/a'], z.c), 0);
  t.deepEqual(untar(Buffer.concat(chunks)).map((f) => [f.name, f.data.toString()]), [['tmp/dir/copied.txt', 'copied in'], ['etc/config/a', 'A\n']]);
  t.is(await runSimExec(['tar', 'cf', '-', '/missing'], ctx({ written }).c), 2);
});
