import type { KObject } from '../api/types';
import { rec } from '../registry/obj-access';
import { storageClassAnnotation } from '../registry/types/pv-common';
import { defaultStorageClass } from '../registry/types/storage-common';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';

/** The StorageClasses of the cluster (any order). */
export type ListStorageClasses = () => Promise<readonly KObject[]>;

/**
 * Upstream's DefaultStorageClass admission plugin: a new PersistentVolumeClaim that names no class
 * (spec.storageClassName absent — an empty string is a request for no class and is kept — and no
 * beta storage-class annotation) gets the cluster's default class: the newest StorageClass marked
 * `storageclass.kubernetes.io/is-default-class: "true"` (svc.io spelling too). Without a default
 * class the claim is left as it is, as upstream.
 * Claims created before a default class existed get it later from the PV binder (upstream's
 * retroactive default class, controllers/pv-binder.ts).
 */
export class DefaultStorageClass implements AdmissionPlugin {
  readonly name = 'DefaultStorageClass';

  constructor(private readonly listClasses: ListStorageClasses) {}

  async mutate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource || a.type.group !== '' || a.type.resource !== 'persistentvolumeclaims' || !a.object) return;
    const spec = rec(a.object.spec);
    if (spec && spec.storageClassName !== undefined && spec.storageClassName !== null) return;
    if (storageClassAnnotation(a.object) !== undefined) return;
    const chosen = defaultStorageClass(await this.listClasses());
    if (!chosen?.metadata.name) return;
    a.object.spec = { ...spec, storageClassName: chosen.metadata.name };
  }
}
