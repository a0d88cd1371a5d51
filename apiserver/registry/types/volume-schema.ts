import type { ObjectSchema } from '../../api/schema';
import { labelSelectorSchema, localObjectReferenceSchema, objectMetaSchema } from '../common-schemas';
import { atomicList, bool, described, int32, int64, obj, ptr, quantity, str, strMap } from '../schema-builders';
import { objectFieldSelectorSchema, resourceFieldSelectorSchema } from './container-schema';
import { persistentVolumeClaimSpecSchema } from './pvc-spec-schema';

/**
 * core/v1 VolumeSource (a pod volume: exactly one source set) and every source message, with
 * upstream's field numbers. The sources a PersistentVolume shares with pods are exported for
 * pv-source-schema.ts.
 */

const V1 = 'k8s.io.api.core.v1';

export const FS = 'Filesystem type to mount, such as ext4 or xfs; implicitly ext4 if unspecified.';
export const RO = 'Whether the volume is mounted read-only.';
export const SECRET = 'The Secret holding the credentials for this volume.';
const MODE = 'Default mode bits for the created files, 0000 to 0777; defaults to 0644.';
const USER = 'The user ID that owns the created files.';

/** LocalObjectReference, inlined, with its name described. */
const namedRef = (text: string): ObjectSchema => ({ ...localObjectReferenceSchema, properties: { name: str(text) } });
const CM = namedRef('Name of the ConfigMap in the pod\'s namespace.');
const SEC = namedRef('Name of the Secret in the pod\'s namespace.');

const keyToPathSchema = obj(`${V1}.KeyToPath`, {
  key: [1, ptr(str('The key to project.'))],
  path: [2, ptr(str('The relative path of the file to map the key to.'))],
  mode: [3, ptr(int32('Mode bits of the file, 0000 to 0777.'))],
  user: [4, ptr(int64('The user ID that owns the file.'))],
});

const downwardAPIVolumeFileSchema = obj(`${V1}.DownwardAPIVolumeFile`, {
  path: [1, ptr(str('Relative path of the file to create.'))],
  fieldRef: [2, described('Selects a field of the pod; only annotations, labels, name, namespace and uid.', objectFieldSelectorSchema)],
  resourceFieldRef: [3, described('Selects a container resource limit or request.', resourceFieldSelectorSchema)],
  mode: [4, ptr(int32('Mode bits of the file, 0000 to 0777.'))],
  user: [5, ptr(int64('The user ID that owns the file.'))],
});

export const hostPathSchema = obj(`${V1}.HostPathVolumeSource`, { path: [1, ptr(str('Path of the directory on the host.'))], type: [2, ptr(str('Type of the host path, such as Directory, File or DirectoryOrCreate.'))] });

export const gcePersistentDiskSchema = obj(`${V1}.GCEPersistentDiskVolumeSource`, {
  pdName: [1, ptr(str('Name of the persistent disk in GCE.'))],
  fsType: [2, str(FS)],
  partition: [3, int32('The partition of the disk to mount; 0 or unset mounts the whole disk.')],
  readOnly: [4, bool(RO)],
});

export const awsElasticBlockStoreSchema = obj(`${V1}.AWSElasticBlockStoreVolumeSource`, {
  volumeID: [1, ptr(str('Unique ID of the EBS volume.'))],
  fsType: [2, str(FS)],
  partition: [3, int32('The partition of the disk to mount; 0 or unset mounts the whole disk.')],
  readOnly: [4, bool(RO)],
});

export const nfsSchema = obj(`${V1}.NFSVolumeSource`, {
  server: [1, ptr(str('Hostname or IP address of the NFS server.'))],
  path: [2, ptr(str('Path exported by the NFS server.'))],
  readOnly: [3, bool(RO)],
});

export const fcSchema = obj(`${V1}.FCVolumeSource`, {
  targetWWNs: [1, atomicList(str(), 'Fibre Channel target worldwide names.')],
  lun: [2, ptr(int32('The target logical unit number.'))],
  fsType: [3, str(FS)],
  readOnly: [4, bool(RO)],
  wwids: [5, atomicList(str(), 'Worldwide identifiers of the volume; set either these or targetWWNs with lun.')],
});

export const flockerSchema = obj(`${V1}.FlockerVolumeSource`, {
  datasetName: [1, str('Name of the Flocker dataset.')],
  datasetUUID: [2, str('UUID of the Flocker dataset.')],
});

export const vsphereVolumeSchema = obj(`${V1}.VsphereVirtualDiskVolumeSource`, {
  volumePath: [1, ptr(str('Path that identifies the vSphere volume vmdk.'))],
  fsType: [2, str(FS)],
  storagePolicyName: [3, str('The storage policy based management (SPBM) profile name.')],
  storagePolicyID: [4, str('The SPBM profile ID for storagePolicyName.')],
});

export const quobyteSchema = obj(`${V1}.QuobyteVolumeSource`, {
  registry: [1, ptr(str('Quobyte registries as host:port pairs, comma separated.'))],
  volume: [2, ptr(str('Name of an existing Quobyte volume.'))],
  readOnly: [3, bool(RO)],
  user: [4, str('User to map volume access to; defaults to serviceaccount.')],
  group: [5, str('Group to map volume access to; defaults to no group.')],
  tenant: [6, str('Tenant owning the Quobyte volume.')],
});

export const azureDiskSchema = obj(`${V1}.AzureDiskVolumeSource`, {
  diskName: [1, ptr(str('Name of the data disk in blob storage.'))],
  diskURI: [2, ptr(str('URI of the data disk in blob storage.'))],
  cachingMode: [3, ptr(str('Host caching mode: None, ReadOnly or ReadWrite.'))],
  fsType: [4, ptr(str(FS))],
  readOnly: [5, ptr(bool(RO))],
  kind: [6, ptr(str('Shared, Dedicated or Managed (the default).'))],
});

export const photonPersistentDiskSchema = obj(`${V1}.PhotonPersistentDiskVolumeSource`, {
  pdID: [1, ptr(str('ID of the Photon Controller persistent disk.'))],
  fsType: [2, str(FS)],
});

export const portworxVolumeSchema = obj(`${V1}.PortworxVolumeSource`, {
  volumeID: [1, ptr(str('ID of the Portworx volume.'))],
  fsType: [2, str(FS)],
  readOnly: [3, bool(RO)],
});

/** The sources a pod volume may name beside the ones PersistentVolumes share. */
const podOnlySources = {
  emptyDir: obj(`${V1}.EmptyDirVolumeSource`, {
    medium: [1, str('"" (the node\'s default medium) or Memory.')],
    sizeLimit: [2, quantity('The most local storage the volume may use.')],
    mode: [3, ptr(int32('Mode bits of the volume directory, 0000 to 0777.'))],
  }),
  gitRepo: obj(`${V1}.GitRepoVolumeSource`, {
    repository: [1, ptr(str('The repository URL.'))],
    revision: [2, str('Commit hash to check out.')],
    directory: [3, str('Target directory name; "." clones into the volume root.')],
  }),
  secret: obj(`${V1}.SecretVolumeSource`, {
    secretName: [1, str('Name of the secret in the pod\'s namespace.')],
    items: [2, atomicList(keyToPathSchema, 'Keys to project and their paths; unset projects every key.')],
    defaultMode: [3, ptr(int32(MODE))],
    optional: [4, ptr(bool('Whether the Secret or its keys may be missing.'))],
    defaultUser: [5, ptr(int64(USER))],
  }),
  iscsi: obj(`${V1}.ISCSIVolumeSource`, {
    targetPortal: [1, ptr(str('iSCSI target portal, IP or ip:port.'))],
    iqn: [2, ptr(str('iSCSI target qualified name.'))],
    lun: [3, ptr(int32('iSCSI target logical unit number.'))],
    iscsiInterface: [4, str('iSCSI interface name; defaults to default (tcp).')],
    fsType: [5, str(FS)],
    readOnly: [6, bool(RO)],
    portals: [7, atomicList(str(), 'Further iSCSI target portals.')],
    chapAuthDiscovery: [8, bool('Whether iSCSI discovery CHAP authentication is used.')],
    chapAuthSession: [11, bool('Whether iSCSI session CHAP authentication is used.')],
    secretRef: [10, described('The Secret holding the CHAP credentials.', localObjectReferenceSchema)],
    initiatorName: [12, ptr(str('Custom iSCSI initiator name.'))],
  }),
  glusterfs: obj(`${V1}.GlusterfsVolumeSource`, {
    endpoints: [1, ptr(str('Name of the Endpoints object that describes the Glusterfs topology.'))],
    path: [2, ptr(str('The Glusterfs volume path.'))],
    readOnly: [3, bool(RO)],
  }),
  persistentVolumeClaim: obj(`${V1}.PersistentVolumeClaimVolumeSource`, {
    claimName: [1, ptr(str('Name of a PersistentVolumeClaim in the pod\'s namespace.'))],
    readOnly: [2, bool('Forces the volume to be mounted read-only.')],
  }),
  rbd: obj(`${V1}.RBDVolumeSource`, {
    monitors: [1, atomicList(str(), 'Ceph monitors.')],
    image: [2, ptr(str('The rados image name.'))],
    fsType: [3, str(FS)],
    pool: [4, str('The rados pool name; defaults to rbd.')],
    user: [5, str('The rados user name; defaults to admin.')],
    keyring: [6, str('Path to the RBD key ring; defaults to /etc/ceph/keyring.')],
    secretRef: [7, described(SECRET, localObjectReferenceSchema)],
    readOnly: [8, bool(RO)],
  }),
  flexVolume: obj(`${V1}.FlexVolumeSource`, {
    driver: [1, ptr(str('Name of the driver for this volume.'))],
    fsType: [2, str(FS)],
    secretRef: [3, described('The Secret passed to the plugin scripts.', localObjectReferenceSchema)],
    readOnly: [4, bool(RO)],
    options: [5, strMap('Extra command options for the driver.')],
  }),
  cinder: obj(`${V1}.CinderVolumeSource`, {
    volumeID: [1, ptr(str('The Cinder volume ID.'))],
    fsType: [2, str(FS)],
    readOnly: [3, bool(RO)],
    secretRef: [4, described('The Secret with parameters for connecting to OpenStack.', localObjectReferenceSchema)],
  }),
  cephfs: obj(`${V1}.CephFSVolumeSource`, {
    monitors: [1, atomicList(str(), 'Ceph monitors.')],
    path: [2, str('Path to mount inside the file system; defaults to /.')],
    user: [3, str('The rados user name; defaults to admin.')],
    secretFile: [4, str('Path to the key ring for the user; defaults to /etc/ceph/user.secret.')],
    secretRef: [5, described(SECRET, localObjectReferenceSchema)],
    readOnly: [6, bool(RO)],
  }),
  downwardAPI: obj(`${V1}.DownwardAPIVolumeSource`, {
    items: [1, atomicList(downwardAPIVolumeFileSchema, 'The downward API files to create.')],
    defaultMode: [2, ptr(int32(MODE))],
    defaultUser: [3, ptr(int64(USER))],
  }),
  azureFile: obj(`${V1}.AzureFileVolumeSource`, {
    secretName: [1, ptr(str('The Secret holding the storage account name and key.'))],
    shareName: [2, ptr(str('The Azure share name.'))],
    readOnly: [3, bool(RO)],
  }),
  configMap: obj(
    `${V1}.ConfigMapVolumeSource`,
    {
      items: [2, atomicList(keyToPathSchema, 'Keys to project and their paths; unset projects every key.')],
      defaultMode: [3, ptr(int32(MODE))],
      optional: [4, ptr(bool('Whether the ConfigMap or its keys may be missing.'))],
      defaultUser: [5, ptr(int64(USER))],
    },
    { inline: [[1, CM]] },
  ),
  scaleIO: obj(`${V1}.ScaleIOVolumeSource`, {
    gateway: [1, ptr(str('Host address of the ScaleIO API gateway.'))],
    system: [2, ptr(str('Name of the storage system in ScaleIO.'))],
    secretRef: [3, described('The Secret holding the ScaleIO user credentials.', localObjectReferenceSchema)],
    sslEnabled: [4, bool('Whether SSL is used to talk to the gateway.')],
    protectionDomain: [5, str('Name of the ScaleIO protection domain.')],
    storagePool: [6, str('The ScaleIO storage pool.')],
    storageMode: [7, str('ThickProvisioned or ThinProvisioned (the default).')],
    volumeName: [8, str('Name of a volume already created in ScaleIO.')],
    fsType: [9, str(FS)],
    readOnly: [10, bool(RO)],
  }),
  storageos: obj(`${V1}.StorageOSVolumeSource`, {
    volumeName: [1, str('Human-readable name of the StorageOS volume.')],
    volumeNamespace: [2, str('The StorageOS namespace; defaults to the pod\'s namespace.')],
    fsType: [3, str(FS)],
    readOnly: [4, bool(RO)],
    secretRef: [5, described('The Secret holding the StorageOS API credentials.', localObjectReferenceSchema)],
  }),
  csi: obj(`${V1}.CSIVolumeSource`, {
    driver: [1, ptr(str('Name of the CSI driver that handles this volume.'))],
    readOnly: [2, ptr(bool(RO))],
    fsType: [3, ptr(str('Filesystem type to mount, such as ext4; passed to the CSI driver.'))],
    volumeAttributes: [4, strMap('Driver-specific properties passed to the CSI driver.')],
    nodePublishSecretRef: [5, described('The Secret passed to the NodePublishVolume and NodeUnpublishVolume calls.', localObjectReferenceSchema)],
  }),
  ephemeral: obj(`${V1}.EphemeralVolumeSource`, {
    volumeClaimTemplate: [
      1,
      described(
        'Template of the PersistentVolumeClaim created for the pod and deleted with it.',
        obj(
          `${V1}.PersistentVolumeClaimTemplate`,
          { metadata: [1, described('Labels and annotations copied to the claim when it is created; the name and namespace are not allowed.', objectMetaSchema)], spec: [2, described('The spec of the created claim.', persistentVolumeClaimSpecSchema)] },
          { required: ['spec'] },
        ),
      ),
    ],
  }),
  image: obj(`${V1}.ImageVolumeSource`, {
    reference: [1, str('Image or artifact reference to mount.')],
    pullPolicy: [2, str('Always, Never or IfNotPresent.')],
  }),
};

const KEYS = 'Keys to project and their paths; unset projects every key.';

const volumeProjectionSchema = obj(`${V1}.VolumeProjection`, {
  secret: [
    1,
    described(
      'Projects data of a Secret.',
      obj(
        `${V1}.SecretProjection`,
        { items: [2, atomicList(keyToPathSchema, KEYS)], optional: [4, ptr(bool('Whether the Secret or its keys may be missing.'))] },
        { inline: [[1, SEC]] },
      ),
    ),
  ],
  downwardAPI: [
    2,
    described(
      'Projects downward API data.',
      obj(`${V1}.DownwardAPIProjection`, { items: [1, atomicList(downwardAPIVolumeFileSchema, 'The downward API files to create.')] }),
    ),
  ],
  configMap: [
    3,
    described(
      'Projects data of a ConfigMap.',
      obj(
        `${V1}.ConfigMapProjection`,
        { items: [2, atomicList(keyToPathSchema, KEYS)], optional: [4, ptr(bool('Whether the ConfigMap or its keys may be missing.'))] },
        { inline: [[1, CM]] },
      ),
    ),
  ],
  serviceAccountToken: [
    4,
    described(
      'Projects a service account token.',
      obj(`${V1}.ServiceAccountTokenProjection`, {
        audience: [1, str('Intended audience of the token; defaults to the API server\'s identifier.')],
        expirationSeconds: [2, ptr(int64('Requested token lifetime in seconds; defaults to one hour.'))],
        path: [3, ptr(str('Path of the token file, relative to the mount point.'))],
        user: [4, ptr(int64('The user ID that owns the file.'))],
      }),
    ),
  ],
  clusterTrustBundle: [
    5,
    described(
      'Projects ClusterTrustBundle certificates into a file.',
      obj(`${V1}.ClusterTrustBundleProjection`, {
        name: [1, ptr(str('Selects a single ClusterTrustBundle by name.'))],
        signerName: [2, ptr(str('Selects the ClusterTrustBundles of this signer.'))],
        labelSelector: [3, described('Selects the signer\'s ClusterTrustBundles with matching labels.', labelSelectorSchema)],
        optional: [5, ptr(bool('Whether the pod may start when no bundle matches.'))],
        path: [4, ptr(str('Path of the file, relative to the volume root.'))],
        user: [6, ptr(int64('The user ID that owns the file.'))],
      }),
    ),
  ],
  podCertificate: [
    6,
    described(
      'Projects a key and certificate chain issued for the pod.',
      obj(`${V1}.PodCertificateProjection`, {
        signerName: [1, str('The signer to request the certificate from.')],
        keyType: [2, str('Type of the generated key pair, such as RSA3072 or ECDSAP256.')],
        maxExpirationSeconds: [3, ptr(int32('Longest certificate lifetime to request, in seconds.'))],
        credentialBundlePath: [4, str('Path of a file holding both the key and the certificate chain.')],
        keyPath: [5, str('Path of the private key file.')],
        certificateChainPath: [6, str('Path of the certificate chain file.')],
        userAnnotations: [7, strMap('Annotations copied into the PodCertificateRequest.')],
        user: [8, ptr(int64('The user ID that owns the files.'))],
      }),
    ),
  ],
});

const projectedSchema = obj(`${V1}.ProjectedVolumeSource`, {
  sources: [1, atomicList(volumeProjectionSchema, 'The volume projections.')],
  defaultMode: [2, ptr(int32(MODE))],
  defaultUser: [3, ptr(int64(USER))],
});

/** VolumeSource, inline in Volume: one property per source. */
export const volumeSourceSchema: ObjectSchema = obj(`${V1}.VolumeSource`, {
  hostPath: [1, described('A file or directory on the host node.', hostPathSchema)],
  emptyDir: [2, described('A temporary directory that shares the pod\'s lifetime.', podOnlySources.emptyDir)],
  gcePersistentDisk: [3, described('Deprecated: a GCE persistent disk.', gcePersistentDiskSchema)],
  awsElasticBlockStore: [4, described('Deprecated: an AWS EBS disk.', awsElasticBlockStoreSchema)],
  gitRepo: [5, described('Deprecated: a git repository cloned into the volume.', podOnlySources.gitRepo)],
  secret: [6, described('A Secret that populates the volume.', podOnlySources.secret)],
  nfs: [7, described('An NFS mount on the host.', nfsSchema)],
  iscsi: [8, described('An iSCSI disk attached to the host.', podOnlySources.iscsi)],
  glusterfs: [9, described('Removed: a Glusterfs mount on the host.', podOnlySources.glusterfs)],
  persistentVolumeClaim: [10, described('A PersistentVolumeClaim in the pod\'s namespace.', podOnlySources.persistentVolumeClaim)],
  rbd: [11, described('Removed: a Rados Block Device mount.', podOnlySources.rbd)],
  flexVolume: [12, described('Deprecated: a volume handled by an exec-based plugin.', podOnlySources.flexVolume)],
  cinder: [13, described('Deprecated: an OpenStack Cinder volume.', podOnlySources.cinder)],
  cephfs: [14, described('Removed: a Ceph FS mount on the host.', podOnlySources.cephfs)],
  flocker: [15, described('Removed: a Flocker volume.', flockerSchema)],
  downwardAPI: [16, described('Downward API information about the pod.', podOnlySources.downwardAPI)],
  fc: [17, described('A Fibre Channel disk attached to the host.', fcSchema)],
  azureFile: [18, described('Deprecated: an Azure File Service mount.', podOnlySources.azureFile)],
  configMap: [19, described('A ConfigMap that populates the volume.', podOnlySources.configMap)],
  vsphereVolume: [20, described('Deprecated: a vSphere volume.', vsphereVolumeSchema)],
  quobyte: [21, described('Removed: a Quobyte mount on the host.', quobyteSchema)],
  azureDisk: [22, described('Deprecated: an Azure data disk.', azureDiskSchema)],
  photonPersistentDisk: [23, described('Removed: a Photon Controller persistent disk.', photonPersistentDiskSchema)],
  projected: [26, described('Several sources projected into one directory.', projectedSchema)],
  portworxVolume: [24, described('Deprecated: a Portworx volume.', portworxVolumeSchema)],
  scaleIO: [25, described('Removed: a ScaleIO persistent volume.', podOnlySources.scaleIO)],
  storageos: [27, described('Removed: a StorageOS volume.', podOnlySources.storageos)],
  csi: [28, described('An ephemeral volume handled by a CSI driver.', podOnlySources.csi)],
  ephemeral: [29, described('A volume from a PersistentVolumeClaim created and deleted with the pod.', podOnlySources.ephemeral)],
  image: [30, described('An OCI image or artifact mounted read-only.', podOnlySources.image)],
});

export const volumeSchema: ObjectSchema = obj(`${V1}.Volume`, { name: [1, ptr(str('A DNS_LABEL unique within the pod.'))] }, { required: ['name'], inline: [[2, volumeSourceSchema]] });
