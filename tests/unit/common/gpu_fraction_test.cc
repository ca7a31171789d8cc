// How much of a GPU a job holds, as fair share, limits and history count it.
#include "common/gpu_fraction.h"

#include <catch2/catch.hpp>

using namespace gpusched;

namespace {

v1::Resources Resources(int64_t gpus, int share_milli = 0, const std::string& mig = "") {
  v1::Resources r;
  r.set_gpus(gpus);
  r.set_gpu_share_milli(share_milli);
  r.set_mig_profile(mig);
  return r;
}

}  // namespace

TEST_CASE("a MIG profile's slices are its GPU instance's, with or without a smaller compute instance") {
  CHECK(MigSlicesOf("3g.40gb") == 3);
  CHECK(MigSlicesOf("1c.3g.40gb") == 3);
  CHECK(MigSlicesOf("7g.80gb") == 7);
  CHECK(MigSlicesOf("1g.10gb+me") == 1);
  CHECK(MigSlicesOf("9g.90gb") == 0);
  CHECK(MigSlicesOf("big") == 0);
  CHECK(MigSlicesOf("") == 0);
}

TEST_CASE("held GPUs: whole GPUs, a share's fraction of each, a MIG instance's sevenths") {
  CHECK(HeldGpuMilli(Resources(2)) == 2000);
  CHECK(HeldGpuMilli(Resources(2, 300)) == 600);
  CHECK(HeldGpuMilli(Resources(1, 0, "3g.40gb")) == 428);
  CHECK(HeldGpuMilli(Resources(7, 0, "1g.10gb")) == 1000);
  // A profile that does not say its slices counts as a whole GPU.
  CHECK(HeldGpuMilli(Resources(1, 0, "custom")) == 1000);
  v1::Resources gang;
  gang.set_nodes(2);
  gang.set_gpus_per_node(4);
  CHECK(HeldGpuMilli(gang) == 8000);
  CHECK(HeldGpus(Resources(1, 125)) == Approx(0.125));
}
