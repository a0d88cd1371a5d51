import { ApiError, errors } from '../api/errors';
import type { KObject } from '../api/types';
import { NODE_LEASE_NAMESPACE } from '../api/well-known';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';

/** Reads a namespace; null when absent. */
export type NamespaceGetter = (name: string) => Promise<KObject | null>;

/**
 * NamespaceLifecycle (as upstream's plugin of that name): new objects are refused in a namespace
 * that does not exist (404) or is terminating (403); the system namespaces cannot be deleted.
 */
export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = 'NamespaceLifecycle';
  static readonly immortal = new Set(['default', 'svc-system', 'svc-public', NODE_LEASE_NAMESPACE]);

  constructor(private readonly getNamespace: NamespaceGetter) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.type.resource === 'namespaces' && a.type.group === '') {
      if (a.operation === 'DELETE' && NamespaceLifecycle.immortal.has(a.name)) {
        throw errors.forbidden(`namespaces "${a.name}" is forbidden: this namespace may not be deleted`);
      }
      return;
    }
    if (!a.type.namespaced || a.operation !== 'CREATE') return;
    const ns = await this.getNamespace(a.namespace);
    if (!ns) throw errors.notFound('namespaces', a.namespace);
    if (ns.metadata.deletionTimestamp) {
      // The cause, as upstream's: kubectl drain deletes a pod whose eviction is refused for it.
      throw new ApiError(
        'Forbidden',
        `${a.type.resource} "${a.name}" is forbidden: unable to create new content in namespace ${a.namespace} because it is being terminated`,
        { name: a.name, kind: a.type.resource, causes: [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }] },
      );
    }
  }
}
