import type { Logger } from 'pino';
import { ApiError } from '../api/errors';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import { BOOTSTRAPPERS_GROUP } from '../authn/bootstrap-token';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { SIGNERS } from '../registry/types/certificatesigningrequests';
import type { ObjectStore } from '../store/object-store';
import { rfc3339 } from '../api/time';
import type { WatchCache } from '../store/watch-cache';
import { csrCertificate, csrSpec, hasTrueCondition, type CsrCondition } from '../registry/types/csr-fields';
import { feedQueue, kubeletClientProblem, parseRequest, type ParsedRequest } from './csr-signer';
import { controllerContext } from '../store/system-context';
import { WorkQueue } from './work-queue';

// Approval is written through the approval sub-resource, as upstream's approver calls UpdateApproval.
const ctx = { ...controllerContext('csrapproving'), subresource: 'approval' };

export interface CsrApproverOptions {
  now: () => Date;
  log: Logger;
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
  private readonly queue = new WorkQueue();

  constructor(
    private readonly store: ObjectStore,
    private readonly cache: WatchCache,
    private readonly types: ResourceRegistry,
    private readonly opts: CsrApproverOptions,
  ) {}

  /** Approves until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const feed = feedQueue(this.store, this.cache, this.csrType(), '', this.queue, signal, this.opts.log);
    await this.queue.run(signal, (name) => this.sync(name), (name, err) => this.opts.log.warn({ err, csr: name }, 'approval failed; retrying'));
    await feed;
  }

  /** Handles one CSR by name: approves it when a rule matches, else leaves it alone. */
  async sync(name: string): Promise<void> {
    const t = this.csrType();
    let csr: KObject;
    try {
      csr = await this.store.get(t, '', name);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return;
      throw err;
    }
    if (!undecided(csr)) return;
    const spec = csrSpec(csr);
    if (spec.signerName !== SIGNERS.apiserverClientKubelet) return;
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
