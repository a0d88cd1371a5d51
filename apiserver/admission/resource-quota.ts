import { ApiError, errors, isConflict } from '../api/errors';
import type { KObject } from '../api/types';
import { evaluatorFor, type QuotaEvaluator } from '../registry/quota/evaluators';
import { negate, type ResourceList } from '../registry/quota/resource-list';
import type { ResourceType } from '../registry/resource-type';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';
import { checkQuotas, type Charge } from './quota-check';

/** What the plugin reads and writes of the namespace's ResourceQuotas (wired over the store). */
export interface QuotaAccess {
  /** The namespace's quotas, read now (not from a cache: usage charged a moment ago must be seen). */
  list(namespace: string): Promise<KObject[]>;
  /** Sets status.used of the quota as read; rejects with a 409 when it changed since. */
  setUsed(quota: KObject, used: ResourceList): Promise<void>;
  /** Adds delta to status.used of the named quota, whatever its version (the undo of a charge). */
  addUsed(namespace: string, name: string, delta: ResourceList): Promise<void>;
}

/** How often a charge is tried again when another write changed a quota meanwhile. */
const CHARGE_ATTEMPTS = 8;

/** The subject of upstream's admission.NewForbidden: `<resource> "<name>"`, or the resource alone for a generated name. */
export function forbiddenSubject(a: AdmissionAttributes): string {
  const resource = a.type.group ? `${a.type.resource}.${a.type.group}` : a.type.resource;
  const name = a.name || a.object?.metadata.name || '';
  return name ? `${resource} "${name}"` : resource;
}

/**
 * ResourceQuota (upstream's admission plugin of that name): a create (and, for services and
 * claims, an update) must fit every quota of its namespace that counts it; its usage is then
 * charged to those quotas' status.used at the version read (a concurrent charge is a conflict:
 * read again and check again). Appendix B: the charge is a side effect, so it is given back
 * (attrs.onRejected) when a later admission plugin or the store refuses the write. Dry runs are
 * checked but never charged. Refusals are 403 with upstream's messages ("exceeded quota: q,
 * requested: pods=1, used: pods=2, limited: pods=2").
 */
export class ResourceQuotaAdmission implements AdmissionPlugin {
  readonly name = 'ResourceQuota';

  constructor(
    private readonly access: QuotaAccess,
    private readonly now: () => number = Date.now,
    private readonly evaluator: (t: ResourceType) => QuotaEvaluator = evaluatorFor,
  ) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!a.type.namespaced || !a.object || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return;
    const ev = this.evaluator(a.type);
    if (!ev.handles(a.operation, a.subresource)) return;
    for (let attempt = 1; ; attempt++) {
      const quotas = await this.access.list(a.namespace);
      if (quotas.length === 0) return;
      const checked = checkQuotas(quotas, ev, { operation: a.operation, object: a.object, oldObject: a.oldObject }, this.now());
      if ('refused' in checked) throw errors.forbidden(`${forbiddenSubject(a)} is forbidden: ${checked.refused}`);
      if (checked.charges.length === 0 || a.dryRun) return;
      if (await this.charge(a, checked.charges)) return;
      if (attempt >= CHARGE_ATTEMPTS) throw new ApiError('Conflict', `Operation cannot be fulfilled on resourcequotas: the quotas of namespace ${a.namespace} kept changing; please retry`);
    }
  }

  /**
   * Writes each quota's new usage; false when one changed meanwhile (those already written are
   * given back). Once all are written, their undo is registered with the write.
   */
  private async charge(a: AdmissionAttributes, charges: Charge[]): Promise<boolean> {
    const done: Charge[] = [];
    for (const c of charges) {
      try {
        await this.access.setUsed(c.quota, c.used);
        done.push(c);
      } catch (err) {
        await this.giveBack(a.namespace, done).catch(() => undefined);
        if (isConflict(err)) return false;
        throw err;
      }
    }
    (a.onRejected ??= []).push(() => this.giveBack(a.namespace, done));
    return true;
  }

  private async giveBack(namespace: string, charges: readonly Charge[]): Promise<void> {
    for (const c of charges) {
      const back: ResourceList = {};
      for (const [k, q] of Object.entries(c.delta)) back[k] = negate(q);
      await this.access.addUsed(namespace, c.quota.metadata.name ?? '', back);
    }
  }
}
