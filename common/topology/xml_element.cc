#include "common/topology/xml_element.h"

#include "absl/strings/str_cat.h"

namespace gpusched::topology {
namespace {

void Serialize(const XmlElement& e, int depth, std::string* out) {
  const std::string indent(2 * depth, ' ');
  absl::StrAppend(out, indent, "<", e.name);
  for (const auto& [key, value] : e.attributes) {
    absl::StrAppend(out, " ", key, "=\"", EscapeXmlAttribute(value), "\"");
  }
  if (e.children.empty()) {
    absl::StrAppend(out, "/>\n");
    return;
  }
  absl::StrAppend(out, ">\n");
  for (const XmlElement& child : e.children) Serialize(child, depth + 1, out);
  absl::StrAppend(out, indent, "</", e.name, ">\n");
}

}  // namespace

XmlElement& XmlElement::Set(std::string key, std::string value) {
  attributes.emplace_back(std::move(key), std::move(value));
  return *this;
}

XmlElement& XmlElement::AddChild(std::string child_name) { return children.emplace_back(std::move(child_name)); }

std::string EscapeXmlAttribute(absl::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += "&#x9;"; break;
      case '\n': out += "&#xA;"; break;
      case '\r': out += "&#xD;"; break;
      default: out += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
    }
  }
  return out;
}

std::string SerializeXml(const XmlElement& root) {
  std::string out;
  Serialize(root, 0, &out);
  return out;
}

}  // namespace gpusched::topology
