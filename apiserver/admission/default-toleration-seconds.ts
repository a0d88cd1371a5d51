import { sameTaintKey, TAINT_NOT_READY, TAINT_UNREACHABLE } from '../api/well-known';
import { recs } from '../registry/obj-access';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';

/** Upstream --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds. */
export const DEFAULT_TOLERATION_SECONDS = 300;

/**
 * Upstream's DefaultTolerationSeconds admission plugin: a new pod that does not already tolerate
 * node.svc.io/not-ready or node.svc.io/unreachable with NoExecute gets a toleration for each with
 * tolerationSeconds 300, so the taint eviction controller gives pods on a failing node five minutes
 * before evicting them rather than evicting them at once.
 */
export class DefaultTolerationSeconds implements AdmissionPlugin {
  readonly name = 'DefaultTolerationSeconds';

  constructor(
    private readonly notReadySeconds = DEFAULT_TOLERATION_SECONDS,
    private readonly unreachableSeconds = DEFAULT_TOLERATION_SECONDS,
  ) {}

  mutate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource || a.type.group !== '' || a.type.resource !== 'pods' || !a.object) return Promise.resolve();
    const spec = (a.object.spec ??= {}) as { tolerations?: unknown[] };
    const tolerations = recs(spec.tolerations);
    // As upstream: a toleration with this key (or no key) and effect NoExecute (or none) counts; the
    // key in either spelling (node.kubernetes.io/not-ready, as upstream manifests write it, too).
    const covers = (key: string) => tolerations.some((t) => (!t.key || (typeof t.key === 'string' && sameTaintKey(t.key, key))) && (t.effect === 'NoExecute' || !t.effect));
    const added: Array<Record<string, unknown>> = [];
    if (!covers(TAINT_NOT_READY)) added.push({ key: TAINT_NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: this.notReadySeconds });
    if (!covers(TAINT_UNREACHABLE)) added.push({ key: TAINT_UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: this.unreachableSeconds });
    if (added.length > 0) spec.tolerations = [...(Array.isArray(spec.tolerations) ? spec.tolerations : []), ...added];
    return Promise.resolve();
  }
}
