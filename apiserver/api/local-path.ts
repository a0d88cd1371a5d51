/**
 * Names svc-apiserver's built-in local-path provisioner and svc-node agree on (issue 20 item 5;
 * modelled on the local-path provisioner k3s ships): a claim of a class with this provisioner,
 * once its pod is scheduled, gets a hostPath PersistentVolume at `<dir>/<pv>_<namespace>_<claim>`
 * on that node; the node's agent creates the directory when a pod mounts it and removes it, then
 * the finalizer, when the volume is deleted.
 */

/** The provisioner name of the built-in class (StorageClass.provisioner). */
export const LOCAL_PATH_PROVISIONER = 'svc.io/local-path';

/** The default StorageClass created at start (k3s's name). */
export const LOCAL_PATH_CLASS = 'local-path';

/** Where volumes go on a node unless the class's `nodePath` parameter says otherwise; svc-node's `localPathDir` default. */
export const DEFAULT_LOCAL_PATH_DIR = '/var/lib/svc-node/local-path';

/** Holds a provisioned volume until the node removed its directory. */
export const LOCAL_PATH_FINALIZER = 'svc.io/local-path-cleanup';

/**
 * The label naming the node a provisioned volume lives on (its node affinity says the same, for
 * the scheduler). The agent lists and watches volumes by it; the Node authorizer lets a node read
 * and update (NodeRestriction: only to remove LOCAL_PATH_FINALIZER) the volumes labelled with its name.
 */
export const LOCAL_PATH_NODE_LABEL = 'local-path.svc.io/node';

/** The mode of a volume's directory: writable by any user, as k3s's provisioner (0777), so that pods running as non-root can write. */
export const LOCAL_PATH_VOLUME_MODE = 0o777;

/** The mode of the base directory when the agent creates it: only root may list the volumes. */
export const LOCAL_PATH_BASE_MODE = 0o700;

/** The directory name of a volume (k3s's `<pv>_<namespace>_<claim>`). */
export function localPathDirName(pv: string, namespace: string, claim: string): string {
  return `${pv}_${namespace}_${claim}`;
}
