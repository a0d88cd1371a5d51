/** The build the server reports at /version. */
export interface ServerVersion {
  /** "v<semver>" of the svc release. */
  gitVersion: string;
  major: string;
  minor: string;
  /** Commit the build came from; empty when the build does not know it (as upstream builds without git). */
  gitCommit?: string;
  /** "clean", "dirty" or empty when unknown. */
  gitTreeState?: string;
  /** RFC 3339; upstream's default for builds that set none is the Unix epoch. */
  buildDate?: string;
}

/**
 * GET /version: every field of upstream's version.Info, so clients that require them all (the
 * Python client's VersionApi refuses an answer without buildDate, gitCommit...) can read it.
 * goVersion and compiler name what runs the server (node, tsc), as upstream names its Go.
 * emulationMajor/Minor and minCompatibilityMajor/Minor (Kubernetes 1.33, compatibility versions)
 * are the release itself: this server emulates no older version.
 */
export function versionDocument(v: ServerVersion): Record<string, string> {
  return {
    major: v.major,
    minor: v.minor,
    emulationMajor: v.major,
    emulationMinor: v.minor,
    minCompatibilityMajor: v.major,
    minCompatibilityMinor: v.minor,
    gitVersion: v.gitVersion,
    gitCommit: v.gitCommit ?? '',
    gitTreeState: v.gitTreeState ?? '',
    buildDate: v.buildDate ?? '1970-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}
