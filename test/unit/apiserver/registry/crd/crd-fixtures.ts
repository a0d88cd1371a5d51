import type { KObject } from '../../../../../apiserver/api/types';

/** A CRD of group example.com (v1, storage) with the schema given, for the CRD unit tests. */
export function crd(opts: { plural?: string; kind?: string; group?: string; scope?: string; schema?: unknown; version?: Record<string, unknown>; names?: Record<string, unknown>; versions?: unknown[] } = {}): KObject {
  const plural = opts.plural ?? 'widgets';
  const group = opts.group ?? 'example.com';
  return {
    apiVersion: 'apiextensions.svc.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: opts.scope ?? 'Namespaced',
      names: { plural, kind: opts.kind ?? 'Widget', ...opts.names },
      versions: opts.versions ?? [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: opts.schema ?? { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } } } } },
          ...opts.version,
        },
      ],
    },
  };
}

/** A schema whose spec has the properties given. */
export function specSchema(properties: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'object', properties: { spec: { type: 'object', properties, ...extra }, status: { type: 'object', properties: { replicas: { type: 'integer' } } } } };
}
