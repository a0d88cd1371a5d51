/**
 * Which seccomp profile a container runs with (spec Appendix D), as upstream's kubelet decides
 * it (kuberuntime getSeccompProfile): privileged containers are always Unconfined; otherwise the
 * container's own securityContext.seccompProfile, else the pod's, else RuntimeDefault when the
 * agent's seccompDefault is on and Unconfined when it is off. The same rule applies to regular,
 * init and ephemeral containers.
 *
 * Localhost profiles are relative to <root-dir>/seccomp. Unlike upstream, which leaves the file to
 * the runtime, the agent reads and validates it first, so a missing or malformed profile fails
 * container creation (CreateContainerError) with a message naming the file on every runtime.
 */
import { readFile as fsReadFile } from 'node:fs/promises';
import path from 'node:path';
import type { SecurityProfile } from '../cri';
import { parseSeccompProfile } from './profile-validation';
import { InvalidArgumentError } from '../errors';

export interface SeccompProfileRef {
  type: string;
  localhostProfile?: string;
}

export type ContainerKind = 'container' | 'init' | 'ephemeral';

/** A Localhost profile that cannot be used; the message names the file. Pod status shows it as CreateContainerError. */
export class SeccompProfileError extends InvalidArgumentError {
  override readonly name = 'SeccompProfileError';
  override readonly code = 'SVC_NODE_ERR_SECCOMP_PROFILE';
  constructor(
    message: string,
    /** Absolute path of the profile, '' when the reference itself is bad. */
    readonly file: string,
  ) {
    super(message);
  }
}

/** The profile reference that applies, before any file is read: container, then pod, then the node default. */
export function effectiveProfile(
  podProfile: SeccompProfileRef | undefined,
  containerProfile: SeccompProfileRef | undefined,
  privileged: boolean,
  seccompDefault: boolean,
): SeccompProfileRef {
  if (privileged) return { type: 'Unconfined' };
  const chosen = containerProfile ?? podProfile;
  if (chosen?.type) return chosen;
  return { type: seccompDefault ? 'RuntimeDefault' : 'Unconfined' };
}

export interface SeccompResolverOptions {
  /** <root-dir>/seccomp: where localhostProfile paths start. */
  profileRoot: string;
  /** The agent's seccompDefault setting. */
  seccompDefault: boolean;
  /** Reads a profile file (fs by default); rejects with a Node fs error. */
  readFile?: (file: string) => Promise<string>;
}

export interface ResolveInput {
  podProfile?: SeccompProfileRef;
  containerProfile?: SeccompProfileRef;
  privileged?: boolean;
  kind?: ContainerKind;
}

export class SeccompResolver {
  private readonly readFile: (file: string) => Promise<string>;

  constructor(private readonly opts: SeccompResolverOptions) {
    this.readFile = opts.readFile ?? ((f) => fsReadFile(f, 'utf8'));
  }

  /** The absolute path of a Localhost profile; throws SeccompProfileError when it is absolute or leaves the seccomp directory. */
  localhostPath(localhostProfile: string | undefined): string {
    const rel = localhostProfile ?? '';
    if (rel === '') throw new SeccompProfileError('seccomp profile type Localhost needs localhostProfile, a path relative to the seccomp directory', '');
    if (path.isAbsolute(rel)) {
      throw new SeccompProfileError(`localhostProfile ${JSON.stringify(rel)} must be relative to the seccomp directory ${this.opts.profileRoot}`, '');
    }
    const abs = path.resolve(this.opts.profileRoot, rel);
    if (abs !== this.opts.profileRoot && !abs.startsWith(this.opts.profileRoot + path.sep)) {
      throw new SeccompProfileError(`localhostProfile ${JSON.stringify(rel)} leaves the seccomp directory ${this.opts.profileRoot}`, '');
    }
    return abs;
  }

  /**
   * The CRI profile for a container. Rejects SeccompProfileError when a Localhost profile is
   * missing, unreadable or invalid; unknown profile types are errors too.
   */
  async resolve(input: ResolveInput): Promise<SecurityProfile> {
    const ref = effectiveProfile(input.podProfile, input.containerProfile, input.privileged === true, this.opts.seccompDefault);
    switch (ref.type) {
      case 'Unconfined':
        return { profileType: 'Unconfined' };
      case 'RuntimeDefault':
        return { profileType: 'RuntimeDefault' };
      case 'Localhost': {
        const file = this.localhostPath(ref.localhostProfile);
        await this.load(file);
        return { profileType: 'Localhost', localhostRef: file };
      }
      default:
        throw new SeccompProfileError(`unsupported seccomp profile type ${JSON.stringify(ref.type)}: must be Unconfined, RuntimeDefault or Localhost`, '');
    }
  }

  /**
   * The sandbox's profile: the pod-level one. A pod-level Localhost profile that cannot be used
   * gives the sandbox RuntimeDefault, so the failure surfaces on each container as
   * CreateContainerError (spec 7) instead of as a sandbox that never starts.
   */
  async resolveSandbox(podProfile: SeccompProfileRef | undefined): Promise<SecurityProfile> {
    try {
      return await this.resolve({ podProfile, kind: 'container' });
    } catch (e) {
      if (e instanceof SeccompProfileError) return { profileType: 'RuntimeDefault' };
      throw e;
    }
  }

  private async load(file: string): Promise<void> {
    let text: string;
    try {
      text = await this.readFile(file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file or directory' : code === 'EISDIR' ? 'is a directory' : (e as Error).message;
      throw new SeccompProfileError(`cannot load seccomp profile "${file}": ${why}`, file);
    }
    const parsed = parseSeccompProfile(text);
    if ('problems' in parsed) throw new SeccompProfileError(`invalid seccomp profile "${file}": ${parsed.problems.join('; ')}`, file);
  }
}
