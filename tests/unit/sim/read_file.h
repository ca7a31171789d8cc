#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

namespace gpusched::sim::testing {

// The whole file, byte for byte; the test fails when it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace gpusched::sim::testing
