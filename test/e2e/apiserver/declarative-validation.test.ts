/**
 * DeclarativeValidation against real svc-apiservers (issue 23 item 6, spec 9.4 and 6.2): the
 * mismatch and panic counters are on /metrics with upstream's names and stability; a Service with
 * a type the schema and the hand-written validation both refuse is refused once, by field, with the
 * gates at their defaults and with DeclarativeValidationTakeover (the hand-written cause is marked
 * covered and dropped there), and the two agreeing counts no mismatch.
 */
import test from 'ava';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';

let plain: RunningApiServer;
let takeover: RunningApiServer;
test.before(async () => {
  [plain, takeover] = await Promise.all([startApiServer(), startApiServer({ args: ['--feature-gates=DeclarativeValidationTakeover=true'] })]);
});
test.after.always(async () => {
  await Promise.all([plain?.stop(), takeover?.stop()]);
});

async function metrics(s: RunningApiServer): Promise<string> {
  const r = await request(`${s.url}/metrics`, { dispatcher: s.admin });
  return r.body.text();
}

const badService = JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'bad' }, spec: { type: 'Bogus', ports: [{ port: 80 }] } });

for (const [name, server] of [
  ['defaults', () => plain],
  ['takeover', () => takeover],
] as const) {
  test(`${name}: a bad Service type is refused once, by the field, and counts no mismatch`, async (t) => {
    const s = server();
    const r = await request(`${s.url}/api/v1/namespaces/default/services`, { method: 'POST', dispatcher: s.admin, headers: { 'content-type': 'application/json' }, body: badService });
    t.is(r.statusCode, 422);
    const status = (await r.body.json()) as { details: { causes: Array<{ field: string; reason: string; message: string }> } };
    const onType = status.details.causes.filter((c) => c.field === 'spec.type');
    t.is(onType.length, 1, JSON.stringify(status.details.causes));
    t.is(onType[0].reason, 'FieldValueNotSupported');
    t.regex(onType[0].message, /^Unsupported value: "Bogus": supported values: /);
    const text = await metrics(s);
    t.regex(text, /^# HELP apiserver_validation_declarative_validation_mismatch_total \[BETA\] /m);
    t.regex(text, /^# TYPE apiserver_validation_declarative_validation_mismatch_total counter$/m);
    t.regex(text, /^apiserver_validation_declarative_validation_mismatch_total 0$/m);
    t.regex(text, /^# HELP apiserver_validation_declarative_validation_panic_total \[BETA\] /m);
    t.regex(text, /^apiserver_validation_declarative_validation_panic_total 0$/m);
  });
}
