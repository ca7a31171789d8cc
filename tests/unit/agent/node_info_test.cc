#include "agent/node_info.h"

#include <catch2/catch.hpp>

#include "common/topology/nvidia_smi_topo.h"

using gpusched::agent::AgentOptions;
using gpusched::agent::DescribeNode;
using gpusched::agent::DiscoveredTopology;
namespace topology = gpusched::topology;
namespace v1 = gpusched::v1;

namespace {

DiscoveredTopology TwoGpus() {
  DiscoveredTopology discovered{topology::NodeTopology(2, 1), "fake", ""};
  discovered.topology.gpus()[0].uuid = "GPU-x";
  discovered.topology.SetGpuLink(0, 1, {topology::LinkKind::kNvLink, 4});
  discovered.topology.SetGpuLink(1, 0, {topology::LinkKind::kNvLink, 4});
  discovered.topology.nics()[0].name = "mlx5_0";
  discovered.topology.SetGpuNicLink(1, 0, {topology::LinkKind::kPix, 0});
  return discovered;
}

}  // namespace

TEST_CASE("the registered node: configured values win, the host fills the rest, the topology goes along") {
  AgentOptions options;
  options.node_name = "node-a";
  options.advertise_address = "10.0.0.7";
  options.labels = {{"rack", "r1"}, {"leaf", "l2"}, {"team", "vision"}};

  v1::NodeInfo node = DescribeNode(options, TwoGpus());
  CHECK(node.name() == "node-a");
  CHECK(node.address() == "10.0.0.7");
  CHECK(node.cpus() > 0);  // nobody knew: the host's own
  CHECK(node.memory_mb() > 0);
  REQUIRE(node.gpus_size() == 2);
  CHECK(node.gpus(0).uuid() == "GPU-x");
  CHECK(node.labels().at("team") == "vision");
  CHECK(node.agent_version() == "0.1.0");
  CHECK(node.topology().source() == "fake");
  CHECK(node.topology().network().rack() == "r1");
  CHECK(node.topology().network().leaf() == "l2");
  CHECK(node.topology().network().spine().empty());
  REQUIRE(node.topology().gpu_links_size() == 4);
  CHECK(node.topology().gpu_links(1).kind() == v1::LINK_KIND_NVLINK);
  CHECK(node.topology().gpu_links(1).nvlinks() == 4);
  REQUIRE(node.topology().gpu_nic_links_size() == 2);
  CHECK(node.topology().gpu_nic_links(1).kind() == v1::LINK_KIND_PIX);

  options.cpus = 8;
  options.memory_mb = 1024;
  node = DescribeNode(options, TwoGpus());
  CHECK(node.cpus() == 8);
  CHECK(node.memory_mb() == 1024);
}

TEST_CASE("CPU and memory totals come from NUMA nodes only when the source knew their memory") {
  AgentOptions options;
  DiscoveredTopology discovered = TwoGpus();
  discovered.topology.numa_nodes() = {{0, {0, 1, 2}, 1000}, {1, {3, 4, 5}, 2000}};
  v1::NodeInfo node = DescribeNode(options, discovered);
  CHECK(node.cpus() == 6);
  CHECK(node.memory_mb() == 3000);
  REQUIRE(node.topology().numa_nodes_size() == 2);
  CHECK(node.topology().numa_nodes(1).cpus_size() == 3);

  // topo -m lists only the CPUs near GPUs and no memory: the host's figures win.
  discovered.topology.numa_nodes() = {{0, {0}, 0}};
  node = DescribeNode(options, discovered);
  CHECK(node.memory_mb() > 0);
}

TEST_CASE("the NVLink domain: the label wins, else the clique all GPUs share") {
  AgentOptions options;
  DiscoveredTopology discovered = TwoGpus();
  for (auto& gpu : discovered.topology.gpus()) {
    gpu.fabric_cluster_uuid = "c0ffee";
    gpu.fabric_clique_id = 3;
  }
  CHECK(DescribeNode(options, discovered).topology().network().nvlink_domain() == "c0ffee/3");

  discovered.topology.gpus()[1].fabric_clique_id = 4;  // a split fabric is no domain
  CHECK(DescribeNode(options, discovered).topology().network().nvlink_domain().empty());

  options.labels = {{"nvlink-domain", "nvl72-a"}};
  CHECK(DescribeNode(options, discovered).topology().network().nvlink_domain() == "nvl72-a");
}
