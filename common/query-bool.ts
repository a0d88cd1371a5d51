/**
 * Boolean query parameters (watch, pretty, orphanDependents, follow, ...), read the same way by
 * both daemons. The accepted spellings are Go's strconv.ParseBool: 1, t, T, TRUE, true, True and
 * 0, f, F, FALSE, false, False, so clients that print booleans their own way (the Python client
 * sends `True`) mean what they say. An empty value (`?watch`, `?pretty=`) is true, as upstream's
 * query conversion reads it.
 *
 * Where we differ from upstream: kube-apiserver and the kubelet (Convert_Slice_string_To_bool)
 * read "false" in any case and "0" as false and every other value as true, so a typo such as
 * `follow=ture` silently means true there. Here any other value is refused (the caller answers
 * 400 naming the parameter): a misspelt boolean is more likely a bug than a wish for true.
 */

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Go's strconv.ParseBool: the boolean, or undefined for text it refuses. */
export function parseGoBool(text: string): boolean | undefined {
  if (TRUE.has(text)) return true;
  if (FALSE.has(text)) return false;
  return undefined;
}

/** Why a value is not a boolean query parameter: "<name>: invalid boolean "<value>" (...)". */
export function queryBoolError(name: string, value: string): string {
  return `${name}: invalid boolean ${JSON.stringify(value)}: must be one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False`;
}

/**
 * The parameter as a boolean: absent is `absent` (default false), empty is true, otherwise
 * parseGoBool. Returns an error message (queryBoolError) instead of a boolean for anything else;
 * the caller wraps it in its own error type.
 */
export function readQueryBool(query: URLSearchParams, name: string, absent = false): boolean | { error: string } {
  const v = query.get(name);
  if (v === null) return absent;
  if (v === '') return true;
  const b = parseGoBool(v);
  return b === undefined ? { error: queryBoolError(name, v) } : b;
}
