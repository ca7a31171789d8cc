#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace gpusched::testing {

inline std::string TopoFixturePath(const std::string& name) {
  return std::string(GPUSCHED_FIXTURES_DIR) + "/topo/" + name;
}

// The whole file, or "" when it cannot be read (the caller REQUIREs non-empty).
inline std::string ReadTopoFixture(const std::string& name) {
  std::ifstream in(TopoFixturePath(name), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gpusched::testing
