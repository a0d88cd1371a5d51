import { isAlreadyExists, isConflict } from '../api/errors';
import type { ResourceRegistry } from '../registry/builtin';
import { SYSTEM_PRIORITY_CLASSES } from '../registry/types/priorityclasses';
import type { ObjectStore } from '../store/object-store';
import { controllerContext } from '../store/system-context';

/**
 * Creates the system PriorityClasses (system-node-critical, system-cluster-critical) that are
 * missing, as upstream's scheduling post-start hook (bootstrap-system-priority-classes). Existing
 * ones are left as they are: validation already forbids another value under these names.
 */
export async function ensureSystemPriorityClasses(store: ObjectStore, registry: ResourceRegistry): Promise<void> {
  const type = registry.lookup('scheduling.svc.io', 'v1', 'priorityclasses');
  if (!type) return;
  const ctx = controllerContext('bootstrap');
  for (const c of SYSTEM_PRIORITY_CLASSES) {
    try {
      await store.create(type, '', { apiVersion: 'scheduling.svc.io/v1', kind: 'PriorityClass', metadata: { name: c.name }, value: c.value, description: c.description }, ctx);
    } catch (err) {
      // Another replica (or an earlier start) made it.
      if (!isAlreadyExists(err) && !isConflict(err)) throw err;
    }
  }
}
