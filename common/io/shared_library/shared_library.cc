#include "common/io/shared_library/shared_library.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpusched::io {

absl::StatusOr<void*> OpenSharedLibrary(const char* soname, absl::string_view needed_for,
                                        absl::string_view debian_package) {
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(needed_for, " needs ", soname, " (Debian: ", debian_package,
                                                      "): ", why != nullptr ? why : "it could not be loaded"));
  }
  return handle;
}

}  // namespace gpusched::io
