#include "common/container_policy.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpusched {
namespace {

constexpr size_t kMaxImageBytes = 1024;
constexpr size_t kMaxPathBytes = 4096;
constexpr int kMaxMounts = 64;

absl::Status Invalid(absl::string_view field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", message));
}

absl::Status CheckPath(absl::string_view field, absl::string_view path) {
  if (path.empty()) return Invalid(field, "is empty");
  if (path.size() > kMaxPathBytes)
    return Invalid(field, absl::StrCat("is ", path.size(), " bytes; at most ", kMaxPathBytes));
  if (path.front() != '/')
    return Invalid(field, absl::StrCat("\"", absl::CHexEscape(path), "\" is not an absolute path"));
  for (char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      return Invalid(field, absl::StrCat("\"", absl::CHexEscape(path), "\" holds a control character"));
    if (c == ',' || c == ':') {
      return Invalid(field, absl::StrCat("\"", path, "\" holds '", std::string(1, c),
                                         "', which the runtime's mount syntax cannot carry"));
    }
  }
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "." || part == "..") {
      return Invalid(field, absl::StrCat("\"", path, "\" has a \"", part, "\" component: give the path itself"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string ImageRegistry(absl::string_view image) {
  const size_t slash = image.find('/');
  if (slash == absl::string_view::npos) return "docker.io";
  const absl::string_view first = image.substr(0, slash);
  if (first == "localhost" || absl::StrContains(first, '.') || absl::StrContains(first, ':')) {
    return absl::AsciiStrToLower(first);
  }
  return "docker.io";
}

bool PathWithin(absl::string_view path, absl::string_view root) {
  while (root.size() > 1 && root.back() == '/') root.remove_suffix(1);
  if (root == "/") return absl::StartsWith(path, "/");
  if (!absl::StartsWith(path, root)) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

absl::Status ValidateContainerSpec(const v1::ContainerSpec& c) {
  const std::string& image = c.image();
  if (image.empty()) return Invalid("spec.container.image", "is empty: name the image to run the job in");
  if (image.size() > kMaxImageBytes) {
    return Invalid("spec.container.image", absl::StrCat("is ", image.size(), " bytes; at most ", kMaxImageBytes));
  }
  for (char ch : image) {
    const auto u = static_cast<unsigned char>(ch);
    if (u <= 0x20 || u >= 0x7f) {
      return Invalid("spec.container.image", absl::StrCat("\"", absl::CHexEscape(image),
                                                          "\" holds a space or a character an image name cannot"));
    }
  }
  if (image.front() == '-') return Invalid("spec.container.image", absl::StrCat("\"", image, "\" starts with '-'"));
  if (c.mounts_size() > kMaxMounts) {
    return Invalid("spec.container.mounts", absl::StrCat(c.mounts_size(), " mounts; at most ", kMaxMounts));
  }
  for (int i = 0; i < c.mounts_size(); ++i) {
    const v1::ContainerMount& m = c.mounts(i);
    if (absl::Status s = CheckPath(absl::StrCat("spec.container.mounts[", i, "].source"), m.source()); !s.ok())
      return s;
    if (absl::Status s = CheckPath(absl::StrCat("spec.container.mounts[", i, "].target"), m.target()); !s.ok())
      return s;
    if (m.target() == "/") return Invalid(absl::StrCat("spec.container.mounts[", i, "].target"), "cannot be /");
  }
  if (!c.workdir().empty()) {
    if (absl::Status s = CheckPath("spec.container.workdir", c.workdir()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ContainerAllowed(const v1::ContainerSpec& c, const v1::ContainerSupport& support, absl::string_view node) {
  if (support.runtime().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("node ", node, " runs no containers (its agent has no container runtime)"));
  }
  const std::string registry = ImageRegistry(c.image());
  if (!support.registries().empty()) {
    bool allowed = false;
    for (const std::string& r : support.registries()) allowed = allowed || absl::EqualsIgnoreCase(r, registry);
    if (!allowed) {
      return absl::FailedPreconditionError(
          absl::StrCat("image \"", c.image(), "\" is from registry ", registry, ", which node ", node,
                       " does not allow (it allows: ", absl::StrJoin(support.registries(), ", "), ")"));
    }
  }
  for (const v1::ContainerMount& m : c.mounts()) {
    bool allowed = false;
    for (const std::string& root : support.mount_sources()) allowed = allowed || PathWithin(m.source(), root);
    if (!allowed) {
      return absl::FailedPreconditionError(absl::StrCat(
          "mount source ", m.source(), " is outside what node ", node, " allows to mount (",
          support.mount_sources().empty() ? "no mounts at all" : absl::StrJoin(support.mount_sources(), ", "), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpusched
