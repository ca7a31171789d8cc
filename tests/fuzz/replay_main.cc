// Runs a fuzz target's entry point over saved inputs: every file named on the
// command line, and every file in each folder named. Exits non-zero when an
// argument cannot be read or no input was found; a crash is a crash.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.h"

namespace {

bool Replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::cerr << "cannot read " << file << "\n";
    return false;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int inputs = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& file : files) {
        ok = Replay(file) && ok;
        ++inputs;
      }
    } else {
      ok = Replay(arg) && ok;
      ++inputs;
    }
  }
  std::cout << argv[0] << ": replayed " << inputs << " inputs\n";
  if (inputs == 0) {
    std::cerr << "no inputs: name files or folders of saved fuzz inputs\n";
    return 2;
  }
  return ok ? 0 : 1;
}
