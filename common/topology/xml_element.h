#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace gpusched::topology {

// A minimal XML element tree, enough to write NCCL topology files: elements
// with attributes and child elements, no text content.
struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // in order
  std::vector<XmlElement> children;

  explicit XmlElement(std::string element_name) : name(std::move(element_name)) {}

  // Appends an attribute and returns *this, so that calls chain.
  XmlElement& Set(std::string key, std::string value);
  // Appends a child element and returns it. The reference is invalidated by
  // the next AddChild on this element.
  XmlElement& AddChild(std::string child_name);
};

// `value` with &, <, >, " and ' as entities, tab/newline/CR as character
// references and the other control bytes (which XML 1.0 cannot carry at all)
// as '?'.
std::string EscapeXmlAttribute(absl::string_view value);

// The element as text in the layout NCCL's own hand-written reader accepts:
// no XML declaration (NCCL cannot parse "<?xml ...?>"), attributes separated
// by exactly one space and double-quoted, a childless element as "<x .../>",
// indentation with spaces only (NCCL skips spaces and newlines between tags
// but not tabs), two per level, and "\n" after every tag.
std::string SerializeXml(const XmlElement& root);

}  // namespace gpusched::topology
