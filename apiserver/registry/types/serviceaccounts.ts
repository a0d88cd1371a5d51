import type { KObject } from '../../api/types';
import { localObjectReferenceSchema, objectReferenceSchema, withMeta } from '../common-schemas';
import { arr } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, bool, mapList, ptr } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/** core/v1 ServiceAccount. Only generic metadata validation applies (upstream ValidateServiceAccount). */

export const serviceAccountSchema = withMeta('k8s.io.api.core.v1.ServiceAccount', {
  secrets: [2, mapList(objectReferenceSchema, ['name'], 'Deprecated: legacy token secrets of this account.')],
  imagePullSecrets: [3, atomicList(localObjectReferenceSchema, 'Secrets pods using this account may pull images with.')],
  automountServiceAccountToken: [4, ptr(bool('Whether pods running as this account should have a token mounted automatically.'))],
});

export function serviceAccountColumns(now: Now): TableColumn[] {
  return [column('Secrets', 'integer', 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', (o: KObject) => arr(o.secrets).length), ageColumn(now)];
}

export function makeServiceAccountType(now: Now = Date.now): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'serviceaccounts',
    singular: 'serviceaccount',
    kind: 'ServiceAccount',
    listKind: 'ServiceAccountList',
    namespaced: true,
    shortNames: ['sa'],
    schema: serviceAccountSchema,
    hasStatus: false,
    specFields: [],
    tableColumns: serviceAccountColumns(now),
  };
}

export const serviceAccountType: ResourceType = makeServiceAccountType();
