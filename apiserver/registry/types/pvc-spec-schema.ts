import { labelSelectorSchema } from '../common-schemas';
import { atomicList, described, obj, ptr, quantityMap, str, strEnum } from '../schema-builders';
import { ACCESS_MODES, VOLUME_MODES } from './pv-common';

/**
 * core/v1 PersistentVolumeClaimSpec: the spec of a claim and of the claim template of a pod's
 * ephemeral volume.
 */

const V1 = 'k8s.io.api.core.v1';

export const persistentVolumeClaimSpecSchema = obj(`${V1}.PersistentVolumeClaimSpec`, {
  accessModes: [1, atomicList(strEnum(ACCESS_MODES), 'The access modes the volume should have.')],
  selector: [4, described('A label query over the volumes to consider for binding.', labelSelectorSchema)],
  resources: [
    2,
    described(
      'The least resources the volume should have.',
      obj(`${V1}.VolumeResourceRequirements`, {
        limits: [1, quantityMap('The most of each resource allowed.')],
        requests: [2, quantityMap('The least storage the volume must have.')],
      }),
    ),
  ],
  volumeName: [3, str('The PersistentVolume bound to this claim.')],
  storageClassName: [5, ptr(str('Empty asks for a volume without a class; unset for the default class.'))],
  volumeMode: [6, ptr(strEnum(VOLUME_MODES, 'Filesystem (the default) or Block: the type of volume the claim needs.'))],
  dataSource: [
    7,
    described(
      'An existing VolumeSnapshot or PersistentVolumeClaim to populate the new volume from.',
      obj(
        `${V1}.TypedLocalObjectReference`,
        {
          apiGroup: [1, ptr(str('API group of the resource; empty for the core group.'))],
          kind: [2, ptr(str('Kind of the resource.'))],
          name: [3, ptr(str('Name of the resource.'))],
        },
        { atomic: true },
      ),
    ),
  ],
  dataSourceRef: [
    8,
    described(
      'The object to populate the volume from: any populator\'s object, or what dataSource names.',
      obj(`${V1}.TypedObjectReference`, {
        apiGroup: [1, ptr(str('API group of the resource; empty for the core group.'))],
        kind: [2, ptr(str('Kind of the resource.'))],
        name: [3, ptr(str('Name of the resource.'))],
        namespace: [4, ptr(str('Namespace of the resource; another namespace needs a ReferenceGrant.'))],
      }),
    ),
  ],
  volumeAttributesClassName: [9, ptr(str('Name of the VolumeAttributesClass the claim uses.'))],
});
