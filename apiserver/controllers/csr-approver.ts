import type { Logger } from 'pino';
import { isNotFound } from '../api/errors';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import { BOOTSTRAPPERS_GROUP } from '../authn/bootstrap-token';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { canonicalKey } from '../api/group-names';
import { SIGNERS } from '../registry/types/certificatesigningrequests';
import { followEach, StoreInformers } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import { rfc3339 } from '../api/time';
import type { WatchCache } from '../store/watch-cache';
import { csrCertificate, csrSpec, hasTrueCondition, type CsrCondition } from '../registry/types/csr-fields';
import { kubeletClientProblem, parseRequest, type ParsedRequest } from './csr-signer';
import { controllerContext } from '../store/system-context';

// Approval is written through the approval sub-resource, as upstream's approver calls UpdateApproval.
const ctx = { ...controllerContext('csrapproving'), subresource: 'approval' };

export interface CsrApproverOptions {
  now: () => Date;
  log: Logger;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
}

/**
 * Auto-approval of node client certificates (upstream kube-controller-manager's csrapproving
 * controller, whose SubjectAccessReview checks for nodeclient / selfnodeclient are replaced by the
 * two fixed rules the default RBAC bindings give): a CSR for signer
 * svc.io/kube-apiserver-client-kubelet whose request is a node client request (subject
 * O=system:nodes, CN=system:node:<name>, no SANs, usages digital signature + client auth, key
 * encipherment allowed) is approved when its requester (spec.username / spec.groups, which the
 * create path sets from the authenticated user) is
 * - in group system:bootstrappers: a new node joining with a bootstrap token, or
 * - the very identity requested, system:node:<name>: a node renewing its own certificate.
 * Anything else is left for a human or another approver. Decided CSRs are never touched.
 */
export class CsrApprover {
  private readonly informers: StoreInformers;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly types: ResourceRegistry,
    private readonly opts: CsrApproverOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
  }

  /** Approves until the signal aborts: every CSR added or changed is looked at, as the informer has it. */
  async run(signal: AbortSignal): Promise<void> {
    await followEach(this.informers, this.csrType(), signal, (csr) => this.handle(csr), (name, err) => this.opts.log.warn({ err, csr: name }, 'approval failed; retrying'));
  }

  /** Handles one CSR by name, as the store has it now: approves it when a rule matches, else leaves it alone. */
  async sync(name: string): Promise<void> {
    let csr: KObject;
    try {
      csr = await this.store.get(this.csrType(), '', name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    await this.handle(csr);
  }

  private async handle(csr: KObject): Promise<void> {
    const t = this.csrType();
    const name = csr.metadata.name!;
    if (!undecided(csr)) return;
    const spec = csrSpec(csr);
    // Upstream's spelling (kubernetes.io/kube-apiserver-client-kubelet) names the same signer (issue 17).
    if (canonicalKey(spec.signerName ?? '') !== SIGNERS.apiserverClientKubelet) return;
    let parsed: ParsedRequest;
    try {
      parsed = parseRequest(spec.request);
    } catch {
      return; // not recognizable; the signer fails it if someone approves it anyway
    }
    if (kubeletClientProblem(parsed, spec.usages)) return;
    const message = approvalMessage(parsed.commonName, spec.username, spec.groups);
    if (!message) return;
    const { object } = await this.store.update(
      t,
      '',
      name,
      (current) => {
        if (!current || current.metadata.uid !== csr.metadata.uid || !undecided(current)) return current ?? csr;
        const status = (isObject(current.status) ? current.status : (current.status = {})) as { conditions?: CsrCondition[] };
        const now = rfc3339(this.opts.now());
        status.conditions = [
          ...(Array.isArray(status.conditions) ? status.conditions : []),
          { type: 'Approved', status: 'True', reason: 'AutoApproved', message, lastUpdateTime: now, lastTransitionTime: now },
        ];
        return current;
      },
      ctx,
    );
    if (hasTrueCondition(object, 'Approved')) this.opts.log.info({ csr: name, subject: parsed.commonName, requester: spec.username }, 'certificate request approved');
  }

  private csrType(): ResourceType {
    const t = this.types.lookup('certificates.svc.io', 'v1', 'certificatesigningrequests');
    if (!t) throw new Error('certificatesigningrequests type not registered');
    return t;
  }
}

/** Why the requester may have this node client certificate, or undefined when it may not. */
export function approvalMessage(commonName: string, username: string | undefined, groups: readonly string[] | undefined): string | undefined {
  if (username !== undefined && username === commonName) return 'Auto approving self svc-node client certificate renewal.';
  if ((groups ?? []).includes(BOOTSTRAPPERS_GROUP)) return 'Auto approving svc-node client certificate for a bootstrapping node.';
  return undefined;
}

function undecided(csr: KObject): boolean {
  return !hasTrueCondition(csr, 'Approved') && !hasTrueCondition(csr, 'Denied') && !hasTrueCondition(csr, 'Failed') && csrCertificate(csr) === undefined;
}
