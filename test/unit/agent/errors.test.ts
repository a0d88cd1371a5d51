import test from 'ava';
import { status as grpcStatus } from '@grpc/grpc-js';
import {
  AgentError,
  AlreadyExistsError,
  ConflictError,
  DeadlineExceededError,
  ForbiddenError,
  GrpcCode,
  grpcStatusOf,
  InternalError,
  InvalidArgumentError,
  kindOfHttpStatus,
  Kinds,
  MethodNotAllowedError,
  NotFoundError,
  ResourceExhaustedError,
  UnauthorizedError,
  UnavailableError,
} from '../../../agent/errors';
import { ConfigError } from '../../../agent/config/config-error';
import { ClientError, GoneError } from '../../../agent/client/client-error';
import { RuntimeError } from '../../../agent/cri/errors';
import { PodNotFoundError } from '../../../agent/podresources/pod-resources-service';
import { RegistrationError } from '../../../agent/devices/device-manager';
import { PluginCallError } from '../../../agent/devices/plugin-client';
import { CheckpointRequestError } from '../../../agent/checkpoint/checkpoint-request';
import { LogLocateError } from '../../../agent/logs/container-log-handler';
import { LockHeldError } from '../../../agent/platform/lock-file';

test('the numeric gRPC codes are grpc-js status values', (t) => {
  for (const [name, code] of Object.entries(GrpcCode)) t.is(code, grpcStatus[name as keyof typeof grpcStatus], name);
});

test('each kind has its stable code, HTTP status, Status reason and gRPC code', (t) => {
  const cases: [AgentError, string, number, string, number][] = [
    [new InvalidArgumentError('m'), 'SVC_NODE_ERR_INVALID_ARGUMENT', 400, 'BadRequest', GrpcCode.INVALID_ARGUMENT],
    [new UnauthorizedError('m'), 'SVC_NODE_ERR_UNAUTHORIZED', 401, 'Unauthorized', GrpcCode.UNAUTHENTICATED],
    [new ForbiddenError('m'), 'SVC_NODE_ERR_FORBIDDEN', 403, 'Forbidden', GrpcCode.PERMISSION_DENIED],
    [new NotFoundError('m'), 'SVC_NODE_ERR_NOT_FOUND', 404, 'NotFound', GrpcCode.NOT_FOUND],
    [new MethodNotAllowedError('m'), 'SVC_NODE_ERR_METHOD_NOT_ALLOWED', 405, 'MethodNotAllowed', GrpcCode.UNIMPLEMENTED],
    [new AlreadyExistsError('m'), 'SVC_NODE_ERR_ALREADY_EXISTS', 409, 'AlreadyExists', GrpcCode.ALREADY_EXISTS],
    [new ConflictError('m'), 'SVC_NODE_ERR_CONFLICT', 409, 'Conflict', GrpcCode.ABORTED],
    [new ResourceExhaustedError('m'), 'SVC_NODE_ERR_RESOURCE_EXHAUSTED', 429, 'TooManyRequests', GrpcCode.RESOURCE_EXHAUSTED],
    [new InternalError('m'), 'SVC_NODE_ERR_INTERNAL', 500, 'InternalError', GrpcCode.INTERNAL],
    [new UnavailableError('m'), 'SVC_NODE_ERR_UNAVAILABLE', 503, 'ServiceUnavailable', GrpcCode.UNAVAILABLE],
    [new DeadlineExceededError('m'), 'SVC_NODE_ERR_DEADLINE_EXCEEDED', 504, 'Timeout', GrpcCode.DEADLINE_EXCEEDED],
    [new AgentError('m'), 'SVC_NODE_ERR', 500, 'InternalError', GrpcCode.INTERNAL],
  ];
  for (const [e, code, http, reason, grpc] of cases) {
    t.true(e instanceof Error && e instanceof AgentError, e.name);
    t.deepEqual([e.code, e.httpStatus, e.statusReason, e.grpcCode, e.message], [code, http, reason, grpc, 'm'], e.name);
  }
});

test('domain errors keep their class names and get their own codes on top of their kind', (t) => {
  const config = ConfigError.single('flag --x', 'bad');
  t.true(config instanceof InvalidArgumentError);
  t.deepEqual([config.name, config.code, config.httpStatus], ['ConfigError', 'SVC_NODE_ERR_CONFIG', 400]);
  const pod = new PodNotFoundError('ns', 'p');
  t.deepEqual([pod.name, pod.code, pod.grpcCode, pod.message], ['PodNotFoundError', 'SVC_NODE_ERR_POD_NOT_FOUND', GrpcCode.NOT_FOUND, 'pod p in namespace ns not found']);
  const lock = new LockHeldError('/run/x.lock', 7);
  t.true(lock instanceof ConflictError);
  t.is(lock.name, 'LockHeldError');
});

test('errors whose kind depends on their data', (t) => {
  t.like(new RuntimeError('NotFound', 'no such container', 'ContainerStatus'), { code: 'NotFound', httpStatus: 404, grpcCode: GrpcCode.NOT_FOUND });
  t.like(new RuntimeError('Unavailable', 'down'), { code: 'Unavailable', httpStatus: 503, grpcCode: GrpcCode.UNAVAILABLE });
  t.like(new RuntimeError('Unknown', 'x'), { httpStatus: 500, grpcCode: GrpcCode.INTERNAL });
  t.like(new ClientError(404, 'NotFound', 'nodes "a" not found'), { status: 404, code: 'SVC_NODE_ERR_API_CALL', httpStatus: 404, statusReason: 'NotFound' });
  t.like(new ClientError(0, 'ConnectionFailed', 'refused'), { status: 0, httpStatus: 503, grpcCode: GrpcCode.UNAVAILABLE });
  t.like(new GoneError(410, 'Expired', 'too old'), { code: 'SVC_NODE_ERR_API_GONE', httpStatus: 410, statusReason: 'Expired' });
  t.like(new RegistrationError('bad version', 'invalid'), { kind: 'invalid', grpcCode: GrpcCode.INVALID_ARGUMENT });
  t.like(new RegistrationError('no socket', 'unavailable'), { grpcCode: GrpcCode.UNAVAILABLE });
  t.like(new PluginCallError('slow', true), { grpcCode: GrpcCode.DEADLINE_EXCEEDED });
  t.like(new PluginCallError('gone', false), { grpcCode: GrpcCode.UNAVAILABLE });
  t.like(new CheckpointRequestError(404, 'x'), { httpStatus: 404, statusReason: 'NotFound' });
  t.like(new CheckpointRequestError(400, 'x'), { httpStatus: 400, statusReason: 'BadRequest' });
  t.like(new LogLocateError(400, 'x'), { httpStatus: 400, code: 'SVC_NODE_ERR_LOG_LOCATE' });
  t.is(kindOfHttpStatus(422), Kinds.InvalidArgument);
  t.is(kindOfHttpStatus(418), Kinds.InvalidArgument);
  t.is(kindOfHttpStatus(502), Kinds.Internal);
});

test('the gRPC edge answers an AgentError with its code and message, anything else INTERNAL', (t) => {
  t.deepEqual(grpcStatusOf(new PodNotFoundError('ns', 'p')), { code: GrpcCode.NOT_FOUND, details: 'pod p in namespace ns not found' });
  t.deepEqual(grpcStatusOf(new Error('boom')), { code: GrpcCode.INTERNAL, details: 'boom' });
  t.deepEqual(grpcStatusOf('odd'), { code: GrpcCode.INTERNAL, details: 'odd' });
});
