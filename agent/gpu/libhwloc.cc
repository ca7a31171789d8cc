#include "agent/gpu/libhwloc.h"

#include <dlfcn.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "common/io/shared_library/shared_library.h"

namespace gpusched::agent {
namespace {

constexpr char kLibrary[] = "libhwloc.so.15";

absl::StatusOr<Libhwloc> Open() {
  auto handle = io::OpenSharedLibrary(kLibrary, "reading the host's topology", "libhwloc15");
  if (!handle.ok()) return handle.status();
  Libhwloc hw{};
  std::string missing;
#define GPUSCHED_RESOLVE(name) io::ResolveFunction(*handle, #name, &hw.name, &missing)
  GPUSCHED_RESOLVE(hwloc_get_api_version);
  GPUSCHED_RESOLVE(hwloc_topology_init);
  GPUSCHED_RESOLVE(hwloc_topology_destroy);
  GPUSCHED_RESOLVE(hwloc_topology_set_io_types_filter);
  GPUSCHED_RESOLVE(hwloc_topology_set_xml);
  GPUSCHED_RESOLVE(hwloc_topology_set_synthetic);
  GPUSCHED_RESOLVE(hwloc_topology_load);
  GPUSCHED_RESOLVE(hwloc_get_type_depth);
  GPUSCHED_RESOLVE(hwloc_get_obj_by_depth);
  GPUSCHED_RESOLVE(hwloc_bitmap_first);
  GPUSCHED_RESOLVE(hwloc_bitmap_next);
  GPUSCHED_RESOLVE(hwloc_bitmap_weight);
#undef GPUSCHED_RESOLVE
  if (!missing.empty()) {
    dlclose(*handle);
    return absl::FailedPreconditionError(
        absl::StrCat(kLibrary, " has no ", missing, ", which reading the host's topology needs"));
  }
  // hwloc's advice: the major version of the API (its structures' layout)
  // must be the one the program was compiled with.
  const unsigned version = hw.hwloc_get_api_version();
  if ((version >> 16) != (HWLOC_API_VERSION >> 16)) {
    dlclose(*handle);
    return absl::FailedPreconditionError(absl::StrCat(kLibrary, " has hwloc API 0x", absl::Hex(version), ", not the 0x",
                                                      absl::Hex(HWLOC_API_VERSION), " gpusched-agent was built with"));
  }
  return hw;  // the handle stays open for the life of the process
}

}  // namespace

absl::StatusOr<const Libhwloc*> LoadLibhwloc() {
  static const absl::StatusOr<Libhwloc>* const loaded = new absl::StatusOr<Libhwloc>(Open());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

}  // namespace gpusched::agent
