#include "daemon/server/job_privacy.h"

namespace gpusched::server {

void HideDetailsUnlessOwner(const Caller& viewer, v1::Job& job) {
  if (viewer.MayActOnJobOf(job.spec().user())) return;
  v1::JobSpec& spec = *job.mutable_spec();
  spec.clear_argv();
  spec.clear_script();
  spec.clear_env();
  spec.clear_workdir();
  // One namespace for all users: shown, it could be taken by someone else first.
  job.clear_client_request_id();
  job.set_details_hidden(true);
}

}  // namespace gpusched::server
