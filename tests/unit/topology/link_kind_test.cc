#include "common/topology/link_kind.h"

#include <catch2/catch.hpp>

using namespace gpusched::topology;

TEST_CASE("link classes parse and format as nvidia-smi prints them") {
  for (const char* s : {"X", "NV1", "NV2", "NV12", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS"}) {
    auto link = ParseLink(s);
    REQUIRE(link.has_value());
    CHECK(FormatLink(*link) == s);
  }
  CHECK(ParseLink("NV12") == Link{LinkKind::kNvLink, 12});
  CHECK(ParseLink("X") == Link{LinkKind::kSelf, 0});
  CHECK(ParseLink("SOC") == Link{LinkKind::kSys, 0});  // older drivers
}

TEST_CASE("anything else is not a link class") {
  for (const char* s : {"", "NV", "NV0", "NV-1", "NV123", "NVX", "nv12", "pix", " X ", "SYSTEM", "N/A", "0-23"}) {
    CHECK_FALSE(ParseLink(s).has_value());
  }
}

TEST_CASE("placement order: more NVLinks > fewer > PIX > PXB > PHB > NODE > SYS") {
  const Link order[] = {{LinkKind::kSelf, 0},   {LinkKind::kNvLink, 18}, {LinkKind::kNvLink, 12},
                        {LinkKind::kNvLink, 2}, {LinkKind::kNvLink, 1},  {LinkKind::kPix, 0},
                        {LinkKind::kPxb, 0},    {LinkKind::kPhb, 0},     {LinkKind::kNode, 0},
                        {LinkKind::kSys, 0}};
  constexpr size_t n = sizeof(order) / sizeof(order[0]);
  for (size_t i = 0; i < n; ++i) {
    CHECK_FALSE(BetterThan(order[i], order[i]));
    for (size_t j = i + 1; j < n; ++j) {
      INFO(FormatLink(order[i]) << " vs " << FormatLink(order[j]));
      CHECK(BetterThan(order[i], order[j]));
      CHECK_FALSE(BetterThan(order[j], order[i]));
    }
  }
}
