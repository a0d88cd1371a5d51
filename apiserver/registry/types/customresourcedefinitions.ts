import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { validateCrd, validateCrdUpdate } from '../crd/crd-validation';
import { arr, ensureRec, rec, str } from '../obj-access';
import type { ResourceType } from '../resource-type';
import { any, atomicList, bool, bytes, described, int32, obj, ptr, setList, str as s, time } from '../schema-builders';
import { column } from '../table';

/**
 * apiextensions.svc.io/v1 CustomResourceDefinition (served as apiextensions.k8s.io/v1 too).
 *
 * Message names and field numbers are upstream's apiextensions v1 generated.proto as we know
 * them; openAPIV3Schema is JSON here (upstream's JSONSchemaProps message is not declared), so the
 * type has no protobuf form and is served in JSON, YAML and CBOR, which is what kubectl and client
 * libraries use for it.
 */

const PKG = 'k8s.io.apiextensions-apiserver.pkg.apis.apiextensions.v1';

export const CRD_GROUP = 'apiextensions.svc.io';
/** Upstream's finalizer that holds a deleted CRD until its objects are gone. */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

const namesSchema = obj(`${PKG}.CustomResourceDefinitionNames`, {
  plural: [1, s('plural is the plural name of the resource to serve, all lowercase.')],
  singular: [2, s('singular is the singular name of the resource, all lowercase. Defaults to the lowercased kind.')],
  shortNames: [3, atomicList(s(), 'shortNames are short names for the resource, exposed in API discovery documents.')],
  kind: [4, s('kind is the serialized kind of the resource, normally CamelCase and singular.')],
  listKind: [5, s('listKind is the serialized kind of the list for this resource. Defaults to "`kind`List".')],
  categories: [6, atomicList(s(), 'categories is a list of grouped resources this custom resource belongs to (e.g. all).')],
});

const columnSchema = obj(`${PKG}.CustomResourceColumnDefinition`, {
  name: [1, s('name is a human readable name for the column.')],
  type: [2, s('type is an OpenAPI type definition for this column: integer, number, string, boolean or date.')],
  format: [3, s('format is an optional OpenAPI type definition for this column.')],
  description: [4, s('description is a human readable description of this column.')],
  priority: [5, int32('priority: 0 shown in standard view, greater only in wide view.')],
  jsonPath: [6, s('jsonPath is a simple JSON path evaluated against each custom resource to produce the value for this column.')],
});

const scaleSchema = obj(`${PKG}.CustomResourceSubresourceScale`, {
  specReplicasPath: [1, s('specReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale spec.replicas.')],
  statusReplicasPath: [2, s('statusReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale status.replicas.')],
  labelSelectorPath: [3, ptr(s('labelSelectorPath defines the JSON path inside of a custom resource that corresponds to Scale status.selector.'))],
});

const versionSchema = obj(
  `${PKG}.CustomResourceDefinitionVersion`,
  {
    name: [1, s('name is the version name, e.g. "v1", "v2beta1".')],
    served: [2, ptr(bool('served is a flag enabling/disabling this version from being served via REST APIs.'))],
    storage: [3, ptr(bool('storage indicates this version should be used when persisting custom resources to storage.'))],
    deprecated: [7, bool('deprecated indicates this version of the custom resource API is deprecated.')],
    deprecationWarning: [8, ptr(s('deprecationWarning overrides the default warning returned to API clients.'))],
    schema: [4, described('schema describes the schema used for validation, pruning, and defaulting of this version of the custom resource.', obj(`${PKG}.CustomResourceValidation`, { openAPIV3Schema: [1, any('openAPIV3Schema is the OpenAPI v3 schema to use for validation and pruning.')] }))],
    subresources: [
      5,
      described(
        'subresources specify what subresources this version of the defined custom resource have.',
        obj(`${PKG}.CustomResourceSubresources`, {
          status: [1, any('status indicates the custom resource should serve a /status subresource.')],
          scale: [2, described('scale indicates the custom resource should serve a /scale subresource that returns an autoscaling/v1 Scale object.', scaleSchema)],
        }),
      ),
    ],
    additionalPrinterColumns: [6, atomicList(columnSchema, 'additionalPrinterColumns specifies additional columns returned in Table output.')],
    selectableFields: [9, atomicList(obj(`${PKG}.SelectableField`, { jsonPath: [1, s('jsonPath is a simple JSON path which is evaluated against each custom resource to produce a field selector value.')] }), 'selectableFields specifies paths to fields that may be used as field selectors.')],
  },
  { required: ['name', 'served', 'storage'] },
);

const webhookClientConfigSchema = obj(`${PKG}.WebhookClientConfig`, {
  url: [3, ptr(s('url gives the location of the webhook, in standard URL form.'))],
  service: [
    1,
    described('service is a reference to the service for this webhook. Either service or url must be specified.', obj(`${PKG}.ServiceReference`, {
      namespace: [1, s('namespace is the namespace of the service.')],
      name: [2, s('name is the name of the service.')],
      path: [3, ptr(s('path is an optional URL path at which the webhook will be contacted.'))],
      port: [4, ptr(int32('port is an optional service port at which the webhook will be contacted.'))],
    })),
  ],
  caBundle: [2, bytes('caBundle is a PEM encoded CA bundle which will be used to validate the webhook server certificate.')],
});

const conditionSchema = obj(`${PKG}.CustomResourceDefinitionCondition`, {
  type: [1, s('type is the type of the condition: Established, NamesAccepted, Terminating.')],
  status: [2, s('status is the status of the condition: True, False or Unknown.')],
  lastTransitionTime: [3, time('lastTransitionTime last time the condition transitioned from one status to another.')],
  reason: [4, s("reason is a unique, one-word, CamelCase reason for the condition's last transition.")],
  message: [5, s('message is a human-readable message indicating details about last transition.')],
});

export const crdSchema = withMeta(`${PKG}.CustomResourceDefinition`, {
  spec: [
    2,
    described('spec describes how the user wants the resources to appear.', obj(
      `${PKG}.CustomResourceDefinitionSpec`,
      {
        group: [1, s('group is the API group of the defined custom resource.')],
        names: [3, described('names specify the resource and kind names for the custom resource.', namesSchema)],
        scope: [4, s('scope indicates whether the defined custom resource is cluster- or namespace-scoped: Cluster or Namespaced.')],
        versions: [7, atomicList(versionSchema, 'versions is the list of all API versions of the defined custom resource.')],
        conversion: [
          9,
          described('conversion defines conversion settings for the CRD.', obj(`${PKG}.CustomResourceConversion`, {
            strategy: [1, s('strategy specifies how custom resources are converted between versions: None or Webhook.')],
            webhook: [
              2,
              described('webhook describes how to call the conversion webhook. Required when strategy is set to Webhook.', obj(`${PKG}.WebhookConversion`, {
                clientConfig: [2, described('clientConfig is the instructions for how to call the webhook if strategy is Webhook.', webhookClientConfigSchema)],
                conversionReviewVersions: [3, atomicList(s(), 'conversionReviewVersions is an ordered list of preferred ConversionReview versions the webhook expects.')],
              })),
            ],
          })),
        ],
        preserveUnknownFields: [10, bool('preserveUnknownFields is deprecated; it must be false in apiextensions/v1.')],
      },
      { required: ['group', 'names', 'scope', 'versions'] },
    )),
  ],
  status: [
    3,
    described('status indicates the actual state of the CustomResourceDefinition.', obj(`${PKG}.CustomResourceDefinitionStatus`, {
      conditions: [1, { ...atomicList(conditionSchema, 'conditions indicate state for particular aspects of a CustomResourceDefinition.'), listType: 'map', mapKeys: ['type'] }],
      acceptedNames: [2, described('acceptedNames are the names that are actually being used to serve discovery.', namesSchema)],
      storedVersions: [3, setList(s(), 'storedVersions lists all versions of CustomResources that were ever persisted.')],
    })),
  ],
});

/** Upstream's SetDefaults for v1 CRDs: singular, listKind, conversion None, storedVersions from the storage version. */
function defaults(o: KObject): void {
  const spec = rec(o.spec);
  if (!spec) return;
  const names = rec(spec.names);
  if (names) {
    const kind = str(names.kind);
    if (!str(names.singular) && kind) names.singular = kind.toLowerCase();
    if (!str(names.listKind) && kind) names.listKind = `${kind}List`;
  }
  if (!rec(spec.conversion)) spec.conversion = { strategy: 'None' };
  else if (!str(rec(spec.conversion)!.strategy)) rec(spec.conversion)!.strategy = 'None';
  const storage = arr(spec.versions).map(rec).find((v) => v?.storage === true);
  if (storage && str(storage.name)) {
    const status = ensureRec(o, 'status');
    const stored = arr(status.storedVersions).filter((v): v is string => typeof v === 'string');
    if (!stored.includes(storage.name as string)) status.storedVersions = [...stored, storage.name];
  }
}

/** The JSON of a CRD's status condition (Established, NamesAccepted, Terminating). */
export function crdCondition(crd: KObject, type: string): Record<string, unknown> | undefined {
  return arr(rec(crd.status)?.conditions)
    .map(rec)
    .find((c) => c?.type === type);
}

export function makeCrdType(): ResourceType {
  return {
    group: CRD_GROUP,
    version: 'v1',
    resource: 'customresourcedefinitions',
    singular: 'customresourcedefinition',
    kind: 'CustomResourceDefinition',
    listKind: 'CustomResourceDefinitionList',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    schema: crdSchema,
    hasStatus: true,
    finalizerNames: 'qualified',
    specFields: ['spec'],
    tableColumns: [column('Created At', 'date', 'CreationTimestamp of the CustomResourceDefinition.', (o) => o.metadata.creationTimestamp ?? '')],
    defaults,
    // Upstream reports the spec's and the update's errors together.
    validate: (o, old, sub) => (sub === 'status' ? [] : [...validateCrd(o), ...(old ? validateCrdUpdate(o, old, crdCondition(old, 'Established')?.status === 'True') : [])]),
  };
}
