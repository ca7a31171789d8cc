#pragma once

#include <cstddef>
#include <string>

// How the processes of a multi-node gpusched-nccl-probe run agree on one
// ncclUniqueId: the process holding rank 0 listens on a TCP port and hands the
// bytes to whoever connects. Plain C++ and POSIX sockets, so that the probe
// needs nothing but CUDA and NCCL. Functions return an error message, empty
// on success. None has a timeout of its own: the probe's --timeout-s alarm
// ends any wait, saying what it was waiting for.

namespace gpusched::agent {

// Listens on `port` on all addresses and serves `payload` from a background
// thread to every connection, until the process exits.
std::string ServeRendezvous(int port, const std::string& payload);

// Connects to host:port, retrying while nobody listens yet (rank 0 may start
// later), and reads the `size` bytes rank 0 serves.
std::string FetchRendezvous(const std::string& host, int port, size_t size, std::string* payload);

}  // namespace gpusched::agent
