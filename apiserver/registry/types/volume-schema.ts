import type { ObjectSchema } from '../../api/schema';
import { labelSelectorSchema, localObjectReferenceSchema, objectMetaSchema } from '../common-schemas';
import { atomicList, bool, int32, int64, obj, ptr, quantity, str, strMap } from '../schema-builders';
import { objectFieldSelectorSchema, resourceFieldSelectorSchema } from './container-schema';
import { persistentVolumeClaimSpecSchema } from './pvc-spec-schema';

/**
 * core/v1 VolumeSource (a pod volume: exactly one source set) and every source message, with
 * upstream's field numbers. The sources a PersistentVolume shares with pods are exported for
 * pv-source-schema.ts.
 */

const V1 = 'k8s.io.api.core.v1';

const keyToPathSchema = obj(`${V1}.KeyToPath`, {
  key: [1, ptr(str('The key to project.'))],
  path: [2, ptr(str('The relative path of the file to map the key to.'))],
  mode: [3, ptr(int32('Mode bits of the file, 0000 to 0777.'))],
  user: [4, ptr(int64())],
});

const downwardAPIVolumeFileSchema = obj(`${V1}.DownwardAPIVolumeFile`, {
  path: [1, ptr(str())],
  fieldRef: [2, objectFieldSelectorSchema],
  resourceFieldRef: [3, resourceFieldSelectorSchema],
  mode: [4, ptr(int32())],
  user: [5, ptr(int64())],
});

export const hostPathSchema = obj(`${V1}.HostPathVolumeSource`, { path: [1, ptr(str('Path of the directory on the host.'))], type: [2, ptr(str())] });

export const gcePersistentDiskSchema = obj(`${V1}.GCEPersistentDiskVolumeSource`, {
  pdName: [1, ptr(str())],
  fsType: [2, str()],
  partition: [3, int32()],
  readOnly: [4, bool()],
});

export const awsElasticBlockStoreSchema = obj(`${V1}.AWSElasticBlockStoreVolumeSource`, {
  volumeID: [1, ptr(str())],
  fsType: [2, str()],
  partition: [3, int32()],
  readOnly: [4, bool()],
});

export const nfsSchema = obj(`${V1}.NFSVolumeSource`, { server: [1, ptr(str())], path: [2, ptr(str())], readOnly: [3, bool()] });

export const fcSchema = obj(`${V1}.FCVolumeSource`, {
  targetWWNs: [1, atomicList(str())],
  lun: [2, ptr(int32())],
  fsType: [3, str()],
  readOnly: [4, bool()],
  wwids: [5, atomicList(str())],
});

export const flockerSchema = obj(`${V1}.FlockerVolumeSource`, { datasetName: [1, str()], datasetUUID: [2, str()] });

export const vsphereVolumeSchema = obj(`${V1}.VsphereVirtualDiskVolumeSource`, {
  volumePath: [1, ptr(str())],
  fsType: [2, str()],
  storagePolicyName: [3, str()],
  storagePolicyID: [4, str()],
});

export const quobyteSchema = obj(`${V1}.QuobyteVolumeSource`, {
  registry: [1, ptr(str())],
  volume: [2, ptr(str())],
  readOnly: [3, bool()],
  user: [4, str()],
  group: [5, str()],
  tenant: [6, str()],
});

export const azureDiskSchema = obj(`${V1}.AzureDiskVolumeSource`, {
  diskName: [1, ptr(str())],
  diskURI: [2, ptr(str())],
  cachingMode: [3, ptr(str())],
  fsType: [4, ptr(str())],
  readOnly: [5, ptr(bool())],
  kind: [6, ptr(str())],
});

export const photonPersistentDiskSchema = obj(`${V1}.PhotonPersistentDiskVolumeSource`, { pdID: [1, ptr(str())], fsType: [2, str()] });

export const portworxVolumeSchema = obj(`${V1}.PortworxVolumeSource`, { volumeID: [1, ptr(str())], fsType: [2, str()], readOnly: [3, bool()] });

/** The sources a pod volume may name beside the ones PersistentVolumes share. */
const podOnlySources = {
  emptyDir: obj(`${V1}.EmptyDirVolumeSource`, {
    medium: [1, str('"" (the node\'s default medium) or Memory.')],
    sizeLimit: [2, quantity()],
    mode: [3, ptr(int32())],
  }),
  gitRepo: obj(`${V1}.GitRepoVolumeSource`, { repository: [1, ptr(str())], revision: [2, str()], directory: [3, str()] }),
  secret: obj(`${V1}.SecretVolumeSource`, {
    secretName: [1, str('Name of the secret in the pod\'s namespace.')],
    items: [2, atomicList(keyToPathSchema)],
    defaultMode: [3, ptr(int32())],
    optional: [4, ptr(bool())],
    defaultUser: [5, ptr(int64())],
  }),
  iscsi: obj(`${V1}.ISCSIVolumeSource`, {
    targetPortal: [1, ptr(str())],
    iqn: [2, ptr(str())],
    lun: [3, ptr(int32())],
    iscsiInterface: [4, str()],
    fsType: [5, str()],
    readOnly: [6, bool()],
    portals: [7, atomicList(str())],
    chapAuthDiscovery: [8, bool()],
    chapAuthSession: [11, bool()],
    secretRef: [10, localObjectReferenceSchema],
    initiatorName: [12, ptr(str())],
  }),
  glusterfs: obj(`${V1}.GlusterfsVolumeSource`, { endpoints: [1, ptr(str())], path: [2, ptr(str())], readOnly: [3, bool()] }),
  persistentVolumeClaim: obj(`${V1}.PersistentVolumeClaimVolumeSource`, { claimName: [1, ptr(str())], readOnly: [2, bool()] }),
  rbd: obj(`${V1}.RBDVolumeSource`, {
    monitors: [1, atomicList(str())],
    image: [2, ptr(str())],
    fsType: [3, str()],
    pool: [4, str()],
    user: [5, str()],
    keyring: [6, str()],
    secretRef: [7, localObjectReferenceSchema],
    readOnly: [8, bool()],
  }),
  flexVolume: obj(`${V1}.FlexVolumeSource`, {
    driver: [1, ptr(str())],
    fsType: [2, str()],
    secretRef: [3, localObjectReferenceSchema],
    readOnly: [4, bool()],
    options: [5, strMap()],
  }),
  cinder: obj(`${V1}.CinderVolumeSource`, {
    volumeID: [1, ptr(str())],
    fsType: [2, str()],
    readOnly: [3, bool()],
    secretRef: [4, localObjectReferenceSchema],
  }),
  cephfs: obj(`${V1}.CephFSVolumeSource`, {
    monitors: [1, atomicList(str())],
    path: [2, str()],
    user: [3, str()],
    secretFile: [4, str()],
    secretRef: [5, localObjectReferenceSchema],
    readOnly: [6, bool()],
  }),
  downwardAPI: obj(`${V1}.DownwardAPIVolumeSource`, {
    items: [1, atomicList(downwardAPIVolumeFileSchema)],
    defaultMode: [2, ptr(int32())],
    defaultUser: [3, ptr(int64())],
  }),
  azureFile: obj(`${V1}.AzureFileVolumeSource`, { secretName: [1, ptr(str())], shareName: [2, ptr(str())], readOnly: [3, bool()] }),
  configMap: obj(
    `${V1}.ConfigMapVolumeSource`,
    { items: [2, atomicList(keyToPathSchema)], defaultMode: [3, ptr(int32())], optional: [4, ptr(bool())], defaultUser: [5, ptr(int64())] },
    { inline: [[1, localObjectReferenceSchema]] },
  ),
  scaleIO: obj(`${V1}.ScaleIOVolumeSource`, {
    gateway: [1, ptr(str())],
    system: [2, ptr(str())],
    secretRef: [3, localObjectReferenceSchema],
    sslEnabled: [4, bool()],
    protectionDomain: [5, str()],
    storagePool: [6, str()],
    storageMode: [7, str()],
    volumeName: [8, str()],
    fsType: [9, str()],
    readOnly: [10, bool()],
  }),
  storageos: obj(`${V1}.StorageOSVolumeSource`, {
    volumeName: [1, str()],
    volumeNamespace: [2, str()],
    fsType: [3, str()],
    readOnly: [4, bool()],
    secretRef: [5, localObjectReferenceSchema],
  }),
  csi: obj(`${V1}.CSIVolumeSource`, {
    driver: [1, ptr(str())],
    readOnly: [2, ptr(bool())],
    fsType: [3, ptr(str())],
    volumeAttributes: [4, strMap()],
    nodePublishSecretRef: [5, localObjectReferenceSchema],
  }),
  ephemeral: obj(`${V1}.EphemeralVolumeSource`, {
    volumeClaimTemplate: [1, obj(`${V1}.PersistentVolumeClaimTemplate`, { metadata: [1, objectMetaSchema], spec: [2, persistentVolumeClaimSpecSchema] }, { required: ['spec'] })],
  }),
  image: obj(`${V1}.ImageVolumeSource`, { reference: [1, str()], pullPolicy: [2, str()] }),
};

const volumeProjectionSchema = obj(`${V1}.VolumeProjection`, {
  secret: [1, obj(`${V1}.SecretProjection`, { items: [2, atomicList(keyToPathSchema)], optional: [4, ptr(bool())] }, { inline: [[1, localObjectReferenceSchema]] })],
  downwardAPI: [2, obj(`${V1}.DownwardAPIProjection`, { items: [1, atomicList(downwardAPIVolumeFileSchema)] })],
  configMap: [3, obj(`${V1}.ConfigMapProjection`, { items: [2, atomicList(keyToPathSchema)], optional: [4, ptr(bool())] }, { inline: [[1, localObjectReferenceSchema]] })],
  serviceAccountToken: [
    4,
    obj(`${V1}.ServiceAccountTokenProjection`, { audience: [1, str()], expirationSeconds: [2, ptr(int64())], path: [3, ptr(str())], user: [4, ptr(int64())] }),
  ],
  clusterTrustBundle: [
    5,
    obj(`${V1}.ClusterTrustBundleProjection`, {
      name: [1, ptr(str())],
      signerName: [2, ptr(str())],
      labelSelector: [3, labelSelectorSchema],
      optional: [5, ptr(bool())],
      path: [4, ptr(str())],
      user: [6, ptr(int64())],
    }),
  ],
  podCertificate: [
    6,
    obj(`${V1}.PodCertificateProjection`, {
      signerName: [1, str()],
      keyType: [2, str()],
      maxExpirationSeconds: [3, ptr(int32())],
      credentialBundlePath: [4, str()],
      keyPath: [5, str()],
      certificateChainPath: [6, str()],
      userAnnotations: [7, strMap()],
      user: [8, ptr(int64())],
    }),
  ],
});

const projectedSchema = obj(`${V1}.ProjectedVolumeSource`, {
  sources: [1, atomicList(volumeProjectionSchema)],
  defaultMode: [2, ptr(int32())],
  defaultUser: [3, ptr(int64())],
});

/** VolumeSource, inline in Volume: one property per source. */
export const volumeSourceSchema: ObjectSchema = obj(`${V1}.VolumeSource`, {
  hostPath: [1, hostPathSchema],
  emptyDir: [2, podOnlySources.emptyDir],
  gcePersistentDisk: [3, gcePersistentDiskSchema],
  awsElasticBlockStore: [4, awsElasticBlockStoreSchema],
  gitRepo: [5, podOnlySources.gitRepo],
  secret: [6, podOnlySources.secret],
  nfs: [7, nfsSchema],
  iscsi: [8, podOnlySources.iscsi],
  glusterfs: [9, podOnlySources.glusterfs],
  persistentVolumeClaim: [10, podOnlySources.persistentVolumeClaim],
  rbd: [11, podOnlySources.rbd],
  flexVolume: [12, podOnlySources.flexVolume],
  cinder: [13, podOnlySources.cinder],
  cephfs: [14, podOnlySources.cephfs],
  flocker: [15, flockerSchema],
  downwardAPI: [16, podOnlySources.downwardAPI],
  fc: [17, fcSchema],
  azureFile: [18, podOnlySources.azureFile],
  configMap: [19, podOnlySources.configMap],
  vsphereVolume: [20, vsphereVolumeSchema],
  quobyte: [21, quobyteSchema],
  azureDisk: [22, azureDiskSchema],
  photonPersistentDisk: [23, photonPersistentDiskSchema],
  projected: [26, projectedSchema],
  portworxVolume: [24, portworxVolumeSchema],
  scaleIO: [25, podOnlySources.scaleIO],
  storageos: [27, podOnlySources.storageos],
  csi: [28, podOnlySources.csi],
  ephemeral: [29, podOnlySources.ephemeral],
  image: [30, podOnlySources.image],
});

export const volumeSchema: ObjectSchema = obj(`${V1}.Volume`, { name: [1, ptr(str('A DNS_LABEL unique within the pod.'))] }, { required: ['name'], inline: [[2, volumeSourceSchema]] });
