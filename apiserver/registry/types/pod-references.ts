import type { KObject } from '../../api/types';
import { get, rec, recs, str, strAt } from '../obj-access';

/** The objects a pod refers to by name in its own namespace (upstream VisitPodSecretNames, VisitPodConfigmapNames, and claim volumes). */
export interface PodReferences {
  secrets: Set<string>;
  configMaps: Set<string>;
  claims: Set<string>;
  serviceAccount: string;
}

/** Reads every secret, config map and claim name a pod spec names, as upstream's node graph populator does. */
export function podReferences(pod: KObject): PodReferences {
  const spec = rec(pod.spec) ?? {};
  const out: PodReferences = { secrets: new Set(), configMaps: new Set(), claims: new Set(), serviceAccount: strAt(spec, 'serviceAccountName') };
  const add = (set: Set<string>, v: unknown) => {
    const s = str(v);
    if (s) set.add(s);
  };
  for (const s of recs(spec.imagePullSecrets)) add(out.secrets, s.name);
  const containers = [...recs(spec.initContainers), ...recs(spec.containers), ...recs(spec.ephemeralContainers)];
  for (const c of containers) {
    for (const e of recs(c.env)) {
      add(out.secrets, get(e, 'valueFrom', 'secretKeyRef', 'name'));
      add(out.configMaps, get(e, 'valueFrom', 'configMapKeyRef', 'name'));
    }
    for (const e of recs(c.envFrom)) {
      add(out.secrets, get(e, 'secretRef', 'name'));
      add(out.configMaps, get(e, 'configMapRef', 'name'));
    }
  }
  for (const v of recs(spec.volumes)) {
    add(out.secrets, get(v, 'secret', 'secretName'));
    add(out.configMaps, get(v, 'configMap', 'name'));
    for (const src of recs(get(v, 'projected', 'sources'))) {
      add(out.secrets, get(src, 'secret', 'name'));
      add(out.configMaps, get(src, 'configMap', 'name'));
    }
    add(out.secrets, get(v, 'azureFile', 'secretName'));
    for (const plugin of ['cephfs', 'cinder', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos']) add(out.secrets, get(v, plugin, 'secretRef', 'name'));
    add(out.secrets, get(v, 'csi', 'nodePublishSecretRef', 'name'));
    add(out.claims, get(v, 'persistentVolumeClaim', 'claimName'));
    // A generic ephemeral volume's claim is named <pod>-<volume> (upstream ephemeral.VolumeClaimName).
    if (rec(v.ephemeral) && str(v.name)) out.claims.add(`${pod.metadata.name ?? ''}-${String(v.name)}`);
  }
  return out;
}
