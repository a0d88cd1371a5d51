import { labelSelectorSchema } from '../common-schemas';
import { atomicList, obj, ptr, quantityMap, str, strEnum } from '../schema-builders';
import { ACCESS_MODES, VOLUME_MODES } from './pv-common';

/**
 * core/v1 PersistentVolumeClaimSpec: the spec of a claim and of the claim template of a pod's
 * ephemeral volume.
 */

const V1 = 'k8s.io.api.core.v1';

export const persistentVolumeClaimSpecSchema = obj(`${V1}.PersistentVolumeClaimSpec`, {
  accessModes: [1, atomicList(strEnum(ACCESS_MODES), 'The access modes the volume should have.')],
  selector: [4, labelSelectorSchema],
  resources: [
    2,
    obj(`${V1}.VolumeResourceRequirements`, {
      limits: [1, quantityMap()],
      requests: [2, quantityMap('The least storage the volume must have.')],
    }),
  ],
  volumeName: [3, str('The PersistentVolume bound to this claim.')],
  storageClassName: [5, ptr(str('Empty asks for a volume without a class; unset for the default class.'))],
  volumeMode: [6, ptr(strEnum(VOLUME_MODES))],
  dataSource: [
    7,
    obj(`${V1}.TypedLocalObjectReference`, { apiGroup: [1, ptr(str())], kind: [2, ptr(str())], name: [3, ptr(str())] }, { atomic: true }),
  ],
  dataSourceRef: [
    8,
    obj(`${V1}.TypedObjectReference`, { apiGroup: [1, ptr(str())], kind: [2, ptr(str())], name: [3, ptr(str())], namespace: [4, ptr(str())] }),
  ],
  volumeAttributesClassName: [9, ptr(str())],
});
