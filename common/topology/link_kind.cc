#include "common/topology/link_kind.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpusched::topology {
namespace {

// More than any GPU has (H100/H200: 18); bounds the rank arithmetic.
constexpr int kMaxNvLinks = 64;

}  // namespace

std::optional<Link> ParseLink(absl::string_view text) {
  if (text == "X") return Link{LinkKind::kSelf, 0};
  if (text == "PIX") return Link{LinkKind::kPix, 0};
  if (text == "PXB") return Link{LinkKind::kPxb, 0};
  if (text == "PHB") return Link{LinkKind::kPhb, 0};
  if (text == "NODE") return Link{LinkKind::kNode, 0};
  if (text == "SYS" || text == "SOC") return Link{LinkKind::kSys, 0};
  if (absl::StartsWith(text, "NV")) {
    absl::string_view digits = text.substr(2);
    if (digits.empty() || digits.size() > 2) return std::nullopt;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
    }
    int n = 0;
    if (!absl::SimpleAtoi(digits, &n) || n < 1 || n > kMaxNvLinks) {
      return std::nullopt;
    }
    return Link{LinkKind::kNvLink, n};
  }
  return std::nullopt;
}

std::string LinkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kSelf: return "X";
    case LinkKind::kNvLink: return "NVLink";
    case LinkKind::kPix: return "PIX";
    case LinkKind::kPxb: return "PXB";
    case LinkKind::kPhb: return "PHB";
    case LinkKind::kNode: return "NODE";
    case LinkKind::kSys: return "SYS";
  }
  return "?";
}

std::string FormatLink(const Link& link) {
  if (link.kind == LinkKind::kNvLink) return absl::StrCat("NV", link.nvlinks);
  return LinkKindName(link.kind);
}

int LinkRank(const Link& link) {
  switch (link.kind) {
    case LinkKind::kSelf: return 1000;
    case LinkKind::kNvLink: {
      int n = link.nvlinks < 1 ? 1 : (link.nvlinks > kMaxNvLinks ? kMaxNvLinks : link.nvlinks);
      return 100 + n;
    }
    case LinkKind::kPix: return 50;
    case LinkKind::kPxb: return 40;
    case LinkKind::kPhb: return 30;
    case LinkKind::kNode: return 20;
    case LinkKind::kSys: return 10;
  }
  return 0;
}

}  // namespace gpusched::topology
