import type { Cause } from '../../api/errors';
import { bothKeys } from '../../api/group-names';
import type { KObject } from '../../api/types';
import { dns1123SubdomainErrors } from '../../api/name-validation';
import { withMeta } from '../common-schemas';
import { messages } from '../common-validation';
import { child, forbidden, immutable, notSupported, required, tooLong } from '../field-errors';
import { rec, str } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { described, obj, ptr, str as s } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/** networking.svc.io/v1 IngressClass (upstream networking.k8s.io/v1; its generated.proto names and numbers). Stored and validated; there is no built-in ingress controller. */

const V1 = 'k8s.io.api.networking.v1';
const SCOPES: readonly string[] = ['Cluster', 'Namespace'];
const MAX_CONTROLLER_LEN = 250;

export const ingressClassSchema = withMeta(`${V1}.IngressClass`, {
  spec: [
    2,
    described(
      'The desired state of the IngressClass.',
      obj(`${V1}.IngressClassSpec`, {
        controller: [1, s('The name of the controller that should handle this class, e.g. example.com/ingress-controller. Immutable.')],
        parameters: [
          2,
          described(
            'A link to a resource with additional configuration for the controller.',
            obj(`${V1}.IngressClassParametersReference`, {
              apiGroup: [1, ptr(s('The group of the referenced resource; the core group when unset.'))],
              kind: [2, s('The kind of the referenced resource.')],
              name: [3, s('The name of the referenced resource.')],
              scope: [4, ptr(s('Cluster (default) or Namespace.'))],
              namespace: [5, ptr(s('The namespace of the referenced resource, when scope is Namespace.'))],
            }),
          ),
        ],
      }),
    ),
  ],
});

/** Upstream AnnotationIsDefaultIngressClass, in svc's spelling; both spellings mark a default class. */
export const DEFAULT_INGRESS_CLASS_ANNOTATION = 'ingressclass.svc.io/is-default-class';
const DEFAULT_CLASS_KEYS = bothKeys(DEFAULT_INGRESS_CLASS_ANNOTATION);

/** The annotation's value is exactly "true" (either spelling of its key), as upstream's plugin checks. */
export function isDefaultIngressClass(o: KObject): boolean {
  const a = o.metadata.annotations;
  return a !== undefined && a !== null && DEFAULT_CLASS_KEYS.some((k) => a[k] === 'true');
}

/**
 * Upstream DefaultIngressClass's getDefaultClass: of the classes marked default, the newest by
 * creationTimestamp, the first by name among equally new ones; undefined when none is marked.
 */
export function defaultIngressClass(classes: readonly KObject[]): KObject | undefined {
  const created = (c: KObject) => Date.parse(c.metadata.creationTimestamp ?? '') || 0;
  const name = (c: KObject) => c.metadata.name ?? '';
  return classes.filter(isDefaultIngressClass).sort((a, b) => created(b) - created(a) || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0))[0];
}

/** Upstream SetDefaults_IngressClass: parameters scope Cluster. */
function defaults(o: KObject): void {
  const params = rec(rec(o.spec)?.parameters);
  if (params && !params.scope) params.scope = 'Cluster';
}

/** Upstream IsDomainPrefixedPath: a DNS subdomain, then a path. */
function domainPrefixedPathErrors(v: string): string[] {
  const slash = v.indexOf('/');
  if (slash <= 0) return ['must be a domain-prefixed path (such as "acme.io/foo")'];
  return dns1123SubdomainErrors(v.slice(0, slash));
}

function validateParameters(p: Record<string, unknown>, path: string): Cause[] {
  const out: Cause[] = [];
  const group = str(p.apiGroup);
  if (group) out.push(...messages(child(path, 'apiGroup'), group, dns1123SubdomainErrors(group)));
  if (!str(p.kind)) out.push(required(child(path, 'kind')));
  if (!str(p.name)) out.push(required(child(path, 'name')));
  const scope = str(p.scope);
  const ns = str(p.namespace);
  if (!scope) out.push(required(child(path, 'scope')));
  else if (!SCOPES.includes(scope)) out.push(notSupported(child(path, 'scope'), scope, SCOPES));
  else if (scope === 'Namespace' && !ns) out.push(required(child(path, 'namespace'), '`parameters.scope` is set to "Namespace"'));
  else if (scope === 'Cluster' && ns) out.push(forbidden(child(path, 'namespace'), '`parameters.scope` is set to "Cluster"'));
  return out;
}

/** Upstream ValidateIngressClass. */
function validate(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  const controller = str(spec.controller) ?? '';
  if (!controller) out.push(required('spec.controller'));
  else if (controller.length > MAX_CONTROLLER_LEN) out.push(tooLong('spec.controller', MAX_CONTROLLER_LEN));
  else out.push(...messages('spec.controller', controller, domainPrefixedPathErrors(controller)));
  const params = rec(spec.parameters);
  if (params) out.push(...validateParameters(params, 'spec.parameters'));
  return out;
}

/** Upstream ValidateIngressClassUpdate: the controller is immutable. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const now = rec(o.spec)?.controller;
  return now === rec(old.spec)?.controller ? [] : [immutable('spec.controller', now ?? null)];
}

/** kubectl get ingressclass: CONTROLLER, PARAMETERS (Kind[.apiGroup]/name, else <none>), AGE. */
export function ingressClassColumns(now: Now): TableColumn[] {
  return [
    column('Controller', 'string', 'Controller that is responsible for handling this class.', (o) => str(rec(o.spec)?.controller) ?? ''),
    column('Parameters', 'string', 'A reference to a resource with additional parameters.', (o) => {
      const p = rec(rec(o.spec)?.parameters);
      if (!p) return '<none>';
      const group = str(p.apiGroup);
      return `${str(p.kind) ?? ''}${group ? `.${group}` : ''}/${str(p.name) ?? ''}`;
    }),
    ageColumn(now),
  ];
}

export function makeIngressClassType(now: Now = Date.now): ResourceType {
  return {
    group: 'networking.svc.io',
    version: 'v1',
    resource: 'ingressclasses',
    singular: 'ingressclass',
    kind: 'IngressClass',
    listKind: 'IngressClassList',
    namespaced: false,
    schema: ingressClassSchema,
    hasStatus: false,
    tableColumns: ingressClassColumns(now),
    defaults,
    validate,
    validateUpdate,
  };
}
