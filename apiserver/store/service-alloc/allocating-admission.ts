import type { AdmissionAttributes, WriteAdmission } from '../write-admission';
import type { ServiceAllocator } from './service-allocator';

/**
 * The store's admission step with Service allocation after the plugins: cluster IPs and node ports
 * are taken after mutating admission and before validation, where upstream's service storage takes
 * them (BeginCreate/BeginUpdate run after mutating admission, before the strategy's validation).
 * What was taken is registered as an undo, so a write refused later (validation, validating
 * admission, a conflict, storage) gives it back (store/write-admission.ts, reclaim).
 */
export class AllocatingAdmission implements WriteAdmission {
  constructor(
    private readonly inner: WriteAdmission,
    private readonly allocator: ServiceAllocator,
  ) {}

  async admit(attrs: AdmissionAttributes): Promise<void> {
    await this.inner.admit(attrs);
    const t = attrs.type;
    if (t.group !== '' || t.resource !== 'services' || attrs.subresource !== '' || !attrs.object) return;
    if (attrs.operation !== 'CREATE' && attrs.operation !== 'UPDATE') return;
    const undo = await this.allocator.allocate(attrs.object, attrs.operation === 'UPDATE' ? attrs.oldObject : undefined, attrs.dryRun);
    (attrs.onRejected ??= []).push(undo);
  }
}
