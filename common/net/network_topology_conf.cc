#include "common/net/network_topology_conf.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/net/hostlist.h"
#include "common/net/key_value_line.h"

namespace gpusched {
namespace {

absl::Status LineError(int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("network topology: line ", line, ": ", what));
}

std::string Quote(absl::string_view s) {
  constexpr size_t kMax = 60;
  const bool cut = s.size() > kMax;
  return absl::StrCat("\"", absl::CHexEscape(s.substr(0, kMax)), cut ? "...\"" : "\"");
}

enum class LineKind { kSwitch, kBlock, kBlockSizes };

// The keys each kind of line may hold, lower-cased, and how to list them in
// an error message.
struct KeySet {
  std::vector<absl::string_view> keys;
  absl::string_view description;
};

const KeySet& AllowedKeys(LineKind kind) {
  static const KeySet kSwitch{{"switchname", "switches", "nodes", "linkspeed"},
                              "SwitchName, Switches, Nodes or LinkSpeed"};
  static const KeySet kBlock{{"blockname", "nodes"}, "BlockName or Nodes"};
  static const KeySet kBlockSizes{{"blocksizes"}, "BlockSizes alone"};
  switch (kind) {
    case LineKind::kSwitch: return kSwitch;
    case LineKind::kBlock: return kBlock;
    case LineKind::kBlockSizes: return kBlockSizes;
  }
  return kSwitch;
}

absl::string_view KindName(LineKind kind) {
  switch (kind) {
    case LineKind::kSwitch: return "SwitchName";
    case LineKind::kBlock: return "BlockName";
    case LineKind::kBlockSizes: return "BlockSizes";
  }
  return "";
}

// One non-blank line: its kind and its values by lower-cased key.
struct ConfLine {
  int number = 0;
  LineKind kind = LineKind::kSwitch;
  absl::flat_hash_map<std::string, std::string> values;

  const std::string* Get(absl::string_view key) const {
    auto it = values.find(key);
    return it == values.end() ? nullptr : &it->second;
  }
};

absl::StatusOr<ConfLine> ClassifyLine(int number, const std::vector<KeyValue>& pairs) {
  ConfLine line;
  line.number = number;
  absl::flat_hash_map<std::string, std::string> written;  // lower-case -> as written
  for (const KeyValue& kv : pairs) {
    std::string key = absl::AsciiStrToLower(kv.key);
    if (!written.try_emplace(key, kv.key).second) {
      return LineError(number, absl::StrCat("key ", kv.key, " is given twice"));
    }
    line.values.emplace(std::move(key), kv.value);
  }

  const bool is_switch = line.values.contains("switchname");
  const bool is_block = line.values.contains("blockname");
  if (is_switch && is_block) {
    return LineError(number, "a line defines a switch (SwitchName=) or a block (BlockName=), not both");
  }
  if (is_switch) {
    line.kind = LineKind::kSwitch;
  } else if (is_block) {
    line.kind = LineKind::kBlock;
  } else if (line.values.contains("blocksizes")) {
    line.kind = LineKind::kBlockSizes;
  } else {
    return LineError(
        number, absl::StrCat("expected SwitchName= or BlockName= on the line, found ", pairs.front().key, "= first"));
  }

  const KeySet& allowed = AllowedKeys(line.kind);
  for (const KeyValue& kv : pairs) {
    const std::string key = absl::AsciiStrToLower(kv.key);
    bool ok = false;
    for (absl::string_view a : allowed.keys) ok = ok || key == a;
    if (!ok) {
      return LineError(number, absl::StrCat("unknown key ", kv.key, " on a ", KindName(line.kind), " line (expected ",
                                            allowed.description, ")"));
    }
  }
  return line;
}

// SwitchName and BlockName name one thing; a hostlist there is a mistake
// that would otherwise create an oddly named switch.
absl::Status CheckSingleName(const ConfLine& line, absl::string_view key, absl::string_view value) {
  if (value.empty()) return LineError(line.number, absl::StrCat(key, "= is empty"));
  if (value.find_first_of("[],") != absl::string_view::npos) {
    return LineError(line.number, absl::StrCat(key, "= takes one name, found ", Quote(value)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ExpandAt(const ConfLine& line, absl::string_view key,
                                                  absl::string_view value) {
  auto names = ExpandHostlist(value);
  if (!names.ok()) {
    return LineError(line.number, absl::StrCat(key, "=: ", names.status().message()));
  }
  if (names->empty()) return LineError(line.number, absl::StrCat(key, "= is empty"));
  return names;
}

}  // namespace

// Builds a NetworkTopologyConf line by line, then links and checks the tree
// once every switch is known (Switches= may name switches defined later).
class NetworkTopologyConfBuilder {
 public:
  absl::Status AddLine(int number, absl::string_view text) {
    auto pairs = SplitKeyValueLine(text);
    if (!pairs.ok()) return LineError(number, pairs.status().message());
    if (pairs->empty()) return absl::OkStatus();
    auto line = ClassifyLine(number, *pairs);
    if (!line.ok()) return line.status();
    switch (line->kind) {
      case LineKind::kSwitch: return AddSwitch(*line);
      case LineKind::kBlock: return AddBlock(*line);
      case LineKind::kBlockSizes: return SetBlockSizes(*line);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<NetworkTopologyConf> Finish() && {
    if (absl::Status s = LinkSwitches(); !s.ok()) return s;
    if (absl::Status s = CheckNoCycle(); !s.ok()) return s;
    return std::move(conf_);
  }

 private:
  absl::Status AddSwitch(const ConfLine& line) {
    const std::string& name = *line.Get("switchname");
    if (absl::Status s = CheckSingleName(line, "SwitchName", name); !s.ok()) return s;
    if (const NetworkSwitch* other = conf_.FindSwitch(name)) {
      return LineError(line.number, absl::StrCat("switch ", Quote(name), " is already defined on line ", other->line));
    }
    const std::string* nodes = line.Get("nodes");
    const std::string* children = line.Get("switches");
    if (nodes != nullptr && children != nullptr) {
      return LineError(line.number, absl::StrCat("switch ", Quote(name),
                                                 " has both Nodes= and Switches=; a switch lists either "
                                                 "its nodes (a leaf) or the switches below it"));
    }
    if (nodes == nullptr && children == nullptr) {
      return LineError(line.number, absl::StrCat("switch ", Quote(name), " has neither Nodes= nor Switches="));
    }

    const int index = static_cast<int>(conf_.switches_.size());
    NetworkSwitch sw;
    sw.name = name;
    sw.line = line.number;
    if (children != nullptr) {
      auto names = ExpandAt(line, "Switches", *children);
      if (!names.ok()) return names.status();
      sw.children = *std::move(names);
    } else {
      auto names = ExpandAt(line, "Nodes", *nodes);
      if (!names.ok()) return names.status();
      for (const std::string& node : *names) {
        auto [it, added] = conf_.node_leaf_.try_emplace(node, index);
        if (added) continue;
        if (it->second == index) {
          return LineError(line.number, absl::StrCat("node ", Quote(node), " is listed twice in Nodes="));
        }
        const NetworkSwitch& other = conf_.switches_[it->second];
        return LineError(line.number, absl::StrCat("node ", Quote(node), " is already under switch ", Quote(other.name),
                                                   " (line ", other.line, "); a node hangs off one leaf switch"));
      }
      sw.nodes = *std::move(names);
    }
    conf_.switch_index_.emplace(name, index);
    conf_.switches_.push_back(std::move(sw));
    return absl::OkStatus();
  }

  absl::Status AddBlock(const ConfLine& line) {
    const std::string& name = *line.Get("blockname");
    if (absl::Status s = CheckSingleName(line, "BlockName", name); !s.ok()) return s;
    if (const NetworkBlock* other = conf_.FindBlock(name)) {
      return LineError(line.number, absl::StrCat("block ", Quote(name), " is already defined on line ", other->line));
    }
    const std::string* nodes = line.Get("nodes");
    if (nodes == nullptr) {
      return LineError(line.number, absl::StrCat("block ", Quote(name), " has no Nodes="));
    }
    auto names = ExpandAt(line, "Nodes", *nodes);
    if (!names.ok()) return names.status();

    const int index = static_cast<int>(conf_.blocks_.size());
    for (const std::string& node : *names) {
      auto [it, added] = conf_.node_block_.try_emplace(node, index);
      if (added) continue;
      if (it->second == index) {
        return LineError(line.number, absl::StrCat("node ", Quote(node), " is listed twice in Nodes="));
      }
      const NetworkBlock& other = conf_.blocks_[it->second];
      return LineError(line.number, absl::StrCat("node ", Quote(node), " is already in block ", Quote(other.name),
                                                 " (line ", other.line, "); a node belongs to one NVLink domain"));
    }
    conf_.block_index_.emplace(name, index);
    NetworkBlock block;
    block.name = name;
    block.line = line.number;
    block.nodes = *std::move(names);
    conf_.blocks_.push_back(std::move(block));
    return absl::OkStatus();
  }

  absl::Status SetBlockSizes(const ConfLine& line) {
    if (block_sizes_line_ != 0) {
      return LineError(line.number, absl::StrCat("BlockSizes= is already given on line ", block_sizes_line_));
    }
    block_sizes_line_ = line.number;
    for (absl::string_view part : absl::StrSplit(*line.Get("blocksizes"), ',')) {
      part = absl::StripAsciiWhitespace(part);
      int size = 0;
      if (!absl::SimpleAtoi(part, &size) || size <= 0) {
        return LineError(line.number, absl::StrCat("BlockSizes=: ", Quote(part),
                                                   " is not a positive whole number (expected e.g. 9,18)"));
      }
      conf_.block_sizes_.push_back(size);
    }
    return absl::OkStatus();
  }

  // Sets each switch's parent from the Switches= lists, in file order, so a
  // switch claimed twice is reported on the later line.
  absl::Status LinkSwitches() {
    for (NetworkSwitch& sw : conf_.switches_) {
      for (const std::string& child_name : sw.children) {
        auto it = conf_.switch_index_.find(child_name);
        if (it == conf_.switch_index_.end()) {
          return LineError(sw.line,
                           absl::StrCat("Switches= names ", Quote(child_name), ", which no SwitchName line defines"));
        }
        NetworkSwitch& child = conf_.switches_[it->second];
        if (&child == &sw) {
          return LineError(sw.line, absl::StrCat("switch ", Quote(sw.name), " lists itself in Switches="));
        }
        if (child.parent == sw.name) {
          return LineError(sw.line, absl::StrCat("switch ", Quote(child_name), " is listed twice in Switches="));
        }
        if (!child.parent.empty()) {
          const NetworkSwitch& other = *conf_.FindSwitch(child.parent);
          return LineError(sw.line,
                           absl::StrCat("switch ", Quote(child_name), " is already under switch ", Quote(other.name),
                                        " (line ", other.line, "); a switch has one parent"));
        }
        child.parent = sw.name;
      }
    }
    return absl::OkStatus();
  }

  // With one parent per switch, a cycle is a loop of parent links. It is
  // reported on the line of its first-defined switch.
  absl::Status CheckNoCycle() const {
    const std::vector<NetworkSwitch>& switches = conf_.switches_;
    enum State { kNew, kOnPath, kDone };
    std::vector<State> state(switches.size(), kNew);
    auto parent_of = [&](int i) {
      auto it = conf_.switch_index_.find(switches[i].parent);
      return it == conf_.switch_index_.end() ? -1 : it->second;
    };
    for (int start = 0; start < static_cast<int>(switches.size()); ++start) {
      std::vector<int> path;
      int i = start;
      while (i >= 0 && state[i] == kNew) {
        state[i] = kOnPath;
        path.push_back(i);
        i = parent_of(i);
      }
      if (i >= 0 && state[i] == kOnPath) {
        // Walking the loop from its lowest index, which is its first-defined
        // switch, gives a message that does not depend on where we started.
        int first = i;
        for (int j = parent_of(i); j != i; j = parent_of(j)) first = std::min(first, j);
        std::vector<absl::string_view> names = {switches[first].name};
        for (int j = parent_of(first); j != first; j = parent_of(j)) {
          names.emplace_back(switches[j].name);
        }
        names.emplace_back(switches[first].name);
        return LineError(switches[first].line,
                         absl::StrCat("switches form a cycle, each under the next: ", absl::StrJoin(names, " -> ")));
      }
      for (int j : path) state[j] = kDone;
    }
    return absl::OkStatus();
  }

  NetworkTopologyConf conf_;
  int block_sizes_line_ = 0;
};

absl::StatusOr<NetworkTopologyConf> ParseNetworkTopologyConf(absl::string_view text) {
  NetworkTopologyConfBuilder builder;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    if (absl::Status s = builder.AddLine(number, line); !s.ok()) return s;
  }
  return std::move(builder).Finish();
}

std::optional<topology::NetworkLocation> NetworkTopologyConf::Locate(absl::string_view node) const {
  auto leaf = node_leaf_.find(node);
  auto block = node_block_.find(node);
  if (leaf == node_leaf_.end() && block == node_block_.end()) return std::nullopt;
  topology::NetworkLocation location;
  if (leaf != node_leaf_.end()) {
    const std::vector<std::string> path = SwitchPath(node);
    location.leaf = path.front();
    if (path.size() > 1) location.spine = path.back();
  }
  if (block != node_block_.end()) location.nvlink_domain = blocks_[block->second].name;
  return location;
}

std::vector<std::string> NetworkTopologyConf::SwitchPath(absl::string_view node) const {
  std::vector<std::string> path;
  auto leaf = node_leaf_.find(node);
  if (leaf == node_leaf_.end()) return path;
  // The parser rejected cycles, so this walk ends at a top switch.
  for (const NetworkSwitch* sw = &switches_[leaf->second]; sw != nullptr;
       sw = sw->parent.empty() ? nullptr : FindSwitch(sw->parent)) {
    path.push_back(sw->name);
  }
  return path;
}

const NetworkSwitch* NetworkTopologyConf::FindSwitch(absl::string_view name) const {
  auto it = switch_index_.find(name);
  return it == switch_index_.end() ? nullptr : &switches_[it->second];
}

const NetworkBlock* NetworkTopologyConf::FindBlock(absl::string_view name) const {
  auto it = block_index_.find(name);
  return it == block_index_.end() ? nullptr : &blocks_[it->second];
}

}  // namespace gpusched
