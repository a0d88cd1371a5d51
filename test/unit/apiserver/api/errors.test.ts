import test from 'ava';
import { inspect } from 'node:util';
import { ApiError, errors, getOrNull, isAlreadyExists, isConflict, isNotFound } from '../../../../apiserver/api/errors';
import { StorageError } from '../../../../apiserver/storage/storage';

test('isNotFound, isConflict and isAlreadyExists read an ApiError by its reason', (t) => {
  const notFound = errors.notFound('pods', 'a');
  const conflict = errors.conflict('pods', 'a', 'the object has been modified');
  const exists = errors.alreadyExists('pods', 'a');
  t.deepEqual([isNotFound(notFound), isConflict(notFound), isAlreadyExists(notFound)], [true, false, false]);
  t.deepEqual([isNotFound(conflict), isConflict(conflict), isAlreadyExists(conflict)], [false, true, false]);
  t.deepEqual([isNotFound(exists), isConflict(exists), isAlreadyExists(exists)], [false, false, true]);
  // A plugin's rejection re-wrapped by the admission chain keeps reason and code.
  t.true(isNotFound(new ApiError('NotFound', 'x (admission plugin P)', undefined, 404)));
  t.false(isNotFound(errors.forbidden('no')));
  t.false(isConflict(new ApiError('Gone', 'compacted')));
});

test('the helpers read storage errors by their code too', (t) => {
  t.true(isNotFound(new StorageError('NotFound', 'key /a not found')));
  t.true(isConflict(new StorageError('Conflict', 'key /a changed')));
  t.true(isAlreadyExists(new StorageError('AlreadyExists', 'key /a already exists')));
  t.false(isNotFound(new StorageError('Compacted', 'compacted')));
});

test('other values are none of these', (t) => {
  for (const v of [undefined, null, 'NotFound', { code: 'NotFound' }, { reason: 'NotFound' }, new Error('NotFound'), Object.assign(new Error('x'), { code: 'ENOENT' })]) {
    t.false(isNotFound(v) || isConflict(v) || isAlreadyExists(v), inspect(v));
  }
});

test('getOrNull resolves the value, null for not found, and rejects with any other error', async (t) => {
  t.is(await getOrNull(Promise.resolve(7)), 7);
  t.is(await getOrNull(Promise.reject(errors.notFound('pods', 'a'))), null);
  const forbidden = errors.forbidden('no');
  t.is(await t.throwsAsync(getOrNull(Promise.reject(forbidden))), forbidden);
  const conflict = new StorageError('Conflict', 'changed');
  t.is(await t.throwsAsync(getOrNull(Promise.reject(conflict))), conflict);
});
