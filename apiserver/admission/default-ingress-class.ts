import { bothKeys, canonicalGroup } from '../api/group-names';
import { rec } from '../registry/obj-access';
import { defaultIngressClass } from '../registry/types/ingressclasses';
import type { KObject } from '../api/types';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';

/** The IngressClasses of the cluster (any order). */
export type ListIngressClasses = () => Promise<readonly KObject[]>;

/** The deprecated class annotation (both spellings): an Ingress naming its class this way is left alone. */
const CLASS_ANNOTATION_KEYS = bothKeys('kubernetes.io/ingress.class');

/**
 * Upstream's DefaultIngressClass admission plugin: a new Ingress that names no class
 * (spec.ingressClassName absent, no `kubernetes.io/ingress.class` annotation) gets the cluster's
 * default class: the IngressClass annotated `ingressclass.kubernetes.io/is-default-class: "true"`
 * (svc.io spelling too). With several, the newest, as upstream since 1.28 (before, a 403 naming
 * how many were found); with none, the Ingress is left as it is. Only creates: an update that
 * drops the class keeps it dropped, as upstream (its handler admits Create only).
 */
export class DefaultIngressClass implements AdmissionPlugin {
  readonly name = 'DefaultIngressClass';

  constructor(private readonly listClasses: ListIngressClasses) {}

  async mutate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource || canonicalGroup(a.type.group) !== 'networking.svc.io' || a.type.resource !== 'ingresses' || !a.object) return;
    const spec = rec(a.object.spec);
    if (spec && spec.ingressClassName !== undefined && spec.ingressClassName !== null) return;
    const annotations = a.object.metadata.annotations ?? {};
    if (CLASS_ANNOTATION_KEYS.some((k) => annotations[k] !== undefined)) return;
    const chosen = defaultIngressClass(await this.listClasses());
    if (!chosen?.metadata.name) return;
    a.object.spec = { ...spec, ingressClassName: chosen.metadata.name };
  }
}
