#pragma once

// Structural views of NCCL topology XML trees (read with xml_test_reader.h),
// shared by the writer's tests.

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "xml_test_reader.h"

namespace gpusched::testing {

inline std::string ReadNcclTopoFixture(const std::string& name) {
  std::ifstream in(std::string(GPUSCHED_FIXTURES_DIR) + "/nccl-topo/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The NCCL_TOPO_FILE examples in shared/fixtures/nccl-topo (the graph file
// there is another format).
inline const std::vector<std::string>& RealNcclTopoFiles() {
  static const std::vector<std::string> kFiles = {
      "aws-g5.48xl-topo.xml", "aws-p4d-24xl-topo.xml", "aws-p4de-24xl-topo.xml", "azure-ncv4-topo.xml",
      "azure-ndv2-topo.xml",  "azure-ndv4-topo.xml",   "azure-ndv5-topo.xml"};
  return kFiles;
}

// What NCCL's loader accepts below each element (ncclTopoXmlLoad* in xml.cc).
inline std::string NcclGrammarViolation(const XmlNode& node) {
  static const std::map<std::string, std::set<std::string>> kAllowed = {
      {"system", {"cpu"}}, {"cpu", {"pci", "nic"}}, {"pci", {"pci", "gpu", "nic"}},
      {"gpu", {"nvlink"}}, {"nic", {"net"}},        {"nvlink", {}},
      {"net", {}}};
  auto it = kAllowed.find(node.name);
  if (it == kAllowed.end()) return "unexpected element <" + node.name + ">";
  for (const XmlNode& child : node.children) {
    if (it->second.count(child.name) == 0) {
      return "<" + child.name + "> inside <" + node.name + ">";
    }
    std::string why = NcclGrammarViolation(child);
    if (!why.empty()) return why;
  }
  return "";
}

// "pci(bridge)", "pci(gpu)", "pci(nic)" or "pci" by class, else the element
// name: the kinds whose attribute sets the tests compare.
inline std::string ElementKind(const XmlNode& node) {
  if (node.name != "pci") return node.name;
  std::string cls = node.AttrOr("class");
  if (cls == "0x060400") return "pci(bridge)";
  if (cls.rfind("0x03", 0) == 0) return "pci(gpu)";
  if (cls.rfind("0x02", 0) == 0) return "pci(nic)";
  return "pci";
}

// kind -> attribute names used anywhere below (and at) `node`.
inline void CollectAttributeNames(const XmlNode& node, std::map<std::string, std::set<std::string>>* out) {
  std::set<std::string>& names = (*out)[ElementKind(node)];
  for (const auto& [key, value] : node.attributes) names.insert(key);
  for (const XmlNode& child : node.children) CollectAttributeNames(child, out);
}

// Every element with its chain of ancestors (root first, the element last).
using XmlPath = std::vector<const XmlNode*>;
inline void CollectPaths(const XmlNode& node, XmlPath* stack, std::vector<XmlPath>* out) {
  stack->push_back(&node);
  out->push_back(*stack);
  for (const XmlNode& child : node.children) CollectPaths(child, stack, out);
  stack->pop_back();
}
inline std::vector<XmlPath> AllPaths(const XmlNode& root) {
  XmlPath stack;
  std::vector<XmlPath> out;
  CollectPaths(root, &stack, &out);
  return out;
}

// The <pci> element of each GPU (by <gpu dev>) and of each NIC (by <net dev>),
// as paths from the root.
struct DevicePaths {
  std::map<int, std::vector<XmlPath>> gpus;  // a vector to catch duplicates
  std::map<int, std::vector<XmlPath>> nics;
};
inline DevicePaths FindDevices(const XmlNode& root) {
  DevicePaths d;
  for (const XmlPath& p : AllPaths(root)) {
    const XmlNode& e = *p.back();
    if (e.name == "gpu") {
      d.gpus[std::stoi(e.AttrOr("dev", "-1"))].push_back(XmlPath(p.begin(), p.end() - 1));
    } else if (e.name == "net") {
      d.nics[std::stoi(e.AttrOr("dev", "-1"))].push_back(XmlPath(p.begin(), p.end() - 2));
    }
  }
  return d;
}

// The <cpu> on a path (nullptr when none).
inline const XmlNode* CpuOf(const XmlPath& p) {
  for (const XmlNode* e : p) {
    if (e->name == "cpu") return e;
  }
  return nullptr;
}

// The nearest PCI bridge above a device's <pci> (nullptr when it hangs off
// the CPU directly).
inline const XmlNode* ParentBridge(const XmlPath& device_pci) {
  if (device_pci.size() < 2) return nullptr;
  const XmlNode* parent = device_pci[device_pci.size() - 2];
  return ElementKind(*parent) == "pci(bridge)" ? parent : nullptr;
}

// Whether two device <pci> paths meet below a bridge, i.e. the PCIe path
// between them stays inside switches.
inline bool ShareBridge(const XmlPath& a, const XmlPath& b) {
  for (size_t i = 0; i + 1 < a.size() && i + 1 < b.size() && a[i] == b[i]; ++i) {
    if (ElementKind(*a[i]) == "pci(bridge)") return true;
  }
  return false;
}

// The elements named `name` directly inside `node`.
inline std::vector<const XmlNode*> Children(const XmlNode& node, const std::string& name) {
  std::vector<const XmlNode*> out;
  for (const XmlNode& c : node.children) {
    if (c.name == name) out.push_back(&c);
  }
  return out;
}

}  // namespace gpusched::testing
