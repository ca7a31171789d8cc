#include "common/config/toml_document.h"

#include <toml++/toml.h>

#include <algorithm>
#include <sstream>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace gpusched::config {
namespace {

int LineOf(const toml::source_region& region) {
  return static_cast<int>(std::max<toml::source_index>(region.begin.line, 1));
}

template <typename T>
std::string Printed(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

TomlValue Convert(const toml::node& node);

TomlValue ConvertTable(const toml::table& table) {
  TomlValue out;
  out.type = TomlType::kTable;
  out.line = LineOf(table.source());
  // toml++ keeps a table's keys sorted by name; settings readers report the
  // first problem in the file, so put them back in file order.
  std::vector<std::tuple<toml::source_index, toml::source_index, TomlMember>> members;
  for (auto&& [key, value] : table) {
    members.emplace_back(key.source().begin.line, key.source().begin.column,
                         TomlMember{std::string(key.str()), LineOf(key.source()), Convert(value)});
  }
  std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  for (auto& member : members) out.members.push_back(std::move(std::get<2>(member)));
  return out;
}

TomlValue Convert(const toml::node& node) {
  if (const toml::table* table = node.as_table()) return ConvertTable(*table);
  TomlValue out;
  out.line = LineOf(node.source());
  switch (node.type()) {
    case toml::node_type::array:
      out.type = TomlType::kArray;
      for (const toml::node& item : *node.as_array()) out.items.push_back(Convert(item));
      break;
    case toml::node_type::string:
      out.type = TomlType::kString;
      out.text = node.as_string()->get();
      break;
    case toml::node_type::integer:
      out.type = TomlType::kInteger;
      out.integer = node.as_integer()->get();
      break;
    case toml::node_type::floating_point:
      out.type = TomlType::kFloat;
      out.number = node.as_floating_point()->get();
      break;
    case toml::node_type::boolean:
      out.type = TomlType::kBoolean;
      out.boolean = node.as_boolean()->get();
      break;
    case toml::node_type::date:
      out.type = TomlType::kDate;
      out.text = Printed(node.as_date()->get());
      break;
    case toml::node_type::time:
      out.type = TomlType::kTime;
      out.text = Printed(node.as_time()->get());
      break;
    case toml::node_type::date_time:
      out.type = TomlType::kDateTime;
      out.text = Printed(node.as_date_time()->get());
      break;
    case toml::node_type::none:
    case toml::node_type::table: break;  // none never appears in a parsed document; tables are handled above
  }
  return out;
}

}  // namespace

absl::string_view TomlTypeName(TomlType type) {
  switch (type) {
    case TomlType::kString: return "a string";
    case TomlType::kInteger: return "an integer";
    case TomlType::kFloat: return "a float";
    case TomlType::kBoolean: return "a boolean";
    case TomlType::kDate: return "a date";
    case TomlType::kTime: return "a time";
    case TomlType::kDateTime: return "a date-time";
    case TomlType::kArray: return "an array";
    case TomlType::kTable: return "a table";
  }
  return "a value";
}

const TomlValue* TomlValue::Find(absl::string_view key) const {
  for (const TomlMember& member : members) {
    if (member.key == key) return &member.value;
  }
  return nullptr;
}

bool TomlValue::is_array_of_tables() const {
  return type == TomlType::kArray && !items.empty() &&
         std::all_of(items.begin(), items.end(), [](const TomlValue& item) { return item.type == TomlType::kTable; });
}

std::string TomlLocation(absl::string_view source, int line) {
  return source.empty() ? absl::StrCat("line ", line) : absl::StrCat(source, ":", line);
}

absl::StatusOr<TomlValue> ParseToml(absl::string_view text, absl::string_view source) {
  try {
    toml::table table =
        toml::parse(std::string_view(text.data(), text.size()), std::string_view(source.data(), source.size()));
    return ConvertTable(table);
  } catch (const toml::parse_error& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(TomlLocation(source, LineOf(error.source())), ": ", std::string(error.description())));
  }
}

}  // namespace gpusched::config
