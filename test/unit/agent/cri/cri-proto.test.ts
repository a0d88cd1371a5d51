import path from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import test from 'ava';
import { CRI_LOADER_OPTIONS, findCriProto, loadCriProto } from '../../../../agent/cri/cri-proto';
import { RUNTIME_V1_CONTRACT } from './runtime-v1-contract';

interface FieldDesc {
  name: string;
  number: number;
  label: string;
  type: string;
  typeName: string;
}
interface MessageDesc {
  name: string;
  field: FieldDesc[];
  nestedType: MessageDesc[];
  enumType: { name: string; value: { name: string; number: number }[] }[];
  options?: { mapEntry?: boolean } | null;
}
interface MethodDesc {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestType: { type: { name: string } };
  responseType: { type: { name: string } };
}

/** Rebuilds the contract lines (same format as RUNTIME_V1_CONTRACT) from what proto-loader parsed. */
function fingerprint(protoPath: string): string[] {
  const def = protoLoader.loadSync(protoPath, { keepCase: true });
  const out: string[] = [];
  const typeOf = (owner: string, msg: MessageDesc, f: FieldDesc): string => {
    if (f.type !== 'TYPE_MESSAGE' && f.type !== 'TYPE_ENUM') {
      return (f.label === 'LABEL_REPEATED' ? 'repeated ' : '') + f.type.slice('TYPE_'.length).toLowerCase();
    }
    const nested = msg.nestedType.find((n) => n.name === f.typeName);
    if (nested?.options?.mapEntry) {
      const [k, v] = [nested.field[0], nested.field[1]];
      return `map<${typeOf(owner, nested, k)},${typeOf(owner, nested, v)}>`;
    }
    const local = nested !== undefined || msg.enumType.some((e) => e.name === f.typeName);
    const full = local ? `${owner}.${f.typeName}` : `runtime.v1.${f.typeName}`;
    return (f.label === 'LABEL_REPEATED' ? 'repeated ' : '') + full;
  };
  for (const [name, entry] of Object.entries(def)) {
    const e = entry as { format?: string; type?: unknown };
    if (e.format === 'Protocol Buffer 3 DescriptorProto') {
      const msg = e.type as MessageDesc;
      const fields = [...msg.field].sort((a, b) => a.number - b.number).map((f) => `${f.number}:${f.name}:${typeOf(name, msg, f)}`);
      out.push(`message ${name} ${fields.join(' ')}`.trimEnd());
      for (const en of msg.enumType) {
        out.push(`enum ${name}.${en.name} ${en.value.map((v) => `${v.name}=${v.number}`).join(' ')}`);
      }
    } else if (e.format === 'Protocol Buffer 3 EnumDescriptorProto') {
      const en = e.type as MessageDesc['enumType'][number];
      out.push(`enum ${name} ${en.value.map((v) => `${v.name}=${v.number}`).join(' ')}`);
    } else if (e.format === undefined) {
      for (const m of Object.values(entry as Record<string, MethodDesc>)) {
        const rpc = m.path.slice(1).replace('/', '.');
        out.push(
          `rpc ${rpc}(${m.requestStream ? 'stream ' : ''}runtime.v1.${m.requestType.type.name}) ${m.responseStream ? 'stream ' : ''}runtime.v1.${m.responseType.type.name}`,
        );
      }
    }
  }
  return out.sort();
}

test('proto/cri/runtime/v1/api.proto has exactly upstream runtime.v1 names, types and numbers', (t) => {
  const ours = fingerprint(findCriProto(__dirname));
  const expected = [...RUNTIME_V1_CONTRACT].sort();
  t.deepEqual(
    ours.filter((l) => !expected.includes(l)),
    [],
    'lines in our proto that upstream does not have',
  );
  t.deepEqual(
    expected.filter((l) => !ours.includes(l)),
    [],
    'upstream lines missing from our proto',
  );
  t.is(ours.length, expected.length);
});

test('the proto is found from the compiled tree and loads both services', (t) => {
  const found = findCriProto(__dirname);
  t.true(found.endsWith(path.join('proto', 'cri', 'runtime', 'v1', 'api.proto')));
  const proto = loadCriProto(found);
  t.is(typeof proto.RuntimeService, 'function');
  t.is(proto.RuntimeService.service['Version']?.path, '/runtime.v1.RuntimeService/Version');
  t.is(proto.ImageService.service['PullImage']?.path, '/runtime.v1.ImageService/PullImage');
  t.true(CRI_LOADER_OPTIONS.keepCase === true);
  t.throws(() => findCriProto('/'), { message: /cannot find proto/ });
});
