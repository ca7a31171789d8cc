#pragma once

#include <optional>
#include <string>

namespace gpusched::agent {

// The whole of a small file (a /proc entry, a shim's exits file, the
// ledger), read with plain open/read: nullopt when it cannot be opened or
// read. The runner reads several per job; an ifstream costs many times the
// system calls' own time.
std::optional<std::string> ReadSmallFile(const std::string& path);

}  // namespace gpusched::agent
