import type { ObjectSchema } from '../../api/schema';
import { objectReferenceSchema } from '../common-schemas';
import { atomicList, bool, int32, obj, ptr, str, strMap } from '../schema-builders';
import {
  awsElasticBlockStoreSchema,
  azureDiskSchema,
  fcSchema,
  flockerSchema,
  gcePersistentDiskSchema,
  hostPathSchema,
  nfsSchema,
  photonPersistentDiskSchema,
  portworxVolumeSchema,
  quobyteSchema,
  vsphereVolumeSchema,
} from './volume-schema';

/**
 * core/v1 PersistentVolumeSource (inline in PersistentVolumeSpec): the sources a pod volume also
 * has, plus the PersistentVolume variants whose secret references carry a namespace.
 */

const V1 = 'k8s.io.api.core.v1';

/** A secret in any namespace. */
const secretReferenceSchema = obj(`${V1}.SecretReference`, { name: [1, str()], namespace: [2, str()] }, { atomic: true });

const csiSchema = obj(`${V1}.CSIPersistentVolumeSource`, {
  driver: [1, ptr(str('The name of the CSI driver.'))],
  volumeHandle: [2, ptr(str('The volume name the driver returned.'))],
  readOnly: [3, bool()],
  fsType: [4, str()],
  volumeAttributes: [5, strMap()],
  controllerPublishSecretRef: [6, secretReferenceSchema],
  nodeStageSecretRef: [7, secretReferenceSchema],
  nodePublishSecretRef: [8, secretReferenceSchema],
  controllerExpandSecretRef: [9, secretReferenceSchema],
  nodeExpandSecretRef: [10, secretReferenceSchema],
});

export const persistentVolumeSourceSchema: ObjectSchema = obj(`${V1}.PersistentVolumeSource`, {
  gcePersistentDisk: [1, gcePersistentDiskSchema],
  awsElasticBlockStore: [2, awsElasticBlockStoreSchema],
  hostPath: [3, hostPathSchema],
  glusterfs: [
    4,
    obj(`${V1}.GlusterfsPersistentVolumeSource`, { endpoints: [1, ptr(str())], path: [2, ptr(str())], readOnly: [3, bool()], endpointsNamespace: [4, ptr(str())] }),
  ],
  nfs: [5, nfsSchema],
  rbd: [
    6,
    obj(`${V1}.RBDPersistentVolumeSource`, {
      monitors: [1, atomicList(str())],
      image: [2, ptr(str())],
      fsType: [3, str()],
      pool: [4, str()],
      user: [5, str()],
      keyring: [6, str()],
      secretRef: [7, secretReferenceSchema],
      readOnly: [8, bool()],
    }),
  ],
  iscsi: [
    7,
    obj(`${V1}.ISCSIPersistentVolumeSource`, {
      targetPortal: [1, ptr(str())],
      iqn: [2, ptr(str())],
      lun: [3, ptr(int32())],
      iscsiInterface: [4, str()],
      fsType: [5, str()],
      readOnly: [6, bool()],
      portals: [7, atomicList(str())],
      chapAuthDiscovery: [8, bool()],
      chapAuthSession: [11, bool()],
      secretRef: [10, secretReferenceSchema],
      initiatorName: [12, ptr(str())],
    }),
  ],
  cinder: [
    8,
    obj(`${V1}.CinderPersistentVolumeSource`, { volumeID: [1, ptr(str())], fsType: [2, str()], readOnly: [3, bool()], secretRef: [4, secretReferenceSchema] }),
  ],
  cephfs: [
    9,
    obj(`${V1}.CephFSPersistentVolumeSource`, {
      monitors: [1, atomicList(str())],
      path: [2, str()],
      user: [3, str()],
      secretFile: [4, str()],
      secretRef: [5, secretReferenceSchema],
      readOnly: [6, bool()],
    }),
  ],
  fc: [10, fcSchema],
  flocker: [11, flockerSchema],
  flexVolume: [
    12,
    obj(`${V1}.FlexPersistentVolumeSource`, {
      driver: [1, ptr(str())],
      fsType: [2, str()],
      secretRef: [3, secretReferenceSchema],
      readOnly: [4, bool()],
      options: [5, strMap()],
    }),
  ],
  azureFile: [
    13,
    obj(`${V1}.AzureFilePersistentVolumeSource`, { secretName: [1, ptr(str())], shareName: [2, ptr(str())], readOnly: [3, bool()], secretNamespace: [4, ptr(str())] }),
  ],
  vsphereVolume: [14, vsphereVolumeSchema],
  quobyte: [15, quobyteSchema],
  azureDisk: [16, azureDiskSchema],
  photonPersistentDisk: [17, photonPersistentDiskSchema],
  portworxVolume: [18, portworxVolumeSchema],
  scaleIO: [
    19,
    obj(`${V1}.ScaleIOPersistentVolumeSource`, {
      gateway: [1, ptr(str())],
      system: [2, ptr(str())],
      secretRef: [3, secretReferenceSchema],
      sslEnabled: [4, bool()],
      protectionDomain: [5, str()],
      storagePool: [6, str()],
      storageMode: [7, str()],
      volumeName: [8, str()],
      fsType: [9, str()],
      readOnly: [10, bool()],
    }),
  ],
  local: [20, obj(`${V1}.LocalVolumeSource`, { path: [1, ptr(str('Full path to the volume on the node.'))], fsType: [2, ptr(str())] })],
  storageos: [
    21,
    obj(`${V1}.StorageOSPersistentVolumeSource`, {
      volumeName: [1, str()],
      volumeNamespace: [2, str()],
      fsType: [3, str()],
      readOnly: [4, bool()],
      secretRef: [5, objectReferenceSchema],
    }),
  ],
  csi: [22, csiSchema],
});
