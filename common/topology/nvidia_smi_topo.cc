#include "common/topology/nvidia_smi_topo.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/digits.h"
#include "common/topology/cpu_list.h"

namespace gpusched::topology {
namespace {

// Far beyond any real node; bounds the matrices a hostile input can ask for.
constexpr int kMaxColumns = 1024;

constexpr absl::string_view kCpuAffinity = "CPU Affinity";
constexpr absl::string_view kNumaAffinity = "NUMA Affinity";
constexpr absl::string_view kGpuNumaId = "GPU NUMA ID";
constexpr absl::string_view kLinkClasses = "X, NV<n>, PIX, PXB, PHB, NODE or SYS";

struct Line {
  int number;  // 1-based
  absl::string_view text;
};

absl::Status Error(int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("nvidia-smi topo -m: line ", line, ": ", what));
}

// Quotes input text for an error message: at most 60 bytes, with control and
// non-ASCII bytes escaped so that garbage cannot garble a log line.
std::string Quote(absl::string_view s) {
  constexpr size_t kMax = 60;
  if (s.size() > kMax) {
    return absl::StrCat("\"", absl::CHexEscape(s.substr(0, kMax)), "...\"");
  }
  return absl::StrCat("\"", absl::CHexEscape(s), "\"");
}

bool IsBlank(absl::string_view s) { return absl::StripAsciiWhitespace(s).empty(); }

std::vector<absl::string_view> SplitWords(absl::string_view s) {
  return absl::StrSplit(s, absl::ByAnyChar(" \t"), absl::SkipEmpty());
}

// Splits the attribute titles, which contain single spaces: on tabs when
// there are any, else on runs of two or more spaces.
std::vector<std::string> SplitTitles(absl::string_view s) {
  std::vector<std::string> out;
  if (absl::StrContains(s, '\t')) {
    for (absl::string_view t : absl::StrSplit(s, '\t')) {
      t = absl::StripAsciiWhitespace(t);
      if (!t.empty()) out.emplace_back(t);
    }
    return out;
  }
  std::string cur;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == ' ' && i + 1 < s.size() && s[i + 1] == ' ') {
      if (!cur.empty()) out.push_back(std::string(absl::StripAsciiWhitespace(cur)));
      cur.clear();
      while (i < s.size() && s[i] == ' ') ++i;
      continue;
    }
    cur += s[i];
    ++i;
  }
  cur = std::string(absl::StripAsciiWhitespace(cur));
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool IsDeviceName(absl::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' && c != ':') {
      return false;
    }
  }
  return !ParseLink(s).has_value();
}

// "GPU12" -> 12; nullopt when not GPU<digits>. Same for "NIC<k>".
std::optional<int> NumberedName(absl::string_view s, absl::string_view prefix) {
  if (!absl::StartsWith(s, prefix)) return std::nullopt;
  absl::string_view digits = s.substr(prefix.size());
  int n = 0;
  if (digits.size() > 4 || !ParseDigits(digits, &n)) return std::nullopt;
  return n;
}

struct Header {
  std::vector<std::string> devices;  // GPUs first, then NICs
  int num_gpus = 0;
  std::vector<std::string> attributes;  // "CPU Affinity", ...
};

absl::StatusOr<Header> ParseHeader(const Line& line) {
  absl::string_view text = line.text;
  // The device part ends where the first attribute title starts.
  size_t attr_pos = absl::string_view::npos;
  for (absl::string_view title : {kCpuAffinity, kNumaAffinity, kGpuNumaId}) {
    attr_pos = std::min(attr_pos, text.find(title));
  }
  Header h;
  absl::string_view device_part = text.substr(0, attr_pos);
  if (attr_pos != absl::string_view::npos) {
    h.attributes = SplitTitles(text.substr(attr_pos));
  }
  std::vector<absl::string_view> words = SplitWords(device_part);
  if (words.empty() || words[0] != "GPU0") {
    return Error(line.number, absl::StrCat("expected the header of `nvidia-smi topo -m` "
                                           "(GPU0 GPU1 ... CPU Affinity ...), found ",
                                           Quote(absl::StripAsciiWhitespace(text))));
  }
  if (static_cast<int>(words.size()) > kMaxColumns) {
    return Error(line.number,
                 absl::StrCat("the header has ", words.size(), " device columns, more than ", kMaxColumns));
  }
  for (absl::string_view w : words) {
    if (!IsDeviceName(w)) {
      return Error(line.number, absl::StrCat("header column ", Quote(w), " is not a device name"));
    }
    if (std::find(h.devices.begin(), h.devices.end(), w) != h.devices.end()) {
      return Error(line.number, absl::StrCat("header column ", Quote(w), " appears twice"));
    }
    std::optional<int> gpu = NumberedName(w, "GPU");
    if (gpu.has_value()) {
      if (*gpu != h.num_gpus || h.num_gpus != static_cast<int>(h.devices.size())) {
        return Error(line.number, absl::StrCat("header column ", Quote(w),
                                               " out of order: "
                                               "expected GPU",
                                               h.num_gpus, " before any NIC column"));
      }
      ++h.num_gpus;
    }
    h.devices.emplace_back(w);
  }
  return h;
}

struct Row {
  int line = 0;
  std::vector<Link> links;                    // one per header device
  std::vector<absl::string_view> attributes;  // cells after the links
};

absl::StatusOr<std::pair<int, Row>> ParseRow(const Line& line, const Header& h, const std::vector<bool>& seen) {
  std::vector<absl::string_view> cells = SplitWords(line.text);
  absl::string_view name = cells[0];
  auto it = std::find(h.devices.begin(), h.devices.end(), name);
  if (it == h.devices.end()) {
    return Error(line.number, absl::StrCat("row ", Quote(name),
                                           " is not a column of the "
                                           "header (expected one of ",
                                           absl::StrJoin(h.devices, " "), ", or a blank line before the Legend)"));
  }
  int index = static_cast<int>(it - h.devices.begin());
  if (seen[index]) {
    return Error(line.number, absl::StrCat("row ", name, " appears twice"));
  }
  Row row;
  row.line = line.number;
  size_t i = 1;
  while (i < cells.size() && row.links.size() < h.devices.size()) {
    std::optional<Link> link = ParseLink(cells[i]);
    if (!link.has_value()) break;
    row.links.push_back(*link);
    ++i;
  }
  if (row.links.size() != h.devices.size()) {
    std::string why = absl::StrCat("row ", name, " has ", row.links.size(), " link cells, the header has ",
                                   h.devices.size(), " columns");
    if (i < cells.size()) {
      absl::StrAppend(&why, " (cell ", row.links.size() + 1, " is ", Quote(cells[i]), ", expected ", kLinkClasses, ")");
    }
    return Error(line.number, why);
  }
  for (size_t col = 0; col < row.links.size(); ++col) {
    bool self = row.links[col].kind == LinkKind::kSelf;
    if (self != (static_cast<int>(col) == index)) {
      return Error(line.number, absl::StrCat("row ", name, ", column ", h.devices[col], ": expected ",
                                             self ? "a link class, not X (X marks the "
                                                    "device itself)"
                                                  : "X on the diagonal",
                                             ", found ", FormatLink(row.links[col])));
    }
  }
  row.attributes.assign(cells.begin() + i, cells.end());
  if (row.attributes.size() > h.attributes.size()) {
    return Error(line.number, absl::StrCat("row ", name, " has ", row.attributes.size(), " cells after its ",
                                           h.devices.size(), " link cells, the header has ", h.attributes.size(),
                                           " attribute columns (", absl::StrJoin(h.attributes, ", "), "); cell ",
                                           Quote(row.attributes[h.attributes.size()]), " is left over"));
  }
  return std::make_pair(index, std::move(row));
}

absl::Status ApplyGpuAttributes(const Header& h, const Row& row, GpuInfo* gpu) {
  for (size_t a = 0; a < row.attributes.size(); ++a) {
    absl::string_view title = h.attributes[a];
    absl::string_view value = row.attributes[a];
    if (value == "N/A") continue;
    if (title == kCpuAffinity) {
      absl::StatusOr<std::vector<int>> cpus = ParseCpuList(value);
      if (!cpus.ok()) {
        return Error(row.line, absl::StrCat("GPU", gpu->index, " ", title, ": ", cpus.status().message()));
      }
      gpu->cpu_affinity = *std::move(cpus);
    } else if (title == kNumaAffinity || title == kGpuNumaId) {
      // NUMA Affinity may be a list ("0-1") when a GPU is equally close to
      // several nodes; a single node is kept, a list leaves it unknown.
      absl::StatusOr<std::vector<int>> nodes = ParseCpuList(value);
      if (!nodes.ok() || nodes->empty()) {
        return Error(row.line, absl::StrCat("GPU", gpu->index, " ", title,
                                            ": expected a "
                                            "NUMA node number or N/A, found ",
                                            Quote(value)));
      }
      if (title == kNumaAffinity && nodes->size() == 1) {
        gpu->numa_node = nodes->front();
      }
    }
    // Other attribute columns from newer drivers are ignored.
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NodeTopology> ParseNvidiaSmiTopo(absl::string_view text) {
  std::vector<Line> lines;
  int number = 0;
  for (absl::string_view l : absl::StrSplit(text, '\n')) {
    ++number;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back({number, l});
  }

  size_t pos = 0;
  while (pos < lines.size() && IsBlank(lines[pos].text)) ++pos;
  if (pos == lines.size()) {
    return absl::InvalidArgumentError(
        "nvidia-smi topo -m: the input is empty; expected a header line "
        "(GPU0 GPU1 ... CPU Affinity ...)");
  }
  absl::StatusOr<Header> header = ParseHeader(lines[pos]);
  if (!header.ok()) return header.status();
  const Header& h = *header;
  const int header_line = lines[pos].number;
  ++pos;

  // The matrix: rows until a blank line, a legend or the end.
  std::vector<std::optional<Row>> rows(h.devices.size());
  std::vector<bool> seen(h.devices.size(), false);
  for (; pos < lines.size(); ++pos) {
    absl::string_view t = absl::StripAsciiWhitespace(lines[pos].text);
    if (t.empty() || t == "Legend:" || t == "NIC Legend:") break;
    absl::StatusOr<std::pair<int, Row>> row = ParseRow(lines[pos], h, seen);
    if (!row.ok()) return row.status();
    seen[row->first] = true;
    rows[row->first] = std::move(row->second);
  }
  const int end_line = pos < lines.size() ? lines[pos].number : number;
  for (int g = 0; g < h.num_gpus; ++g) {
    if (!rows[g].has_value()) {
      return Error(end_line, absl::StrCat("the matrix ends without a row for ", h.devices[g], " (the header on line ",
                                          header_line, " has ", h.num_gpus, " GPU columns)"));
    }
  }

  // Legend and NIC Legend.
  std::map<std::string, std::string> nic_legend;
  enum class Block { kNone, kLegend, kNicLegend } block = Block::kNone;
  for (; pos < lines.size(); ++pos) {
    absl::string_view t = absl::StripAsciiWhitespace(lines[pos].text);
    if (t.empty()) continue;
    if (t == "Legend:") {
      block = Block::kLegend;
      continue;
    }
    if (t == "NIC Legend:") {
      block = Block::kNicLegend;
      continue;
    }
    if (block == Block::kLegend && absl::StrContains(t, '=')) continue;
    if (block == Block::kNicLegend) {
      std::vector<absl::string_view> kv = absl::StrSplit(t, absl::MaxSplits(':', 1));
      if (kv.size() == 2) {
        absl::string_view key = absl::StripAsciiWhitespace(kv[0]);
        absl::string_view dev = absl::StripAsciiWhitespace(kv[1]);
        auto col = std::find(h.devices.begin() + h.num_gpus, h.devices.end(), key);
        if (col == h.devices.end()) {
          return Error(lines[pos].number, absl::StrCat("NIC Legend entry ", Quote(t), " names ", Quote(key),
                                                       ", which is not a NIC column of the header"));
        }
        if (!IsDeviceName(dev)) {
          return Error(lines[pos].number, absl::StrCat("NIC Legend entry ", Quote(t), ": expected NIC<k>: <device>"));
        }
        nic_legend[std::string(key)] = std::string(dev);
        continue;
      }
    }
    return Error(lines[pos].number, absl::StrCat("unexpected text after the matrix: ", Quote(t),
                                                 " (expected \"Legend:\", \"NIC Legend:\" or their "
                                                 "entries)"));
  }

  const int num_nics = static_cast<int>(h.devices.size()) - h.num_gpus;
  NodeTopology topo(h.num_gpus, num_nics);
  for (int n = 0; n < num_nics; ++n) {
    NicInfo& nic = topo.nics()[n];
    nic.name = h.devices[h.num_gpus + n];
    auto legend = nic_legend.find(nic.name);
    if (legend != nic_legend.end()) {
      nic.device = legend->second;
    } else if (!NumberedName(nic.name, "NIC").has_value()) {
      nic.device = nic.name;  // the header already names the device
    }
  }
  for (int g = 0; g < h.num_gpus; ++g) {
    const Row& row = *rows[g];
    for (int j = 0; j < h.num_gpus; ++j) topo.SetGpuLink(g, j, row.links[j]);
    for (int n = 0; n < num_nics; ++n) {
      topo.SetGpuNicLink(g, n, row.links[h.num_gpus + n]);
    }
    absl::Status st = ApplyGpuAttributes(h, row, &topo.gpus()[g]);
    if (!st.ok()) return st;
  }
  for (int n = 0; n < num_nics; ++n) {
    const std::optional<Row>& row = rows[h.num_gpus + n];
    if (!row.has_value()) continue;  // NIC-NIC links stay SYS
    for (int m = 0; m < num_nics; ++m) {
      topo.SetNicLink(n, m, row->links[h.num_gpus + m]);
    }
  }

  // A NIC shares the NUMA node of its closest GPU unless the path is SYS.
  for (int n = 0; n < num_nics; ++n) {
    int best_rank = -1;
    for (int g = 0; g < h.num_gpus; ++g) {
      Link l = topo.GpuNicLink(g, n);
      if (l.kind == LinkKind::kSys || topo.gpus()[g].numa_node < 0) continue;
      if (LinkRank(l) > best_rank) {
        best_rank = LinkRank(l);
        topo.nics()[n].numa_node = topo.gpus()[g].numa_node;
      }
    }
  }

  // NUMA nodes named by the GPUs, with the union of their CPU affinity.
  std::map<int, std::vector<int>> numa;
  for (const GpuInfo& gpu : topo.gpus()) {
    if (gpu.numa_node < 0) continue;
    std::vector<int>& cpus = numa[gpu.numa_node];
    cpus.insert(cpus.end(), gpu.cpu_affinity.begin(), gpu.cpu_affinity.end());
  }
  for (auto& [id, cpus] : numa) {
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    topo.numa_nodes().push_back(NumaNode{id, std::move(cpus), 0});
  }
  return topo;
}

}  // namespace gpusched::topology
