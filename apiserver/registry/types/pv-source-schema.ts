import type { ObjectSchema } from '../../api/schema';
import { objectReferenceSchema } from '../common-schemas';
import { atomicList, bool, described, int32, obj, ptr, str, strMap } from '../schema-builders';
import {
  awsElasticBlockStoreSchema,
  azureDiskSchema,
  fcSchema,
  flockerSchema,
  FS,
  gcePersistentDiskSchema,
  hostPathSchema,
  nfsSchema,
  photonPersistentDiskSchema,
  portworxVolumeSchema,
  quobyteSchema,
  RO,
  SECRET,
  vsphereVolumeSchema,
} from './volume-schema';

/**
 * core/v1 PersistentVolumeSource (inline in PersistentVolumeSpec): the sources a pod volume also
 * has, plus the PersistentVolume variants whose secret references carry a namespace.
 */

const V1 = 'k8s.io.api.core.v1';

/** A secret in any namespace. */
const secretReferenceSchema = obj(
  `${V1}.SecretReference`,
  { name: [1, str('Name of the Secret.')], namespace: [2, str('Namespace of the Secret.')] },
  { atomic: true },
);

const csiSchema = obj(`${V1}.CSIPersistentVolumeSource`, {
  driver: [1, ptr(str('The name of the CSI driver.'))],
  volumeHandle: [2, ptr(str('The volume name the driver returned.'))],
  readOnly: [3, bool('Passed to ControllerPublishVolume; defaults to false (read/write).')],
  fsType: [4, str('Filesystem type to mount, such as ext4; passed to the CSI driver.')],
  volumeAttributes: [5, strMap('Driver-specific properties of the volume.')],
  controllerPublishSecretRef: [6, described('The Secret passed to ControllerPublishVolume and ControllerUnpublishVolume.', secretReferenceSchema)],
  nodeStageSecretRef: [7, described('The Secret passed to NodeStageVolume and NodeUnstageVolume.', secretReferenceSchema)],
  nodePublishSecretRef: [8, described('The Secret passed to NodePublishVolume and NodeUnpublishVolume.', secretReferenceSchema)],
  controllerExpandSecretRef: [9, described('The Secret passed to ControllerExpandVolume.', secretReferenceSchema)],
  nodeExpandSecretRef: [10, described('The Secret passed to NodeExpandVolume.', secretReferenceSchema)],
});

export const persistentVolumeSourceSchema: ObjectSchema = obj(`${V1}.PersistentVolumeSource`, {
  gcePersistentDisk: [1, described('Deprecated: a GCE persistent disk.', gcePersistentDiskSchema)],
  awsElasticBlockStore: [2, described('Deprecated: an AWS EBS disk.', awsElasticBlockStoreSchema)],
  hostPath: [3, described('A directory on the host; for single-node development and testing only.', hostPathSchema)],
  glusterfs: [
    4,
    described(
      'Removed: a Glusterfs volume.',
      obj(`${V1}.GlusterfsPersistentVolumeSource`, {
        endpoints: [1, ptr(str('Name of the Endpoints object that describes the Glusterfs topology.'))],
        path: [2, ptr(str('The Glusterfs volume path.'))],
        readOnly: [3, bool(RO)],
        endpointsNamespace: [4, ptr(str('Namespace of the Endpoints; defaults to the claim\'s namespace.'))],
      }),
    ),
  ],
  nfs: [5, described('An NFS mount.', nfsSchema)],
  rbd: [
    6,
    described(
      'Removed: a Rados Block Device.',
      obj(`${V1}.RBDPersistentVolumeSource`, {
        monitors: [1, atomicList(str(), 'Ceph monitors.')],
        image: [2, ptr(str('The rados image name.'))],
        fsType: [3, str(FS)],
        pool: [4, str('The rados pool name; defaults to rbd.')],
        user: [5, str('The rados user name; defaults to admin.')],
        keyring: [6, str('Path to the RBD key ring; defaults to /etc/ceph/keyring.')],
        secretRef: [7, described(SECRET, secretReferenceSchema)],
        readOnly: [8, bool(RO)],
      }),
    ),
  ],
  iscsi: [
    7,
    described(
      'An iSCSI disk.',
      obj(`${V1}.ISCSIPersistentVolumeSource`, {
        targetPortal: [1, ptr(str('iSCSI target portal, IP or ip:port.'))],
        iqn: [2, ptr(str('iSCSI target qualified name.'))],
        lun: [3, ptr(int32('iSCSI target logical unit number.'))],
        iscsiInterface: [4, str('iSCSI interface name; defaults to default (tcp).')],
        fsType: [5, str(FS)],
        readOnly: [6, bool(RO)],
        portals: [7, atomicList(str(), 'Further iSCSI target portals.')],
        chapAuthDiscovery: [8, bool('Whether iSCSI discovery CHAP authentication is used.')],
        chapAuthSession: [11, bool('Whether iSCSI session CHAP authentication is used.')],
        secretRef: [10, described('The Secret holding the CHAP credentials.', secretReferenceSchema)],
        initiatorName: [12, ptr(str('Custom iSCSI initiator name.'))],
      }),
    ),
  ],
  cinder: [
    8,
    described(
      'Deprecated: an OpenStack Cinder volume.',
      obj(`${V1}.CinderPersistentVolumeSource`, {
        volumeID: [1, ptr(str('The Cinder volume ID.'))],
        fsType: [2, str(FS)],
        readOnly: [3, bool(RO)],
        secretRef: [4, described('The Secret with parameters for connecting to OpenStack.', secretReferenceSchema)],
      }),
    ),
  ],
  cephfs: [
    9,
    described(
      'Removed: a Ceph FS mount.',
      obj(`${V1}.CephFSPersistentVolumeSource`, {
        monitors: [1, atomicList(str(), 'Ceph monitors.')],
        path: [2, str('Path to mount inside the file system; defaults to /.')],
        user: [3, str('The rados user name; defaults to admin.')],
        secretFile: [4, str('Path to the key ring for the user; defaults to /etc/ceph/user.secret.')],
        secretRef: [5, described(SECRET, secretReferenceSchema)],
        readOnly: [6, bool(RO)],
      }),
    ),
  ],
  fc: [10, described('A Fibre Channel disk.', fcSchema)],
  flocker: [11, described('Removed: a Flocker volume.', flockerSchema)],
  flexVolume: [
    12,
    described(
      'Deprecated: a volume handled by an exec-based plugin.',
      obj(`${V1}.FlexPersistentVolumeSource`, {
        driver: [1, ptr(str('Name of the driver for this volume.'))],
        fsType: [2, str(FS)],
        secretRef: [3, described('The Secret passed to the plugin scripts.', secretReferenceSchema)],
        readOnly: [4, bool(RO)],
        options: [5, strMap('Extra command options for the driver.')],
      }),
    ),
  ],
  azureFile: [
    13,
    described(
      'Deprecated: an Azure File Service mount.',
      obj(`${V1}.AzureFilePersistentVolumeSource`, {
        secretName: [1, ptr(str('The Secret holding the storage account name and key.'))],
        shareName: [2, ptr(str('The Azure share name.'))],
        readOnly: [3, bool(RO)],
        secretNamespace: [4, ptr(str('Namespace of the Secret; defaults to the pod\'s namespace.'))],
      }),
    ),
  ],
  vsphereVolume: [14, described('Deprecated: a vSphere volume.', vsphereVolumeSchema)],
  quobyte: [15, described('Removed: a Quobyte mount.', quobyteSchema)],
  azureDisk: [16, described('Deprecated: an Azure data disk.', azureDiskSchema)],
  photonPersistentDisk: [17, described('Removed: a Photon Controller persistent disk.', photonPersistentDiskSchema)],
  portworxVolume: [18, described('Deprecated: a Portworx volume.', portworxVolumeSchema)],
  scaleIO: [
    19,
    described(
      'Removed: a ScaleIO volume.',
      obj(`${V1}.ScaleIOPersistentVolumeSource`, {
        gateway: [1, ptr(str('Host address of the ScaleIO API gateway.'))],
        system: [2, ptr(str('Name of the storage system in ScaleIO.'))],
        secretRef: [3, described('The Secret holding the ScaleIO user credentials.', secretReferenceSchema)],
        sslEnabled: [4, bool('Whether SSL is used to talk to the gateway.')],
        protectionDomain: [5, str('Name of the ScaleIO protection domain.')],
        storagePool: [6, str('The ScaleIO storage pool.')],
        storageMode: [7, str('ThickProvisioned or ThinProvisioned (the default).')],
        volumeName: [8, str('Name of a volume already created in ScaleIO.')],
        fsType: [9, str(FS)],
        readOnly: [10, bool(RO)],
      }),
    ),
  ],
  local: [
    20,
    described(
      'A local disk or directory on a node; needs nodeAffinity.',
      obj(`${V1}.LocalVolumeSource`, {
        path: [1, ptr(str('Full path to the volume on the node.'))],
        fsType: [2, ptr(str('Filesystem type, used only when path is a block device.'))],
      }),
    ),
  ],
  storageos: [
    21,
    described(
      'Removed: a StorageOS volume.',
      obj(`${V1}.StorageOSPersistentVolumeSource`, {
        volumeName: [1, str('Human-readable name of the StorageOS volume.')],
        volumeNamespace: [2, str('The StorageOS namespace; defaults to the pod\'s namespace.')],
        fsType: [3, str(FS)],
        readOnly: [4, bool(RO)],
        secretRef: [5, described('The Secret holding the StorageOS API credentials.', objectReferenceSchema)],
      }),
    ),
  ],
  csi: [22, described('A volume handled by an external CSI driver.', csiSchema)],
});
