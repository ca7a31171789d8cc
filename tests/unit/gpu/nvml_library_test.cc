#include "agent/gpu/nvml_library.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "tests/unit/gpu/scoped_env.h"

using gpusched::agent::NvmlLibrary;
using gpusched::testing::ScopedEnv;
namespace nvml = gpusched::nvml;

TEST_CASE("a missing library is Unavailable and says which and why") {
  auto lib = NvmlLibrary::Open("/nonexistent/libnvidia-ml.so.1");
  REQUIRE_FALSE(lib.ok());
  CHECK(lib.status().code() == absl::StatusCode::kUnavailable);
  INFO(lib.status().message());
  CHECK(absl::StartsWith(lib.status().message(), "NVML not available: /nonexistent/libnvidia-ml.so.1"));
  CHECK(absl::StrContains(lib.status().message(), "No such file"));
}

TEST_CASE("a library without NVML's functions is Unavailable, naming the first missing one") {
  auto lib = NvmlLibrary::Open("libc.so.6");
  REQUIRE_FALSE(lib.ok());
  CHECK(lib.status().code() == absl::StatusCode::kUnavailable);
  INFO(lib.status().message());
  CHECK(absl::StrContains(lib.status().message(), "libc.so.6 has no nvmlInit_v2"));
}

TEST_CASE("a failing nvmlInit_v2 is Unavailable with NVML's reason") {
  ScopedEnv fail("GPUSCHED_FAKE_NVML_FAIL", "nvmlInit_v2");
  auto lib = NvmlLibrary::Open(GPUSCHED_FAKE_NVML);
  REQUIRE_FALSE(lib.ok());
  CHECK(lib.status().code() == absl::StatusCode::kUnavailable);
  INFO(lib.status().message());
  CHECK(absl::StrContains(lib.status().message(), "nvmlInit_v2: Driver Not Loaded (NVML error 9)"));
}

TEST_CASE("the fake loads through the real path; optional functions it lacks are null") {
  auto fresh = NvmlLibrary::Open(GPUSCHED_FAKE_NVML);
  REQUIRE(fresh.ok());
  CHECK((*fresh)->api().nvlink_remote_type != nullptr);
  CHECK((*fresh)->api().fabric_info != nullptr);
  fresh->reset();

  auto old = NvmlLibrary::Open(GPUSCHED_FAKE_NVML_OLD);
  REQUIRE(old.ok());
  const auto& api = (*old)->api();
  CHECK(api.init != nullptr);
  CHECK(api.nvlink_state != nullptr);
  CHECK(api.nvlink_remote_type == nullptr);
  CHECK(api.fabric_info == nullptr);
  CHECK(api.compute_capability == nullptr);
  CHECK(api.mig_mode == nullptr);
}

TEST_CASE("Check maps NVML errors to status codes and keeps NVML's words") {
  auto lib = NvmlLibrary::Open(GPUSCHED_FAKE_NVML);
  REQUIRE(lib.ok());
  const NvmlLibrary& nvml = **lib;
  CHECK(nvml.Check(nvml::NVML_SUCCESS, "x").ok());
  absl::Status lost = nvml.Check(nvml::NVML_ERROR_GPU_IS_LOST, "nvmlDeviceGetName (GPU 2)");
  CHECK(lost.code() == absl::StatusCode::kInternal);
  CHECK(lost.message() == "nvmlDeviceGetName (GPU 2): GPU is lost (NVML error 15)");
  CHECK(nvml.Check(nvml::NVML_ERROR_NOT_SUPPORTED, "x").code() == absl::StatusCode::kUnimplemented);
  CHECK(nvml.Check(nvml::NVML_ERROR_NO_PERMISSION, "x").code() == absl::StatusCode::kPermissionDenied);
  CHECK(nvml.Check(nvml::NVML_ERROR_DRIVER_NOT_LOADED, "x").code() == absl::StatusCode::kUnavailable);
}
