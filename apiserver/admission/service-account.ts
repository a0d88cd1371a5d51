import { errors } from '../api/errors';
import type { KObject } from '../api/types';
import { strAt } from '../registry/obj-access';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';
import { MIRROR_POD_ANNOTATION } from './node-restriction';

/** Reads a service account; null when absent. */
export type ServiceAccountGetter = (namespace: string, name: string) => Promise<KObject | null>;

export interface ServiceAccountOptions {
  /** How often to look again for the `default` account, which the service account controller creates right after the namespace (upstream: 10 tries). */
  defaultRetries: number;
  retryDelayMs: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * ServiceAccount admission (upstream plugin of that name, Appendix B): a new pod runs as
 * spec.serviceAccountName (the registry already defaults it to `default`), and that account must
 * exist in the pod's namespace; `default` is looked up a few more times because it is created
 * asynchronously with the namespace. Mirror pods may not name another account.
 */
export class ServiceAccountAdmission implements AdmissionPlugin {
  readonly name = 'ServiceAccount';

  constructor(
    private readonly getAccount: ServiceAccountGetter,
    private readonly opts: ServiceAccountOptions = { defaultRetries: 10, retryDelayMs: 150 },
  ) {}

  /** Rejects a pod whose service account does not exist (403, as upstream). */
  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.type.group !== '' || a.type.resource !== 'pods' || a.operation !== 'CREATE' || a.subresource || !a.object) return;
    const pod = a.object;
    const name = strAt(pod, 'spec', 'serviceAccountName') || 'default';
    if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) {
      if (name !== 'default') throw errors.forbidden(`pods "${pod.metadata.name ?? ''}" is forbidden: a mirror pod may not reference service accounts`);
      return;
    }
    const tries = name === 'default' ? this.opts.defaultRetries : 1;
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
    for (let i = 0; i < tries; i++) {
      if (i > 0) await sleep(this.opts.retryDelayMs);
      if (await this.getAccount(a.namespace, name)) return;
    }
    throw errors.forbidden(`pods "${pod.metadata.name ?? pod.metadata.generateName ?? ''}" is forbidden: error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`);
  }
}
