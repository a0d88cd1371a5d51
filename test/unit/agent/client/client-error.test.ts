import test from 'ava';
import { ClientError, GoneError, errorFromStatus, isAlreadyExists, isConflict, isGone, isNotFound, transportError } from '../../../../agent/client/client-error';

test('a Status body gives reason, message and details', (t) => {
  const e = errorFromStatus(404, { kind: 'Status', status: 'Failure', reason: 'NotFound', message: 'nodes "x" not found', code: 404, details: { name: 'x', kind: 'nodes' } });
  t.true(e instanceof ClientError);
  t.is(e.status, 404);
  t.is(e.reason, 'NotFound');
  t.is(e.message, 'nodes "x" not found');
  t.is(e.details?.name, 'x');
  t.true(isNotFound(e));
  t.false(e.retriable);
});

test('409 AlreadyExists and Conflict are told apart', (t) => {
  const exists = errorFromStatus(409, { kind: 'Status', reason: 'AlreadyExists', message: 'm', code: 409 });
  const conflict = errorFromStatus(409, { kind: 'Status', reason: 'Conflict', message: 'm', code: 409 });
  t.true(isAlreadyExists(exists));
  t.false(isConflict(exists));
  t.true(isConflict(conflict));
});

test('410 (Expired or Gone) is a GoneError; a bare code still gets upstream reason names', (t) => {
  const gone = errorFromStatus(410, { kind: 'Status', reason: 'Expired', message: 'too old resource version', code: 410 });
  t.true(gone instanceof GoneError);
  t.true(isGone(gone));
  const bare = errorFromStatus(503, undefined, 'upstream connect error');
  t.is(bare.reason, 'InternalError');
  t.is(bare.message, 'upstream connect error');
  t.true(bare.retriable);
  t.is(errorFromStatus(429, undefined).reason, 'TooManyRequests');
});

test('transport failures have code 0 and say what failed', (t) => {
  const refused = transportError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), 'GET /api/v1/nodes/a');
  t.is(refused.status, 0);
  t.is(refused.reason, 'ConnectionFailed');
  t.regex(refused.message, /^GET \/api\/v1\/nodes\/a: connect ECONNREFUSED/);
  t.true(refused.retriable);
  const timeout = transportError(Object.assign(new Error('no data for 300 ms'), { code: 'ETIMEDOUT' }), 'GET x');
  t.is(timeout.reason, 'Timeout');
  t.regex(timeout.message, /ETIMEDOUT: no data for 300 ms/);
});
