/**
 * The codec against an independent implementation: protoc compiles the committed proto/ files to
 * Python, and Debian's python3-protobuf (at /usr/bin/python3, not a pyenv one) builds every
 * fixture from its JSON form, parses our bytes and compares message by message; we decode the
 * bytes Python wrote. A codec mistake (a wrong wire type, a lost field, a bad length) shows up
 * here because the Python side only knows the committed .proto files and upstream's JSON
 * conventions, and a schema changed without regenerating proto/ fails here as well as in
 * proto-files.test.ts. Beyond equal messages, our bytes must be Python's deterministic
 * serialization byte for byte (map entries in key order, as Go writes them).
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { decodeObject, decodeWatchFrames, encodeObject, encodeWatchFrame } from '../../../../apiserver/codec/envelope';
import { listSchemaOf } from '../../../../apiserver/registry/meta-schemas';
import { configMapSchema } from '../../../../apiserver/registry/types/configmaps';
import { podSchema } from '../../../../apiserver/registry/types/pod-schema';
import { configMapFixture } from './core-fixtures';
import { fixtures, type Fixture } from './fixtures';
import { podFixture } from './pod-fixture';

const repoRoot = join(__dirname, '..', '..', '..', '..', '..');
const PYTHON = '/usr/bin/python3';
const PROTOC = '/usr/bin/protoc';

function protoSources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? protoSources(p) : name.endsWith('.proto') ? [p] : [];
  });
}

interface Result {
  name: string;
  error?: string;
  equal?: boolean;
  ours?: string;
  python?: string;
  /** Our message bytes equal Python's deterministic serialization (map entries in key order). */
  sameBytes?: boolean;
  typeMeta?: [string, string];
  watchType?: string;
  frameLength?: boolean;
  pythonBytes?: string;
}

function withoutType(o: Record<string, unknown>): Record<string, unknown> {
  const { apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

/** Every fixture, two lists, and a watch frame. */
function cases(): Array<Fixture & { watch?: string }> {
  const podList = { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '99', continue: 'next', remainingItemCount: 3 }, items: [withoutType(podFixture), { metadata: { name: 'b' } }] };
  const cmList = { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '5' }, items: [withoutType(configMapFixture)] };
  return [
    ...fixtures(),
    { name: 'v1/PodList', schema: listSchemaOf(podSchema), object: podList },
    { name: 'v1/ConfigMapList', schema: listSchemaOf(configMapSchema), object: cmList },
    { name: 'watch MODIFIED v1/Pod', schema: podSchema, object: podFixture, watch: 'MODIFIED' },
  ];
}

test('our bytes read in Python equal what Python builds from the JSON; Python bytes decode to the same JSON', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-proto-check-'));
  try {
    const protoDir = join(repoRoot, 'proto');
    const sources = protoSources(join(protoDir, 'k8s.io')).map((p) => relative(protoDir, p));
    execFileSync(PROTOC, [`-I${protoDir}`, `--python_out=${dir}`, ...sources], { stdio: ['ignore', 'ignore', 'pipe'] });
    // Only upstream's v1 packages are generated; the v1beta1 SubjectAccessReview shares v1's
    // numbers (its JSON names groups `group`), so its wire form is the v1 one checked here.
    const all = cases().filter((c) => c.schema.proto!.name.startsWith('k8s.io.api.authorization.v1beta1.') === false);
    t.is(cases().length - all.length, 1);
    const input = all.map((c) => ({
      name: c.name,
      message: c.schema.proto!.name,
      json: c.object,
      ours: (c.watch ? encodeWatchFrame(c.watch, c.schema, c.object) : encodeObject(c.schema, c.object)).toString('base64'),
      watch: c.watch,
    }));
    writeFileSync(join(dir, 'cases.json'), JSON.stringify(input));
    const out = execFileSync(PYTHON, [join(repoRoot, 'test', 'unit', 'apiserver', 'codec', 'proto_check.py'), dir, join(dir, 'cases.json')], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    const results = JSON.parse(out) as Result[];
    t.is(results.length, all.length);
    const problems = results.filter((r) => r.error || !r.equal).map((r) => r.error ?? `${r.name}: Python reads our bytes differently\nours:\n${r.ours}\npython:\n${r.python}`);
    t.deepEqual(problems, []);
    // Beyond equal messages: our bytes are Python's deterministic serialization, byte for byte.
    t.deepEqual(
      results.filter((r) => !r.sameBytes).map((r) => r.name),
      [],
    );
    all.forEach((c, i) => {
      const r = results[i];
      t.deepEqual(r.typeMeta, [c.object.apiVersion, c.object.kind], c.name);
      const python = Buffer.from(r.pythonBytes ?? '', 'base64');
      if (c.watch) {
        t.is(r.watchType, c.watch);
        t.true(r.frameLength, 'the frame length is big-endian and covers the WatchEvent');
        const { events, rest } = decodeWatchFrames(python);
        t.is(rest.length, 0);
        t.is(events[0]?.type, c.watch);
        t.deepEqual(decodeObject(c.schema, events[0].object), c.object, `${c.name}: Python's watch frame`);
      } else {
        t.deepEqual(decodeObject(c.schema, python), c.object, `${c.name}: our decoder reads Python's bytes differently`);
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
