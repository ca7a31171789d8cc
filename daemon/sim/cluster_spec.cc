#include "daemon/sim/cluster_spec.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/net/hostlist.h"
#include "daemon/sim/toml_subset.h"

namespace gpusched::sim {
namespace {

absl::Status LineError(int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", what));
}

// Typed access to one table, with errors that name the table and key.
class TableReader {
 public:
  TableReader(const TomlTable& table, std::vector<absl::string_view> allowed)
      : table_(table), allowed_(std::move(allowed)) {}

  std::string What() const { return table_.name.empty() ? "the top level" : absl::StrCat("[[", table_.name, "]]"); }
  int line() const { return table_.line; }

  absl::Status CheckKeys() const {
    for (const auto& [key, value] : table_.entries) {
      if (std::find(allowed_.begin(), allowed_.end(), key) == allowed_.end()) {
        return LineError(value.line, absl::StrCat("unknown key ", key, " in ", What(), " (expected ",
                                                  absl::StrJoin(allowed_, ", "), ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> String(absl::string_view key, bool required) const {
    const TomlValue* v = table_.Find(key);
    if (v == nullptr) {
      if (required) return LineError(table_.line, absl::StrCat(What(), " needs ", key, " = \"...\""));
      return std::string();
    }
    if (!v->is_string()) return LineError(v->line, absl::StrCat(key, " must be a string, got a ", v->type_name()));
    const std::string& s = std::get<std::string>(v->value);
    if (required && s.empty()) return LineError(v->line, absl::StrCat(key, " is empty"));
    return s;
  }

  // A name that goes into a topology.conf line as it is.
  absl::StatusOr<std::string> Name(absl::string_view key) const {
    auto s = String(key, true);
    if (!s.ok()) return s;
    if (s->find_first_of(" \t\"#=") != std::string::npos) {
      return LineError(table_.Find(key)->line,
                       absl::StrCat(key, " \"", *s, "\" must not contain spaces, quotes, '#' or '='"));
    }
    return s;
  }

  absl::StatusOr<int64_t> Int(absl::string_view key, bool required, int64_t min, int64_t max) const {
    const TomlValue* v = table_.Find(key);
    if (v == nullptr) {
      if (required) return LineError(table_.line, absl::StrCat(What(), " needs ", key, " = <integer>"));
      return 0;
    }
    if (!v->is_int()) return LineError(v->line, absl::StrCat(key, " must be an integer, got a ", v->type_name()));
    const int64_t i = std::get<int64_t>(v->value);
    if (i < min || i > max) {
      return LineError(v->line, absl::StrCat(key, " must be between ", min, " and ", max, ", got ", i));
    }
    return i;
  }

  absl::StatusOr<std::vector<std::string>> Hostlist(absl::string_view key) const {
    auto s = Name(key);
    if (!s.ok()) return s.status();
    auto names = ExpandHostlist(*s);
    if (!names.ok()) return LineError(table_.Find(key)->line, absl::StrCat(key, ": ", names.status().message()));
    return names;
  }

 private:
  const TomlTable& table_;
  std::vector<absl::string_view> allowed_;
};

absl::StatusOr<NodeTypeSpec> ReadNodeType(const TomlTable& table) {
  TableReader r(table, {"name", "topology", "gpu_model", "gpu_memory_mb", "cpus", "memory_mb", "nic_gbps"});
  if (absl::Status s = r.CheckKeys(); !s.ok()) return s;
  NodeTypeSpec t;
  t.line = table.line;
  constexpr int64_t kBig = int64_t{1} << 40;
  auto name = r.Name("name");
  auto topology = r.String("topology", true);
  auto model = r.String("gpu_model", true);
  auto gpu_mem = r.Int("gpu_memory_mb", true, 1, kBig);
  auto cpus = r.Int("cpus", true, 1, 1'000'000);
  auto mem = r.Int("memory_mb", true, 1, kBig);
  auto nic = r.Int("nic_gbps", false, 0, 1'000'000);
  for (const absl::Status& s : {name.status(), topology.status(), model.status(), gpu_mem.status(), cpus.status(),
                                mem.status(), nic.status()}) {
    if (!s.ok()) return s;
  }
  t.name = *name;
  t.topology = *topology;
  t.gpu_model = *model;
  t.gpu_memory_mb = *gpu_mem;
  t.cpus = *cpus;
  t.memory_mb = *mem;
  t.nic_gbps = static_cast<int32_t>(*nic);
  return t;
}

// A [[switch]] or [[nvlink_domain]] as one topology.conf line.
absl::StatusOr<std::string> ConfLine(const TomlTable& table) {
  if (table.name == "nvlink_domain") {
    TableReader r(table, {"name", "nodes"});
    if (absl::Status s = r.CheckKeys(); !s.ok()) return s;
    auto name = r.Name("name");
    if (!name.ok()) return name.status();
    auto nodes = r.Name("nodes");
    if (!nodes.ok()) return nodes.status();
    return absl::StrCat("BlockName=", *name, " Nodes=", *nodes);
  }
  TableReader r(table, {"name", "nodes", "switches"});
  if (absl::Status s = r.CheckKeys(); !s.ok()) return s;
  auto name = r.Name("name");
  if (!name.ok()) return name.status();
  std::string line = absl::StrCat("SwitchName=", *name);
  for (absl::string_view key : {"nodes", "switches"}) {
    if (table.Find(key) == nullptr) continue;
    auto value = r.Name(key);
    if (!value.ok()) return value.status();
    absl::StrAppend(&line, key == "nodes" ? " Nodes=" : " Switches=", *value);
  }
  return line;
}

// The network parser numbers the lines of the text built here, one per
// table; `conf_line` back to the line of the table that made it (0 if none).
int TomlLineOf(int conf_line, const std::vector<const TomlTable*>& tables) {
  return conf_line >= 1 && conf_line <= static_cast<int>(tables.size()) ? tables[conf_line - 1]->line : 0;
}

// Rewrites every "line N" in a network parser message to the spec's line.
std::string MapLineNumbers(absl::string_view message, const std::vector<const TomlTable*>& tables) {
  std::string out;
  constexpr absl::string_view kWord = "line ";
  while (true) {
    size_t at = message.find(kWord);
    if (at == absl::string_view::npos) break;
    size_t digits_end = at + kWord.size();
    while (digits_end < message.size() && absl::ascii_isdigit(static_cast<unsigned char>(message[digits_end]))) {
      ++digits_end;
    }
    int conf_line = 0;
    absl::StrAppend(&out, message.substr(0, at + kWord.size()));
    if (absl::SimpleAtoi(message.substr(at + kWord.size(), digits_end - at - kWord.size()), &conf_line)) {
      absl::StrAppend(&out, TomlLineOf(conf_line, tables));
    } else {
      absl::StrAppend(&out, message.substr(at + kWord.size(), digits_end - at - kWord.size()));
    }
    message.remove_prefix(digits_end);
  }
  absl::StrAppend(&out, message);
  return out;
}

absl::Status MapNetworkError(const absl::Status& error, const std::vector<const TomlTable*>& tables) {
  absl::string_view message = error.message();
  absl::ConsumePrefix(&message, "network topology: ");
  return absl::InvalidArgumentError(MapLineNumbers(message, tables));
}

absl::Status CheckNetworkNodes(const NetworkTopologyConf& network, const std::set<std::string>& known,
                               const std::vector<const TomlTable*>& tables) {
  auto check = [&](const std::vector<std::string>& nodes, int conf_line, absl::string_view what) -> absl::Status {
    for (const std::string& node : nodes) {
      if (known.contains(node)) continue;
      return LineError(TomlLineOf(conf_line, tables), absl::StrCat(what, " lists node ", node, ", which no [[nodes]] table defines"));
    }
    return absl::OkStatus();
  };
  for (const NetworkSwitch& sw : network.switches()) {
    if (absl::Status s = check(sw.nodes, sw.line, absl::StrCat("switch ", sw.name)); !s.ok()) return s;
  }
  for (const NetworkBlock& block : network.blocks()) {
    if (absl::Status s = check(block.nodes, block.line, absl::StrCat("nvlink_domain ", block.name)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ClusterSpec> ParseClusterSpec(absl::string_view text) {
  auto doc = ParseTomlSubset(text);
  if (!doc.ok()) return doc.status();
  ClusterSpec spec;
  TableReader top(doc->root, {"name"});
  if (absl::Status s = top.CheckKeys(); !s.ok()) return s;
  auto name = top.String("name", false);
  if (!name.ok()) return name.status();
  spec.name = *name;

  std::map<std::string, int> type_lines;
  std::set<std::string> node_names;
  std::vector<const TomlTable*> network_tables;
  std::string network_text;
  for (const TomlTable& table : doc->tables) {
    if (!table.array_element) {
      return LineError(table.line, absl::StrCat("[", table.name, "] should be [[", table.name,
                                                "]] (node_type, nodes, switch and nvlink_domain repeat)"));
    }
    if (table.name == "node_type") {
      auto type = ReadNodeType(table);
      if (!type.ok()) return type.status();
      if (auto [it, fresh] = type_lines.emplace(type->name, table.line); !fresh) {
        return LineError(table.line, absl::StrCat("node_type ", type->name, " is defined twice (first on line ",
                                                  it->second, ")"));
      }
      spec.node_types.push_back(*std::move(type));
    } else if (table.name == "nodes") {
      TableReader r(table, {"names", "type"});
      if (absl::Status s = r.CheckKeys(); !s.ok()) return s;
      auto names = r.Hostlist("names");
      if (!names.ok()) return names.status();
      auto type = r.String("type", true);
      if (!type.ok()) return type.status();
      // Types are defined before use, so that a spec reads top to bottom.
      if (!type_lines.contains(*type)) {
        return LineError(table.Find("type")->line, absl::StrCat("unknown node_type \"", *type, "\"",
                                                                 type_lines.empty() ? " (define [[node_type]] first)" : ""));
      }
      for (const std::string& n : *names) {
        if (!node_names.insert(n).second) {
          return LineError(table.Find("names")->line, absl::StrCat("node ", n, " is defined twice"));
        }
      }
      spec.node_groups.push_back({*std::move(names), *std::move(type), table.line});
    } else if (table.name == "switch" || table.name == "nvlink_domain") {
      auto line = ConfLine(table);
      if (!line.ok()) return line.status();
      absl::StrAppend(&network_text, *line, "\n");
      network_tables.push_back(&table);
    } else {
      return LineError(table.line, absl::StrCat("unknown table [[", table.name,
                                                "]] (expected node_type, nodes, switch or nvlink_domain)"));
    }
  }
  if (node_names.empty()) return LineError(1, "the cluster has no nodes (add a [[nodes]] table)");
  auto network = ParseNetworkTopologyConf(network_text);
  if (!network.ok()) return MapNetworkError(network.status(), network_tables);
  if (absl::Status s = CheckNetworkNodes(*network, node_names, network_tables); !s.ok()) return s;
  spec.network = *std::move(network);
  return spec;
}

}  // namespace gpusched::sim
