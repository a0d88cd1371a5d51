import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { dns1123SubdomainErrors } from '../../api/name-validation';
import { withMeta } from '../common-schemas';
import { messages } from '../common-validation';
import { forbidden, immutable, required, tooLong } from '../field-errors';
import { get, rec, str } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { bool, described, obj, ptr, str as s, strMap } from '../schema-builders';
import { semanticEqual } from '../semantic-equal';
import { ageColumn, column, type Now } from '../table';
import { persistentVolumeSpecSchema } from './persistentvolumes';
import { STORAGE_V1, volumeErrorSchema } from './storage-common';

/** storage.svc.io/v1 VolumeAttachment: the intent to attach a volume to a node, for a CSI external attacher. */

/** Upstream's CSI driver name limit. */
const ATTACHER_MAX = 63;

export const volumeAttachmentSchema = withMeta(`${STORAGE_V1}.VolumeAttachment`, {
  spec: [
    2,
    described(
      'What to attach where; immutable.',
      obj(`${STORAGE_V1}.VolumeAttachmentSpec`, {
        attacher: [1, s('The volume driver that handles the request.')],
        source: [
          2,
          described(
            'The volume to attach: exactly one of persistentVolumeName and inlineVolumeSpec.',
            obj(`${STORAGE_V1}.VolumeAttachmentSource`, {
              persistentVolumeName: [1, ptr(s('The name of the PersistentVolume to attach.'))],
              inlineVolumeSpec: [2, described('A pod\'s inline volume translated to a PersistentVolumeSpec (CSI migration).', persistentVolumeSpecSchema)],
            }),
          ),
        ],
        nodeName: [3, s('The node to attach the volume to.')],
      }),
    ),
  ],
  status: [
    3,
    described(
      'The state of the attach or detach, set by the attacher.',
      obj(`${STORAGE_V1}.VolumeAttachmentStatus`, {
        attached: [1, bool('Whether the volume is attached.')],
        attachmentMetadata: [2, strMap('What the attach returned, for the mount.')],
        attachError: [3, volumeErrorSchema],
        detachError: [4, volumeErrorSchema],
      }),
    ),
  ],
});

/** Upstream ValidateVolumeAttachment (spec): attacher, exactly one source, nodeName. */
function validate(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  const attacher = str(spec.attacher) ?? '';
  if (attacher === '') out.push(required('spec.attacher'));
  else if (attacher.length > ATTACHER_MAX) out.push(tooLong('spec.attacher', ATTACHER_MAX));
  else out.push(...messages('spec.attacher', attacher, dns1123SubdomainErrors(attacher.toLowerCase())));
  const pv = str(get(spec, 'source', 'persistentVolumeName'));
  const inline = rec(get(spec, 'source', 'inlineVolumeSpec'));
  if (pv === undefined && !inline) out.push(required('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (pv !== undefined && inline) out.push(forbidden('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (pv === '') out.push(required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName'));
  if (!str(spec.nodeName)) out.push(required('spec.nodeName'));
  return out;
}

/** Upstream ValidateVolumeAttachmentUpdate: the spec never changes. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  return semanticEqual(o.spec, old.spec) ? [] : [immutable('spec', o.spec ?? null)];
}

function volumeAttachmentColumns(now: Now): TableColumn[] {
  return [
    column('Attacher', 'string', 'attacher indicates the name of the volume driver that MUST handle this request.', (o) => str(get(o, 'spec', 'attacher')) ?? ''),
    column('PV', 'string', 'persistentVolumeName represents the name of the persistent volume to attach.', (o) => str(get(o, 'spec', 'source', 'persistentVolumeName')) ?? ''),
    column('Node', 'string', 'nodeName represents the node that the volume should be attached to.', (o) => str(get(o, 'spec', 'nodeName')) ?? ''),
    column('Attached', 'boolean', 'attached indicates the volume is successfully attached.', (o) => get(o, 'status', 'attached') === true),
    ageColumn(now),
  ];
}

export function makeVolumeAttachmentType(now: Now = Date.now): ResourceType {
  return {
    group: 'storage.svc.io',
    version: 'v1',
    resource: 'volumeattachments',
    singular: 'volumeattachment',
    kind: 'VolumeAttachment',
    listKind: 'VolumeAttachmentList',
    namespaced: false,
    schema: volumeAttachmentSchema,
    hasStatus: true,
    specFields: ['spec'],
    tableColumns: volumeAttachmentColumns(now),
    validate,
    validateUpdate,
  };
}
