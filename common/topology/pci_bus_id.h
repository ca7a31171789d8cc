#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace gpusched::topology {

// A PCI address in the form NCCL compares bus ids in: lower-case hex,
// "dddd:bb:dd.f" with at least 4 domain digits. NVML reports
// "00000000:07:00.0" and lspci "07:00.0"; both become "0000:07:00.0". NCCL
// finds the devices of a topology file by string equality with this form, so
// a bus id written in any other spelling would never match the real device.
//
// nullopt unless `text` is [domain:]bus:device.function in hex (domain up to
// 8 digits and at most 0xffffffff, bus up to 0xff, device up to 0x1f,
// function up to 7), surrounding whitespace allowed.
std::optional<std::string> NormalizePciBusId(absl::string_view text);

// A made-up but well-formed bus id for a device whose address is unknown:
// "<domain>:ff:NN.0" for n = 0..255, then "<domain>:fe:NN.0" and so on down,
// the style of the placeholder switches in the Azure and AWS topology files
// ("ffff:ff:01.0"). Real machines do not use domains this high, so these
// never collide with a real device. The function digit stays 0 because NCCL
// reserves the low bits of a GPU's bus id for its own partition numbering.
// n must be in [0, 65535].
std::string PlaceholderPciBusId(uint16_t domain, int n);

}  // namespace gpusched::topology
