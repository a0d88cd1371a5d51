import type * as Cborg from 'cborg' with { 'resolution-mode': 'import' };

/**
 * The CBOR library, cborg (rvagg/cborg, Apache-2.0): chosen over cbor2 and cbor-x because its
 * tokenizer is public, iterative and strict (checked lengths, no silent truncation, no simple
 * values beyond true/false/null/undefined), which lets codec/cbor-decode.ts build values in one
 * pass at any nesting depth, where cbor2's recursive generators cost time proportional to size ×
 * depth (a 3 MiB body 512 levels deep took about 55 s) and cbor-x keeps the last of duplicate
 * keys, replaces invalid UTF-8 and renames "__proto__" without telling. Its encoder writes the
 * tokens codec/cbor-encode.ts produces (shortest floats, as upstream).
 *
 * cborg is an ES module that only the "import" condition exports, so require() cannot load it:
 * loadCbor() imports it once (svc-apiserver calls it at start when the CBORServingAndStorage gate
 * is on; tests call it before using the codec) and cbor() hands it out synchronously.
 */

export type CborLib = typeof Cborg;

let lib: CborLib | undefined;
let loading: Promise<CborLib> | undefined;

/** Loads the library (once); resolves when cbor() can be called. */
export function loadCbor(): Promise<CborLib> {
  loading ??= import('cborg').then((m) => (lib = m));
  return loading;
}

/** The loaded library; throws when loadCbor() has not finished (a wiring error, never a client's). */
export function cbor(): CborLib {
  if (!lib) throw new Error('CBOR codec used before loadCbor() finished');
  return lib;
}
