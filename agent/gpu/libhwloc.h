#pragma once

#include <hwloc.h>

#include "absl/status/statusor.h"

namespace gpusched::agent {

// hwloc as HwlocHost uses it, loaded (dlopen of libhwloc.so.15) the first
// time a host topology is read instead of linked: agents on fake GPUs, and
// gpuschedd (whose `dev` command runs agents in-process), then map none of
// hwloc and of the libudev it brings (about 190 KiB resident each). Each
// member is the hwloc function of the same name; hwloc.h's inline helpers
// call the linked ones, so HwlocHost walks the objects itself.
struct Libhwloc {
  decltype(&::hwloc_get_api_version) hwloc_get_api_version;
  decltype(&::hwloc_topology_init) hwloc_topology_init;
  decltype(&::hwloc_topology_destroy) hwloc_topology_destroy;
  decltype(&::hwloc_topology_set_io_types_filter) hwloc_topology_set_io_types_filter;
  decltype(&::hwloc_topology_set_xml) hwloc_topology_set_xml;
  decltype(&::hwloc_topology_set_synthetic) hwloc_topology_set_synthetic;
  decltype(&::hwloc_topology_load) hwloc_topology_load;
  decltype(&::hwloc_get_type_depth) hwloc_get_type_depth;
  decltype(&::hwloc_get_obj_by_depth) hwloc_get_obj_by_depth;
  decltype(&::hwloc_bitmap_first) hwloc_bitmap_first;
  decltype(&::hwloc_bitmap_next) hwloc_bitmap_next;
  decltype(&::hwloc_bitmap_weight) hwloc_bitmap_weight;
};

// The library, loaded once and kept; FailedPrecondition naming
// libhwloc.so.15, what the loader said and the package to install when it
// cannot be, or when its API is not the one built against (hwloc 2.x).
absl::StatusOr<const Libhwloc*> LoadLibhwloc();

}  // namespace gpusched::agent
