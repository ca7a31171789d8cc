#pragma once

#include <string>

namespace gpusched::agent {

// A NIC's link speed in Gb/s as Linux reports it under `sysfs_root` (normally
// "/sys"), or 0 when unknown: hwloc does not know link speeds.
//
// RDMA devices: the fastest port's /class/infiniband/<device>/ports/*/rate,
// e.g. "400 Gb/sec (4X NDR)". Network interfaces: /class/net/<ifname>/speed
// in Mb/s, which is -1 or unreadable while the link is down or for virtual
// NICs.
int RdmaLinkSpeedGbps(const std::string& sysfs_root, const std::string& device);
int NetLinkSpeedGbps(const std::string& sysfs_root, const std::string& ifname);

}  // namespace gpusched::agent
