/**
 * Wire shapes of the runtime.v1 messages svc-node converts, as @grpc/proto-loader produces and
 * accepts them with our loader options (./cri-proto): proto field names (keepCase), int64/uint64 as
 * decimal strings when decoded (numbers accepted when encoding), enums as their names, bytes as
 * Buffer, absent sub-messages as null. Only agent/cri sees these.
 */

/** int64/uint64: decoded as a decimal string; encoded from a number or string. */
export type WLong = string | number;
/** A decoded sub-message may be null (absent). */
export type Opt<T> = T | null | undefined;
export type WMap = Record<string, string>;

export interface WVersionResponse {
  version?: string;
  runtime_name?: string;
  runtime_version?: string;
  runtime_api_version?: string;
}

export interface WRuntimeCondition {
  type?: string;
  status?: boolean;
  reason?: string;
  message?: string;
}

export interface WStatusResponse {
  status?: Opt<{ conditions?: WRuntimeCondition[] }>;
  info?: WMap;
  runtime_handlers?: { name?: string; features?: Opt<{ recursive_read_only_mounts?: boolean; user_namespaces?: boolean }> }[];
  features?: Opt<{ supplemental_groups_policy?: boolean; user_namespaces_host_network?: boolean; mount_options?: boolean }>;
}

export interface WIdMapping {
  host_id?: number;
  container_id?: number;
  length?: number;
}

export interface WSELinuxOption {
  user?: string;
  role?: string;
  type?: string;
  level?: string;
}

export interface WSecurityProfile {
  profile_type?: string;
  localhost_ref?: string;
}

export interface WInt64Value {
  value?: WLong;
}

export interface WUInt64Value {
  value?: WLong;
}

export interface WImageSpec {
  image?: string;
  annotations?: WMap;
  user_specified_image?: string;
  runtime_handler?: string;
  image_ref?: string;
}

export interface WMount {
  container_path?: string;
  host_path?: string;
  readonly?: boolean;
  selinux_relabel?: boolean;
  propagation?: string;
  uidMappings?: WIdMapping[];
  gidMappings?: WIdMapping[];
  recursive_read_only?: boolean;
  image?: Opt<WImageSpec>;
  image_sub_path?: string;
  mount_options?: string[];
}

export interface WNamespaceOption {
  network?: string;
  pid?: string;
  ipc?: string;
  target_id?: string;
  userns_options?: Opt<{ mode?: string; uids?: WIdMapping[]; gids?: WIdMapping[] }>;
}

export interface WLinuxContainerResources {
  cpu_period?: WLong;
  cpu_quota?: WLong;
  cpu_shares?: WLong;
  memory_limit_in_bytes?: WLong;
  oom_score_adj?: WLong;
  cpuset_cpus?: string;
  cpuset_mems?: string;
  hugepage_limits?: { page_size?: string; limit?: WLong }[];
  unified?: WMap;
  memory_swap_limit_in_bytes?: WLong;
}

export interface WPodSandboxMetadata {
  name?: string;
  uid?: string;
  namespace?: string;
  attempt?: number;
}

export interface WLinuxSandboxSecurityContext {
  namespace_options?: Opt<WNamespaceOption>;
  selinux_options?: Opt<WSELinuxOption>;
  run_as_user?: Opt<WInt64Value>;
  run_as_group?: Opt<WInt64Value>;
  readonly_rootfs?: boolean;
  supplemental_groups?: WLong[];
  supplemental_groups_policy?: string;
  privileged?: boolean;
  seccomp?: Opt<WSecurityProfile>;
  apparmor?: Opt<WSecurityProfile>;
}

export interface WPodSandboxConfig {
  metadata?: Opt<WPodSandboxMetadata>;
  hostname?: string;
  log_directory?: string;
  dns_config?: Opt<{ servers?: string[]; searches?: string[]; options?: string[] }>;
  port_mappings?: { protocol?: string; container_port?: number; host_port?: number; host_ip?: string }[];
  labels?: WMap;
  annotations?: WMap;
  linux?: Opt<{
    cgroup_parent?: string;
    security_context?: Opt<WLinuxSandboxSecurityContext>;
    sysctls?: WMap;
    overhead?: Opt<WLinuxContainerResources>;
    resources?: Opt<WLinuxContainerResources>;
  }>;
}

export interface WPodSandbox {
  id?: string;
  metadata?: Opt<WPodSandboxMetadata>;
  state?: string;
  created_at?: WLong;
  labels?: WMap;
  annotations?: WMap;
  runtime_handler?: string;
}

export interface WPodSandboxStatus extends WPodSandbox {
  network?: Opt<{ ip?: string; additional_ips?: { ip?: string }[] }>;
  linux?: Opt<{ namespaces?: Opt<{ options?: Opt<WNamespaceOption> }> }>;
}

export interface WPodSandboxStatusResponse {
  status?: Opt<WPodSandboxStatus>;
  info?: WMap;
  containers_statuses?: WContainerStatus[];
  timestamp?: WLong;
}

export interface WPodSandboxFilter {
  id?: string;
  state?: Opt<{ state?: string }>;
  label_selector?: WMap;
}

export interface WContainerMetadata {
  name?: string;
  attempt?: number;
}

export interface WLinuxContainerSecurityContext {
  capabilities?: Opt<{ add_capabilities?: string[]; drop_capabilities?: string[]; add_ambient_capabilities?: string[] }>;
  privileged?: boolean;
  namespace_options?: Opt<WNamespaceOption>;
  selinux_options?: Opt<WSELinuxOption>;
  run_as_user?: Opt<WInt64Value>;
  run_as_group?: Opt<WInt64Value>;
  run_as_username?: string;
  readonly_rootfs?: boolean;
  supplemental_groups?: WLong[];
  supplemental_groups_policy?: string;
  no_new_privs?: boolean;
  masked_paths?: string[];
  readonly_paths?: string[];
  seccomp?: Opt<WSecurityProfile>;
  apparmor?: Opt<WSecurityProfile>;
}

export interface WContainerConfig {
  metadata?: Opt<WContainerMetadata>;
  image?: Opt<WImageSpec>;
  command?: string[];
  args?: string[];
  working_dir?: string;
  envs?: { key?: string; value?: Buffer | string }[];
  mounts?: WMount[];
  devices?: { container_path?: string; host_path?: string; permissions?: string }[];
  labels?: WMap;
  annotations?: WMap;
  log_path?: string;
  stdin?: boolean;
  stdin_once?: boolean;
  tty?: boolean;
  linux?: Opt<{ resources?: Opt<WLinuxContainerResources>; security_context?: Opt<WLinuxContainerSecurityContext> }>;
  CDI_devices?: { name?: string }[];
  stop_signal?: string;
}

export interface WContainer {
  id?: string;
  pod_sandbox_id?: string;
  metadata?: Opt<WContainerMetadata>;
  image?: Opt<WImageSpec>;
  image_ref?: string;
  state?: string;
  created_at?: WLong;
  labels?: WMap;
  annotations?: WMap;
  image_id?: string;
}

export interface WContainerFilter {
  id?: string;
  state?: Opt<{ state?: string }>;
  pod_sandbox_id?: string;
  label_selector?: WMap;
}

export interface WContainerStatus {
  id?: string;
  metadata?: Opt<WContainerMetadata>;
  state?: string;
  created_at?: WLong;
  started_at?: WLong;
  finished_at?: WLong;
  exit_code?: number;
  image?: Opt<WImageSpec>;
  image_ref?: string;
  reason?: string;
  message?: string;
  labels?: WMap;
  annotations?: WMap;
  mounts?: WMount[];
  log_path?: string;
  resources?: Opt<{ linux?: Opt<WLinuxContainerResources> }>;
  image_id?: string;
  user?: Opt<{ linux?: Opt<{ uid?: WLong; gid?: WLong; supplemental_groups?: WLong[] }> }>;
  stop_signal?: string;
}

export interface WContainerStatusResponse {
  status?: Opt<WContainerStatus>;
  info?: WMap;
}

export interface WExecSyncResponse {
  stdout?: Buffer;
  stderr?: Buffer;
  exit_code?: number;
}

export interface WFilesystemUsage {
  timestamp?: WLong;
  fs_id?: Opt<{ mountpoint?: string }>;
  used_bytes?: Opt<WUInt64Value>;
  inodes_used?: Opt<WUInt64Value>;
}

export interface WContainerStats {
  attributes?: Opt<{ id?: string; metadata?: Opt<WContainerMetadata>; labels?: WMap; annotations?: WMap }>;
  cpu?: Opt<{ timestamp?: WLong; usage_core_nano_seconds?: Opt<WUInt64Value>; usage_nano_cores?: Opt<WUInt64Value> }>;
  memory?: Opt<{
    timestamp?: WLong;
    working_set_bytes?: Opt<WUInt64Value>;
    available_bytes?: Opt<WUInt64Value>;
    usage_bytes?: Opt<WUInt64Value>;
    rss_bytes?: Opt<WUInt64Value>;
    page_faults?: Opt<WUInt64Value>;
    major_page_faults?: Opt<WUInt64Value>;
  }>;
  writable_layer?: Opt<WFilesystemUsage>;
  swap?: Opt<{ timestamp?: WLong; swap_available_bytes?: Opt<WUInt64Value>; swap_usage_bytes?: Opt<WUInt64Value> }>;
}

export interface WContainerStatsFilter {
  id?: string;
  pod_sandbox_id?: string;
  label_selector?: WMap;
}

export interface WImage {
  id?: string;
  repo_tags?: string[];
  repo_digests?: string[];
  size?: WLong;
  uid?: Opt<WInt64Value>;
  username?: string;
  spec?: Opt<WImageSpec>;
  pinned?: boolean;
}

export interface WAuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  server_address?: string;
  identity_token?: string;
  registry_token?: string;
}

export interface WImageFsInfoResponse {
  image_filesystems?: WFilesystemUsage[];
  container_filesystems?: WFilesystemUsage[];
}

export interface WContainerEventResponse {
  container_id?: string;
  container_event_type?: string;
  created_at?: WLong;
  pod_sandbox_status?: Opt<WPodSandboxStatus>;
  containers_statuses?: WContainerStatus[];
}

export interface WInterfaceUsage {
  name?: string;
  rx_bytes?: Opt<WUInt64Value>;
  rx_errors?: Opt<WUInt64Value>;
  tx_bytes?: Opt<WUInt64Value>;
  tx_errors?: Opt<WUInt64Value>;
}

export interface WPodSandboxStats {
  attributes?: Opt<{ id?: string; metadata?: Opt<WPodSandboxMetadata>; labels?: WMap; annotations?: WMap }>;
  linux?: Opt<{
    cpu?: WContainerStats['cpu'];
    memory?: WContainerStats['memory'];
    network?: Opt<{ timestamp?: WLong; default_interface?: Opt<WInterfaceUsage>; interfaces?: WInterfaceUsage[] }>;
    process?: Opt<{ timestamp?: WLong; process_count?: Opt<WUInt64Value> }>;
    containers?: WContainerStats[];
  }>;
}

export interface WPodSandboxStatsFilter {
  id?: string;
  label_selector?: WMap;
}
