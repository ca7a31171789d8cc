#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched {

// The registry an image reference pulls from, as Docker and Podman read it:
// the first path component when it looks like a host ("nvcr.io",
// "registry:5000", "localhost"), else Docker Hub ("docker.io").
std::string ImageRegistry(absl::string_view image);

// The container part of a job as it can be checked without a node: an image
// reference without spaces or control characters, absolute mount paths
// without "." or ".." components (they could climb out of an allowed
// directory) and without ',' or ':' (the runtime's mount syntax), an
// absolute workdir. InvalidArgument names the field (spec.container...).
absl::Status ValidateContainerSpec(const v1::ContainerSpec& container);

// Whether `support` (a node's agent settings) lets the job run: a runtime,
// the image's registry among the allowed ones (or any allowed), every mount
// source at or below an allowed path. FailedPrecondition says what `node`
// refuses and what it allows. Paths are compared as given: the agent
// resolves links before it checks again at launch.
absl::Status ContainerAllowed(const v1::ContainerSpec& container, const v1::ContainerSupport& support,
                              absl::string_view node);

// Whether `path` is `root` or lies below it, component-wise ("/data" holds
// "/data/x", not "/database").
bool PathWithin(absl::string_view path, absl::string_view root);

}  // namespace gpusched
