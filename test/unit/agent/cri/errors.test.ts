import { status } from '@grpc/grpc-js';
import test from 'ava';
import { RuntimeError, fromGrpcError, isNotFound, isUnimplemented, toGrpcStatus, type RuntimeErrorCode } from '../../../../agent/cri/errors';

const table: [number, RuntimeErrorCode][] = [
  [status.CANCELLED, 'Canceled'],
  [status.UNKNOWN, 'Unknown'],
  [status.INVALID_ARGUMENT, 'InvalidArgument'],
  [status.DEADLINE_EXCEEDED, 'DeadlineExceeded'],
  [status.NOT_FOUND, 'NotFound'],
  [status.ALREADY_EXISTS, 'AlreadyExists'],
  [status.PERMISSION_DENIED, 'PermissionDenied'],
  [status.RESOURCE_EXHAUSTED, 'ResourceExhausted'],
  [status.FAILED_PRECONDITION, 'FailedPrecondition'],
  [status.ABORTED, 'Aborted'],
  [status.OUT_OF_RANGE, 'OutOfRange'],
  [status.UNIMPLEMENTED, 'Unimplemented'],
  [status.INTERNAL, 'Internal'],
  [status.UNAVAILABLE, 'Unavailable'],
  [status.DATA_LOSS, 'DataLoss'],
  [status.UNAUTHENTICATED, 'Unauthenticated'],
];

test('every gRPC status maps to its code and back, keeping the runtime message', (t) => {
  for (const [grpcCode, code] of table) {
    const e = fromGrpcError({ code: grpcCode, details: `runtime says ${code}`, message: `${grpcCode} X: runtime says ${code}` }, 'Rpc');
    t.true(e instanceof RuntimeError);
    t.is(e.code, code);
    t.is(e.message, `runtime says ${code}`);
    t.is(e.rpc, 'Rpc');
    t.deepEqual(toGrpcStatus(e), { code: grpcCode, details: `runtime says ${code}` });
  }
});

test('odd inputs: unknown numbers, missing details, plain errors, RuntimeError passthrough', (t) => {
  t.is(fromGrpcError({ code: 99, details: 'x' }, 'R').code, 'Unknown');
  t.is(fromGrpcError({ code: status.NOT_FOUND, message: '5 NOT_FOUND: gone' }, 'R').message, '5 NOT_FOUND: gone');
  t.is(fromGrpcError(new Error('boom'), 'R').code, 'Unknown');
  const original = new RuntimeError('NotFound', 'x', 'A');
  t.is(fromGrpcError(original, 'B'), original);
  t.deepEqual(toGrpcStatus(new Error('plain')), { code: status.UNKNOWN, details: 'plain' });
  t.is(toGrpcStatus(new RuntimeError('UnsupportedVersion', 'old')).code, status.FAILED_PRECONDITION);
});

test('helpers and retriable', (t) => {
  t.true(isNotFound(new RuntimeError('NotFound', '')));
  t.false(isNotFound(new Error('NotFound')));
  t.true(isUnimplemented(new RuntimeError('Unimplemented', '')));
  t.true(new RuntimeError('Unavailable', '').retriable);
  t.true(new RuntimeError('DeadlineExceeded', '').retriable);
  t.false(new RuntimeError('InvalidArgument', '').retriable);
  t.is(new RuntimeError('NotFound', 'm').name, 'RuntimeError');
});
