#include "agent/gpu/pci_address.h"

#include <catch2/catch.hpp>

using gpusched::agent::FormatPciAddress;
using gpusched::agent::ParsePciAddress;
using gpusched::agent::PciAddress;

TEST_CASE("NVML, hwloc and lspci spellings of one address are equal") {
  auto nvml = ParsePciAddress("00000000:3A:00.0");
  auto hwloc = ParsePciAddress("0000:3a:00.0");
  auto lspci = ParsePciAddress(" 3a:00.0\n");
  REQUIRE(nvml.has_value());
  CHECK(*nvml == PciAddress{0, 0x3a, 0, 0});
  CHECK(hwloc == nvml);
  CHECK(lspci == nvml);
  CHECK(ParsePciAddress("00000019:01:1f.7") == PciAddress{0x19, 0x01, 0x1f, 7});
}

TEST_CASE("the model's form is NVML's") {
  CHECK(FormatPciAddress({0, 0x3a, 0, 0}) == "00000000:3A:00.0");
  CHECK(FormatPciAddress({0x10000, 0x01, 0x02, 1}) == "00010000:01:02.1");
}

TEST_CASE("anything that is not a PCI address is rejected") {
  for (const char* bad : {"", "garbage", "0000:3a:00", "0000:3a.00.0", "0000:3a:20.0", "0000:3a:00.8", "0000:100:00.0",
                          "000000000:3a:00.0", "0000:3a:00.0.1", "0000:-1:00.0", "zz:00.0"}) {
    INFO(bad);
    CHECK_FALSE(ParsePciAddress(bad).has_value());
  }
}
