/** The pod network of svc-node (issue 24 item 5): what the wiring uses. */
export { CNI_BRIDGE, CNI_CONFIG_FILE, CNI_NETWORK_NAME, podNetworkConflist } from './cni-config';
export { CniConfigWriter } from './cni-config-writer';
export { PodNetwork } from './pod-network';
export { execIp, ROUTE_PROTO, RouteTable, type IpRunner } from './route-table';
export { BRIDGE_NF_SYSCTLS, ensureBridgeNetfilter, realBridgeNetfilterHost, type BridgeNetfilterHost } from './bridge-netfilter';
