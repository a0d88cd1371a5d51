import type { WriteContext } from './object-store';

/** The write context of an in-process controller, named as upstream names controller identities. */
export function controllerContext(name: string): WriteContext {
  return {
    user: { username: `system:controller:${name}`, groups: ['system:authenticated'] },
    dryRun: false,
    fieldManager: name,
    subresource: '',
  };
}
