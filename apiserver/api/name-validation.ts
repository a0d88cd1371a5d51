import { isIP } from 'node:net';

/**
 * String validators as upstream's apimachinery/pkg/util/validation: each returns the list of
 * messages (empty when valid), worded exactly as upstream so error texts match.
 */

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QNAME_CHAR_FMT = '[A-Za-z0-9]';
const QNAME_EXT_CHAR_FMT = '[-A-Za-z0-9_.]';
const QUALIFIED_NAME_FMT = `(${QNAME_CHAR_FMT}${QNAME_EXT_CHAR_FMT}*)?${QNAME_CHAR_FMT}`;
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';
const PERCENT_FMT = '[0-9]+%';

const whole = (fmt: string) => new RegExp(`^(?:${fmt})$`);
const dns1123LabelRe = whole(DNS1123_LABEL_FMT);
const dns1123SubdomainRe = whole(DNS1123_SUBDOMAIN_FMT);
const dns1035LabelRe = whole(DNS1035_LABEL_FMT);
const qualifiedNameRe = whole(QUALIFIED_NAME_FMT);
const labelValueRe = whole(LABEL_VALUE_FMT);
const configMapKeyRe = whole(CONFIG_MAP_KEY_FMT);
const percentRe = whole(PERCENT_FMT);

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;
export const DNS1035_LABEL_MAX = 63;
export const QUALIFIED_NAME_MAX = 63;
export const LABEL_VALUE_MAX = 63;

/** Upstream's MaxLenError. */
export function maxLenError(n: number): string {
  return `must be no more than ${n} characters`;
}

/** Upstream's EmptyError. */
export function emptyError(): string {
  return 'must be non-empty';
}

/** Upstream's InclusiveRangeError. */
export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

/** Upstream's RegexError, including its examples formatting. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((e, i) => {
    if (i > 0) out += ' or ';
    out += `'${e}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const CONFIG_MAP_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

/** Byte length as Go's len() counts it. */
export function byteLen(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

export function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1123_LABEL_MAX) errs.push(maxLenError(DNS1123_LABEL_MAX));
  if (!dns1123LabelRe.test(value)) {
    // A valid subdomain that is not a valid label can only be failing on its dots.
    if (dns1123SubdomainRe.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!dns1123SubdomainRe.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

const WILDCARD_DNS1123_SUBDOMAIN_FMT = `\\*\\.${DNS1123_SUBDOMAIN_FMT}`;
const wildcardDns1123SubdomainRe = whole(WILDCARD_DNS1123_SUBDOMAIN_FMT);
const WILDCARD_DNS1123_SUBDOMAIN_MSG =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";

/** Upstream IsWildcardDNS1123Subdomain: `*.` then a DNS subdomain (RFC 1034 section 4.3.3), e.g. *.example.com. */
export function wildcardDns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!wildcardDns1123SubdomainRe.test(value)) errs.push(regexError(WILDCARD_DNS1123_SUBDOMAIN_MSG, WILDCARD_DNS1123_SUBDOMAIN_FMT, '*.example.com'));
  return errs;
}

export function dns1035LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1035_LABEL_MAX) errs.push(maxLenError(DNS1035_LABEL_MAX));
  if (!dns1035LabelRe.test(value)) errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  return errs;
}

/** A name with an optional DNS-subdomain prefix: `example.com/MyName`. */
export function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part ' + emptyError());
    else errs.push(...dns1123SubdomainErrors(prefix).map((m) => 'prefix part ' + m));
  } else {
    return [
      'a qualified name ' +
        regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc') +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part ' + emptyError());
  else if (byteLen(name) > QUALIFIED_NAME_MAX) errs.push('name part ' + maxLenError(QUALIFIED_NAME_MAX));
  if (!qualifiedNameRe.test(name)) errs.push('name part ' + regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc'));
  return errs;
}

export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > LABEL_VALUE_MAX) errs.push(maxLenError(LABEL_VALUE_MAX));
  if (!labelValueRe.test(value)) errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

/** Names that are only used as one URL path segment (upstream's path.IsValidPathSegmentName / Prefix). */
export function pathSegmentErrors(value: string, prefix = false): string[] {
  if (!prefix) {
    for (const bad of ['.', '..']) if (value === bad) return [`may not be '${bad}'`];
  }
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (value.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
}

/** Keys of ConfigMap/Secret data (upstream IsConfigMapKey). */
export function configMapKeyErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!configMapKeyRe.test(value)) errs.push(regexError(CONFIG_MAP_KEY_MSG, CONFIG_MAP_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** IANA_SVC_NAME port names (upstream IsValidPortName). */
export function portNameErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(value)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(value)) errs.push('must contain at least one letter (a-z)');
  if (value.includes('--')) errs.push('must not contain consecutive hyphens');
  if (value.length > 0 && (value.startsWith('-') || value.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function portNumErrors(value: number): string[] {
  return Number.isInteger(value) && value >= 1 && value <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

export function percentErrors(value: string): string[] {
  return percentRe.test(value)
    ? []
    : [regexError("a valid percent string must be a numeric string followed by an ending '%'", PERCENT_FMT, '1%', '93%')];
}

export function ipErrors(value: string): string[] {
  return isIP(value) ? [] : ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
}

export function cidrErrors(value: string): string[] {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(value);
  const fam = m ? isIP(m[1]) : 0;
  const bits = m ? Number(m[2]) : -1;
  const ok = fam !== 0 && bits >= 0 && bits <= (fam === 4 ? 32 : 128);
  return ok ? [] : ['must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'];
}

/** Environment variable names: since RelaxedEnvironmentVariableValidation, any printable ASCII but '='. */
export function envVarNameErrors(value: string): string[] {
  return /^[\x20-\x3c\x3e-\x7e]+$/.test(value)
    ? []
    : ["a valid environment variable name must consist only of printable ASCII characters other than '='"];
}
