#pragma once

#include <dlfcn.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::io {

// A library loaded at run time (dlopen) rather than linked, so that a
// program maps it only when a feature that needs it is used: libpq for the
// PostgreSQL store, hwloc for an agent reading a real host. Loaded with
// RTLD_NOW | RTLD_LOCAL: its symbols satisfy nothing else loaded later.
// FailedPrecondition, e.g. "the PostgreSQL store needs libpq.so.5 (Debian:
// libpq5): <what the loader said>", when it cannot be.
absl::StatusOr<void*> OpenSharedLibrary(const char* soname, absl::string_view needed_for,
                                        absl::string_view debian_package);

// Sets `out` to the library's function `name`; the first name it lacks
// goes to `missing`.
template <typename Function>
void ResolveFunction(void* handle, const char* name, Function* out, std::string* missing) {
  *out = reinterpret_cast<Function>(dlsym(handle, name));
  if (*out == nullptr && missing->empty()) *missing = name;
}

}  // namespace gpusched::io
