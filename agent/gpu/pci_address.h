#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace gpusched::agent {

// A PCI function's address. NVML writes it as "00000000:07:00.0" (8-digit
// domain, upper case), hwloc and sysfs as "0000:07:00.0"; comparing parsed
// addresses rather than strings is what lets a GPU from NVML be found in
// hwloc's PCI tree and an NVLink's far end be matched to a GPU.
struct PciAddress {
  uint32_t domain = 0;
  uint32_t bus = 0;
  uint32_t device = 0;
  uint32_t function = 0;

  friend bool operator==(const PciAddress&, const PciAddress&) = default;
  friend auto operator<=>(const PciAddress&, const PciAddress&) = default;
};

// "[domain:]bus:device.function" in hex, either case, surrounding whitespace
// ignored; nullopt for anything else, including an empty string. Device must
// be below 32 and function below 8, as PCI allows.
std::optional<PciAddress> ParsePciAddress(absl::string_view text);

// The form the topology model uses, NVML's: "00000000:07:00.0".
std::string FormatPciAddress(const PciAddress& address);

}  // namespace gpusched::agent
