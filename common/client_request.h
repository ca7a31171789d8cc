#pragma once

#include <cstdint>
#include <string>

namespace gpusched {

// A submit's retry key (SubmitJobRequest.client_request_id) as the store
// keeps it and the scheduler remembers it: an id is its user's own, so that
// two users who pick the same id make two jobs, and one user cannot learn of
// or stand in for another's submit by guessing it.
struct ClientRequest {
  std::string user;
  std::string request_id;
  uint64_t job_id = 0;

  friend bool operator==(const ClientRequest&, const ClientRequest&) = default;
};

}  // namespace gpusched
