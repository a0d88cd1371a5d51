import type { Cause } from '../api/errors';
import type { ObjectSchema } from '../api/schema';
import type { KObject } from '../api/types';

/** One column of server-side Table output (meta.svc.io/v1 Table columnDefinitions + the cell it shows). */
export interface TableColumn {
  name: string;
  /** OpenAPI type of the cell: string, integer, number, boolean, date. */
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  /** 0 = shown by default; 1 = shown with -o wide. */
  priority: number;
  cell(obj: KObject): unknown;
}

/**
 * How deletion treats a type beyond the generic metadata finalizers and grace period: upstream's
 * RESTGracefulDeleteStrategy (CheckGracefulDelete) and the hooks its namespace storage overrides
 * (its own Delete, ShouldDeleteDuringUpdate). The store calls these; it names no kind itself.
 */
export interface DeletionStrategy {
  /** Grace period in seconds when the request names none (upstream CheckGracefulDelete); absent: 0, the object goes at once. */
  defaultGracePeriodSeconds?(obj: KObject): number;
  /** True when something besides metadata.finalizers and a grace period keeps a deleted object terminating (namespaces: spec.finalizers). */
  holdsDeletion?(obj: KObject): boolean;
  /** Changes the terminating object in place each time a delete keeps it (namespaces: status.phase Terminating); must be idempotent. */
  markTerminating?(obj: KObject): void;
  /** Whether an update that takes the last finalizer off a terminating object removes it (upstream ShouldDeleteDuringUpdate); absent: it does. */
  deleteWhenFinalized?(obj: KObject): boolean;
  /**
   * The propagation policy of a delete that names none (upstream DefaultGarbageCollectionPolicy;
   * batch/v1 Jobs orphan their pods), and the warning such a delete is answered with.
   */
  defaultPropagation?: { policy: 'Orphan' | 'Background' | 'Foreground'; warning?: string };
}

/**
 * One stored resource served through another type, as upstream serves one etcd resource through
 * several groups (core/v1 Event and events.k8s.io/v1 Event are one resource, converted through the
 * internal type): the objects live under the storage keys of `group`/`resource`, in that type's
 * form. Reads convert what is stored with `fromStorage`, writes store `toStorage` of what this type
 * validated; lists, watches, informers, deletion and the TTL see one set of objects through both.
 */
export interface StorageView {
  /** The group ('' for core) and resource whose keys hold the objects. */
  group: string;
  resource: string;
  /** This type's form of a stored object (a fresh object; the argument is not changed). */
  fromStorage(stored: KObject): KObject;
  /** The stored form of an object of this type (a fresh object; the argument is not changed). */
  toStorage(obj: KObject): KObject;
}

/**
 * Conversion between the versions of one resource by something asynchronous (upstream's
 * CRConverter for the Webhook strategy). Objects already at the wanted apiVersion are not sent.
 */
export interface ObjectConverter {
  /** The apiVersion objects are written in (the CRD's storage version). */
  storageApiVersion: string;
  /**
   * The objects at apiVersion `to`, in their order, all those needing it converted in one call;
   * an object already at `to` is returned as it is (the same reference). Rejects with a 500
   * ApiError in upstream's words when the conversion fails.
   */
  convert(objs: KObject[], to: string): Promise<KObject[]>;
}

/**
 * The scale sub-resource ({resource}/scale, an autoscaling/v1 Scale), declared by where its three
 * values live in the object, as a CustomResourceDefinition's `subresources.scale` declares them:
 * simple JSON paths such as `.spec.replicas`. One generic handler serves every type that declares
 * it (Deployments and ReplicaSets today; StatefulSets and custom resources by declaring it too).
 */
export interface ScaleDeclaration {
  /** Desired replicas (Scale spec.replicas), e.g. `.spec.replicas`; a scale write sets it. */
  specReplicasPath: string;
  /** Observed replicas (Scale status.replicas), e.g. `.status.replicas`; absent in the object: 0. */
  statusReplicasPath: string;
  /**
   * The pods' selector (Scale status.selector, a string in label-selector syntax): the value at the
   * path is either that string already (custom resources) or a metav1.LabelSelector, converted as
   * upstream's LabelSelectorAsSelector(...).String() (built-in workloads).
   */
  labelSelectorPath?: string;
}

/**
 * Everything the generic handlers need to serve one group/version/resource. Registered
 * explicitly in registry/builtin.ts; handlers never special-case a kind.
 */
export interface ResourceType {
  group: string; // '' for the core group
  version: string;
  resource: string; // plural, lower-case: used in URLs
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames?: readonly string[];
  categories?: readonly string[];
  /** The whole object's schema (apiVersion, kind, metadata, spec, status, ...). */
  schema: ObjectSchema;
  /** True when the type has a status sub-resource: the main resource ignores status, /status changes only status. */
  hasStatus: boolean;
  /**
   * How writes through sub-resources other than /status treat the object: 'status' (only status
   * changes, as /status) or 'whole' (spec and status both change). /status is always 'status';
   * sub-resources not listed here write like the main resource (status ignored).
   */
  subresourceWrites?: Readonly<Record<string, 'status' | 'whole'>>;
  /** On create, whether the client's status is kept (nodes register with their status, as upstream) or reset before defaults. Default reset. */
  keepStatusOnCreate?: boolean;
  /** Top-level fields that belong to the spec for generation purposes (a change bumps metadata.generation). Absent: every field except metadata and status. */
  specFields?: readonly string[];
  /** Field selector fields beyond metadata.name and metadata.namespace, each with how to read it as a string. */
  fieldSelectors?: Readonly<Record<string, (obj: KObject) => string | undefined>>;
  /** Table columns after Name (which is always first); absent: Created At only. */
  tableColumns?: readonly TableColumn[];
  /** The Name cell of a Table row when it is more than metadata.name (upstream's StorageClass printer appends " (default)"). */
  tableName?(obj: KObject): string;
  /**
   * Whether an update bumps metadata.generation besides a change of specFields (Deployments: an
   * annotation change does, as upstream's strategy, since annotations are copied to ReplicaSets).
   * subresource names the write path ('' for the main resource).
   */
  bumpsGeneration?(obj: KObject, old: KObject, subresource: string): boolean;
  /** The scale sub-resource; absent: {resource}/scale is 404. */
  scale?: ScaleDeclaration;
  /** This version is deprecated (spec 6.2, 9.2; a built-in's, or a CRD version's): requests get a Warning, an audit annotation and apiserver_requested_deprecated_apis. */
  deprecation?: Deprecation;
  /** Fills defaults in place (create, update and dry-run alike). Must be idempotent. */
  defaults?(obj: KObject): void;
  /** Kind-specific validation; old is set on update. Object metadata is validated generically before. */
  validate?(obj: KObject, old?: KObject, subresource?: string): Cause[];
  /**
   * Fields (list indices and map keys written [*], e.g. `spec.ports[*].protocol`) whose schema rule
   * (required, enum, unique keys) `validate` also checks, marking its causes coveredByDeclarative:
   * DeclarativeValidation compares the two there (store/declarative-validation.ts). Absent: only
   * the fields of marked causes are compared.
   */
  declarativeCoverage?: readonly string[];
  /** Fields copied from the old object on update because they are immutable or system-owned; returns causes for forbidden changes. subresource names the write path ('' for the main resource). */
  validateUpdate?(obj: KObject, old: KObject, subresource?: string): Cause[];
  /**
   * Fills, in place, what every read from storage adds (a custom resource's schema defaults: upstream
   * defaults objects read from etcd too, so a default added to a CRD shows on objects stored before).
   * Must be idempotent; readers hand it a copy of a shared stored object.
   */
  readDefaults?(obj: KObject): void;
  /** Fields the schema does not declare are dropped from objects read from storage (custom resources). */
  pruneOnRead?: boolean;
  /** Objects kept in another resource's storage and converted (absent: stored under its own group and resource). */
  storedAs?: StorageView;
  /**
   * Converts stored objects to this version, and written ones to the storage version, outside the
   * process (a CustomResourceDefinition's conversion webhook): the store awaits it on every read
   * and write of objects at another version. Absent: no conversion beyond `storedAs`.
   */
  converter?: ObjectConverter;
  /**
   * 'qualified': finalizers need only be qualified names (upstream's generic ValidateObjectMeta,
   * used for CRDs and custom resources); absent: also a domain or a standard name (core's rule).
   */
  finalizerNames?: 'qualified';
  /**
   * The OpenAPI v3 schema published for the kind instead of one generated from `schema` (a custom
   * resource publishes its CRD's openAPIV3Schema, with every constraint; apiVersion, kind and
   * metadata are filled in by the OpenAPI builder).
   */
  openApi?: Readonly<Record<string, unknown>>;
  /** Served from a CustomResourceDefinition: no strategic merge patch (415, as upstream). */
  customResource?: boolean;
  /** Deletion beyond finalizers and an explicit grace period; absent: the generic behaviour of DeletionStrategy's doc. */
  deletion?: DeletionStrategy;
  /**
   * The verbs a type that is not stored serves through its own handler (the resource metrics API:
   * get and list), as discovery lists them; absent: the stored verbs (or create for review types).
   */
  servedVerbs?: readonly string[];
}

export function apiVersionOf(t: Pick<ResourceType, 'group' | 'version'>): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

/** When a version was deprecated, when upstream stops serving it, and what replaces it (upstream's prerelease lifecycle), or the warning's own text (a CRD version's). */
export interface Deprecation {
  /** "1.28": the release that deprecated it; absent for custom resources. */
  deprecatedIn?: string;
  /** "1.31": the release that no longer serves it upstream (svc keeps serving it); absent when not planned. */
  removedIn?: string;
  /** The version and kind to use instead, e.g. { version: 'v1', kind: 'SelfSubjectReview' } in the same group. */
  replacement?: { group?: string; version: string; kind: string };
  /** The warning as given (a CRD version's deprecationWarning or upstream's default for it); absent: built from the fields above. */
  warning?: string;
}

/** Upstream's warning text: "<group/version> <Kind> is deprecated in v1.X+, unavailable in v1.Y+; use <group/version> <Kind>". */
export function deprecationWarning(t: ResourceType, servedGroup: string): string {
  const d = t.deprecation!;
  if (d.warning !== undefined) return d.warning;
  const gv = (group: string, version: string) => (group ? `${group}/${version}` : version);
  let text = `${gv(servedGroup, t.version)} ${t.kind} is deprecated${d.deprecatedIn ? ` in v${d.deprecatedIn}+` : ''}`;
  if (d.removedIn) text += `, unavailable in v${d.removedIn}+`;
  if (d.replacement) text += `; use ${gv(d.replacement.group ?? servedGroup, d.replacement.version)} ${d.replacement.kind}`;
  return text;
}
