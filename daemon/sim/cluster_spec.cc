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
#include "common/config/toml_table_reader.h"
#include "common/net/hostlist.h"

namespace gpusched::sim {
namespace {

absl::Status LineError(int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", what));
}

using config::TomlMember;
using config::TomlTableReader;
using config::TomlValue;

// One [[table]] of the spec, with what the TOML reader checks (unknown keys,
// types, ranges) plus the spec's own rules for names and hostlists.
class SpecTable {
 public:
  SpecTable(const TomlValue& table, const std::string& name, const std::vector<absl::string_view>& allowed)
      : reader_(table, "", absl::StrCat("[[", name, "]]")) {
    reader_.AllowOnly(allowed);
  }

  TomlTableReader& reader() { return reader_; }
  int LineOf(absl::string_view key) const { return reader_.LineOf(key); }

  std::string Required(absl::string_view key) {
    std::string s = reader_.RequiredString(key);
    if (reader_.Find(key) != nullptr && reader_.Find(key)->type == config::TomlType::kString && s.empty()) {
      reader_.Error(LineOf(key), absl::StrCat(key, " is empty"));
    }
    return s;
  }

  // A name that goes into a topology.conf line as it is.
  std::string Name(absl::string_view key) {
    std::string s = Required(key);
    if (s.find_first_of(" \t\"#=") != std::string::npos) {
      reader_.Error(LineOf(key), absl::StrCat(key, " \"", s, "\" must not contain spaces, quotes, '#' or '='"));
    }
    return s;
  }

  std::vector<std::string> Hostlist(absl::string_view key) {
    std::string s = Name(key);
    if (!reader_.ok()) return {};
    auto names = ExpandHostlist(s);
    if (!names.ok()) {
      reader_.Error(LineOf(key), absl::StrCat(key, ": ", names.status().message()));
      return {};
    }
    return *std::move(names);
  }

  bool ok() const { return reader_.ok(); }
  absl::Status status() const { return reader_.status(); }

 private:
  TomlTableReader reader_;
};

absl::StatusOr<NodeTypeSpec> ReadNodeType(const TomlValue& table) {
  SpecTable t(table, "node_type", {"name", "topology", "gpu_model", "gpu_memory_mb", "cpus", "memory_mb", "nic_gbps"});
  constexpr int64_t kBig = int64_t{1} << 40;
  NodeTypeSpec type;
  type.line = table.line;
  type.name = t.Name("name");
  type.topology = t.Required("topology");
  type.gpu_model = t.Required("gpu_model");
  type.gpu_memory_mb = t.reader().RequiredInt("gpu_memory_mb", 1, kBig);
  type.cpus = t.reader().RequiredInt("cpus", 1, 1'000'000);
  type.memory_mb = t.reader().RequiredInt("memory_mb", 1, kBig);
  type.nic_gbps = static_cast<int32_t>(t.reader().Int("nic_gbps", 0, 1'000'000).value_or(0));
  if (!t.ok()) return t.status();
  return type;
}

// A [[switch]] or [[nvlink_domain]] as one topology.conf line.
absl::StatusOr<std::string> ConfLine(const std::string& name, const TomlValue& table) {
  if (name == "nvlink_domain") {
    SpecTable t(table, name, {"name", "nodes"});
    std::string line = absl::StrCat("BlockName=", t.Name("name"), " Nodes=", t.Name("nodes"));
    if (!t.ok()) return t.status();
    return line;
  }
  SpecTable t(table, name, {"name", "nodes", "switches"});
  std::string line = absl::StrCat("SwitchName=", t.Name("name"));
  for (absl::string_view key : {"nodes", "switches"}) {
    if (table.Find(key) == nullptr) continue;
    absl::StrAppend(&line, key == "nodes" ? " Nodes=" : " Switches=", t.Name(key));
  }
  if (!t.ok()) return t.status();
  return line;
}

// The network parser numbers the lines of the text built here, one per
// table; `conf_line` back to the line of the table that made it (0 if none).
int TomlLineOf(int conf_line, const std::vector<const TomlValue*>& tables) {
  return conf_line >= 1 && conf_line <= static_cast<int>(tables.size()) ? tables[conf_line - 1]->line : 0;
}

// Rewrites every "line N" in a network parser message to the spec's line.
std::string MapLineNumbers(absl::string_view message, const std::vector<const TomlValue*>& tables) {
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

absl::Status MapNetworkError(const absl::Status& error, const std::vector<const TomlValue*>& tables) {
  absl::string_view message = error.message();
  absl::ConsumePrefix(&message, "network topology: ");
  return absl::InvalidArgumentError(MapLineNumbers(message, tables));
}

absl::Status CheckNetworkNodes(const NetworkTopologyConf& network, const std::set<std::string>& known,
                               const std::vector<const TomlValue*>& tables) {
  auto check = [&](const std::vector<std::string>& nodes, int conf_line, absl::string_view what) -> absl::Status {
    for (const std::string& node : nodes) {
      if (known.contains(node)) continue;
      return LineError(TomlLineOf(conf_line, tables),
                       absl::StrCat(what, " lists node ", node, ", which no [[nodes]] table defines"));
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

// The [[arrays]] of the top level, element by element in file order: a
// spec reads top to bottom (types before the nodes that use them), whatever
// the array each table belongs to.
struct SpecElement {
  std::string array;
  const TomlValue* table;
};

absl::StatusOr<std::vector<SpecElement>> ElementsInFileOrder(const TomlValue& root) {
  TomlTableReader top(root, "", "the top level");
  std::vector<SpecElement> elements;
  for (const TomlMember& member : root.members) {
    if (member.key == "name") continue;
    const bool known =
        member.key == "node_type" || member.key == "nodes" || member.key == "switch" || member.key == "nvlink_domain";
    if (member.value.is_array_of_tables()) {
      if (!known) {
        top.Error(
            member.value.items.front().line,
            absl::StrCat("unknown table [[", member.key, "]] (expected node_type, nodes, switch or nvlink_domain)"));
      }
      for (const TomlValue& item : member.value.items) elements.push_back({member.key, &item});
    } else if (member.value.type == config::TomlType::kTable) {
      top.Error(member.value.line, absl::StrCat("[", member.key, "] should be [[", member.key,
                                                "]] (node_type, nodes, switch and nvlink_domain repeat)"));
    } else {
      top.Error(member.line, absl::StrCat("unknown key ", member.key, " in the top level (expected name)"));
    }
  }
  if (!top.ok()) return top.status();
  std::stable_sort(elements.begin(), elements.end(),
                   [](const SpecElement& a, const SpecElement& b) { return a.table->line < b.table->line; });
  return elements;
}

}  // namespace

absl::StatusOr<ClusterSpec> ParseClusterSpec(absl::string_view text) {
  auto doc = config::ParseToml(text, "");
  if (!doc.ok()) return doc.status();
  ClusterSpec spec;
  TomlTableReader top(*doc, "", "the top level");
  spec.name = top.String("name").value_or("");
  if (!top.ok()) return top.status();
  auto elements = ElementsInFileOrder(*doc);
  if (!elements.ok()) return elements.status();

  std::map<std::string, int> type_lines;
  std::set<std::string> node_names;
  std::vector<const TomlValue*> network_tables;
  std::string network_text;
  for (const auto& [array, table] : *elements) {
    if (array == "node_type") {
      auto type = ReadNodeType(*table);
      if (!type.ok()) return type.status();
      if (auto [it, fresh] = type_lines.emplace(type->name, table->line); !fresh) {
        return LineError(table->line,
                         absl::StrCat("node_type ", type->name, " is defined twice (first on line ", it->second, ")"));
      }
      spec.node_types.push_back(*std::move(type));
    } else if (array == "nodes") {
      SpecTable t(*table, array, {"names", "type"});
      std::vector<std::string> names = t.Hostlist("names");
      std::string type = t.Required("type");
      if (!t.ok()) return t.status();
      // Types are defined before use, so that a spec reads top to bottom.
      if (!type_lines.contains(type)) {
        return LineError(t.LineOf("type"), absl::StrCat("unknown node_type \"", type, "\"",
                                                        type_lines.empty() ? " (define [[node_type]] first)" : ""));
      }
      for (const std::string& n : names) {
        if (!node_names.insert(n).second) {
          return LineError(t.LineOf("names"), absl::StrCat("node ", n, " is defined twice"));
        }
      }
      spec.node_groups.push_back({std::move(names), std::move(type), table->line});
    } else {  // switch, nvlink_domain
      auto line = ConfLine(array, *table);
      if (!line.ok()) return line.status();
      absl::StrAppend(&network_text, *line, "\n");
      network_tables.push_back(table);
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
