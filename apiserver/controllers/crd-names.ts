import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import { arr, rec, str } from '../registry/obj-access';

/** Why a CRD's names are not accepted: upstream's NamingConditionController reasons and messages. */
export interface NamesConflict {
  reason: 'NameConflict' | 'KindConflict';
  message: string;
}

interface NameSet {
  resources: Set<string>;
  kinds: Set<string>;
}

/**
 * The first name of crd another CRD of its group has accepted, or a built-in type of its group
 * uses: plural, singular and short names (NameConflict), then kind and list kind (KindConflict),
 * as upstream checks a group's accepted names. Undefined: every name is free.
 */
export function namesConflict(crd: KObject, all: readonly KObject[], registry: ResourceRegistry): NamesConflict | undefined {
  const group = str(rec(crd.spec)?.group) ?? '';
  const names = rec(rec(crd.spec)?.names) ?? {};
  const taken = takenNames(crd, group, all, registry);
  const resources = [str(names.plural), str(names.singular), ...arr(names.shortNames).map(str)].filter((n): n is string => !!n);
  for (const n of resources) if (taken.resources.has(n)) return { reason: 'NameConflict', message: `"${n}" is already in use` };
  for (const n of [str(names.kind), str(names.listKind)]) if (n && taken.kinds.has(n)) return { reason: 'KindConflict', message: `"${n}" is already in use` };
  return undefined;
}

function takenNames(crd: KObject, group: string, all: readonly KObject[], registry: ResourceRegistry): NameSet {
  const out: NameSet = { resources: new Set(), kinds: new Set() };
  for (const other of all) {
    if (str(rec(other.spec)?.group) !== group) continue;
    if (other.metadata.name === crd.metadata.name) continue;
    const accepted = rec(rec(other.status)?.acceptedNames);
    if (!accepted) continue;
    for (const n of [accepted.plural, accepted.singular, ...arr(accepted.shortNames)]) if (typeof n === 'string' && n) out.resources.add(n);
    for (const n of [accepted.kind, accepted.listKind]) if (typeof n === 'string' && n) out.kinds.add(n);
  }
  // Built-in types of the group (the CRDs' own are counted by their accepted names above).
  for (const t of registry.all()) {
    if (t.group !== group || t.customResource) continue;
    for (const n of [t.resource, t.singular, ...(t.shortNames ?? [])]) out.resources.add(n);
    out.kinds.add(t.kind);
    out.kinds.add(t.listKind);
  }
  return out;
}
