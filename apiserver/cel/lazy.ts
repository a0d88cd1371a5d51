import type * as Cel from '@bufbuild/cel';
import type * as CelExt from '@bufbuild/cel/ext';
import type * as Re2 from '@bufbuild/re2';

let cel: typeof Cel | undefined;
let ext: typeof CelExt | undefined;
let re2: typeof Re2 | undefined;

/**
 * @bufbuild/cel, loaded when the first expression is compiled: ~7 MB of memory that servers
 * without CEL in their authentication or authorization configuration never need.
 */
export function celLib(): typeof Cel {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose (see above): CEL stays out of memory until an expression is compiled
  cel ??= require('@bufbuild/cel') as typeof Cel;
  return cel;
}

export function celExt(): typeof CelExt {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose, as celLib
  ext ??= require('@bufbuild/cel/ext') as typeof CelExt;
  return ext;
}

/**
 * The RE2 engine @bufbuild/cel itself uses for matches() (resolved from @bufbuild/cel's own
 * location, so it is always the copy CEL ships with; not a dependency of ours otherwise): the
 * metered environment compiles each pattern once instead of on every call.
 */
export function celRe2(): typeof Re2 {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose, as celLib
  re2 ??= require(require.resolve('@bufbuild/re2', { paths: [require.resolve('@bufbuild/cel')] })) as typeof Re2;
  return re2;
}
