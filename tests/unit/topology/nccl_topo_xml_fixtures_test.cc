// WriteNcclTopoXml on models parsed from the real `nvidia-smi topo -m`
// outputs has the structure of the real NCCL topology files in
// shared/fixtures/nccl-topo, and places devices as the model's links say.
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>

#include "common/topology/nccl_topo_xml.h"
#include "common/topology/nvidia_smi_topo.h"
#include "fixture_util.h"
#include "nccl_xml_test_util.h"
#include "xml_test_reader.h"

using namespace gpusched::topology;
using namespace gpusched::testing;

namespace {

struct Fixture {
  const char* file;
  bool nvswitch;  // the machine's NVLinks go through NVSwitch
};

const Fixture kFixtures[] = {{"aws-g6e.12xlarge-4xL40S.txt", false},
                             {"aws-p4d.24xlarge.txt", true},
                             {"aws-p5.48xlarge.txt", true},
                             {"dgx-a100.txt", true},
                             {"dgx1-v100.txt", false},
                             {"hgx-h200-8gpu-12nic.txt", true},
                             {"pcie-8x-rtx4090.txt", false}};

NodeTopology Model(const Fixture& f) {
  std::string text = ReadTopoFixture(f.file);
  INFO("fixture " << TopoFixturePath(f.file) << " (shared/ must sit beside the repository)");
  REQUIRE_FALSE(text.empty());
  absl::StatusOr<NodeTopology> topo = ParseNvidiaSmiTopo(text);
  INFO(topo.status().ToString());
  REQUIRE(topo.ok());
  topo->set_nvswitch(f.nvswitch);
  return *std::move(topo);
}

NodeTopology Model(const char* file) {
  for (const Fixture& f : kFixtures) {
    if (std::string(f.file) == file) return Model(f);
  }
  FAIL("no fixture " << file);
  return {};
}

XmlNode Read(const std::string& xml) {
  XmlReadResult r = ReadXml(xml);
  INFO(r.error << "\n" << xml);
  REQUIRE(r.root.has_value());
  return *std::move(r.root);
}

XmlNode WriteAndRead(const NodeTopology& topo) { return Read(WriteNcclTopoXml(topo)); }

std::map<std::string, std::set<std::string>> RealAttributeNames() {
  std::map<std::string, std::set<std::string>> names;
  for (const std::string& f : RealNcclTopoFiles()) {
    XmlReadResult r = ReadXml(ReadNcclTopoFixture(f));
    if (r.root.has_value()) CollectAttributeNames(*r.root, &names);
  }
  return names;
}

int CountKind(const XmlNode& node, const std::string& kind) {
  int n = ElementKind(node) == kind ? 1 : 0;
  for (const XmlNode& c : node.children) n += CountKind(c, kind);
  return n;
}

}  // namespace

TEST_CASE("the test reader reads every real NCCL topology file, and they follow NCCL's grammar") {
  for (const std::string& f : RealNcclTopoFiles()) {
    INFO(f);
    std::string text = ReadNcclTopoFixture(f);
    REQUIRE_FALSE(text.empty());
    XmlNode root = Read(text);
    CHECK(root.name == "system");
    CHECK(root.AttrOr("version") == "1");
    CHECK(NcclGrammarViolation(root) == "");
    CHECK_FALSE(Children(root, "cpu").empty());
  }
  // The graph file is XML too, of another shape.
  XmlNode graphs = Read(ReadNcclTopoFixture("azure-ncv4-graph.xml"));
  CHECK(graphs.name == "graphs");
  CHECK(graphs.children.size() == 3);

  // The reader sees what the files hold, so the comparisons below mean
  // something: p4d has 2 CPUs, 4 switches, 8 GPUs and 4 NICs.
  XmlNode p4d = Read(ReadNcclTopoFixture("aws-p4d-24xl-topo.xml"));
  CHECK(Children(p4d, "cpu").size() == 2);
  CHECK(CountKind(p4d, "pci(bridge)") == 4);
  CHECK(CountKind(p4d, "pci(gpu)") == 8);
  CHECK(CountKind(p4d, "pci(nic)") == 4);
  CHECK(Children(p4d, "cpu")[1]->AttrOr("affinity") == "ffffff00,0000ffff,ff000000");
  XmlNode ncv4 = Read(ReadNcclTopoFixture("azure-ncv4-topo.xml"));
  CHECK(CountKind(ncv4, "nvlink") == 4);
  CHECK(CountKind(ncv4, "net") == 1);
}

TEST_CASE("the test reader rejects broken XML") {
  CHECK_FALSE(ReadXml("<system><cpu></system>").root.has_value());
  CHECK_FALSE(ReadXml("<system a=\"1\" a=\"2\"/>").root.has_value());
  CHECK_FALSE(ReadXml("<system a=1/>").root.has_value());
  CHECK_FALSE(ReadXml("<system/><system/>").root.has_value());
  CHECK_FALSE(ReadXml("<system>text</system>").root.has_value());
  CHECK_FALSE(ReadXml("<system a=\"&bogus;\"/>").root.has_value());
  CHECK_FALSE(ReadXml("<!-- open").root.has_value());
  XmlReadResult ok = ReadXml("<?xml version=\"1.0\"?>\n<!-- c --><a x='&lt;&#x41;&#66;&amp;'><b/></a>\n");
  REQUIRE(ok.root.has_value());
  CHECK(ok.root->AttrOr("x") == "<AB&");
  CHECK(ok.root->children.size() == 1);
}

TEST_CASE("every fixture's file has the real files' shape and holds every device once") {
  const std::map<std::string, std::set<std::string>> real = RealAttributeNames();
  for (const Fixture& f : kFixtures) {
    INFO(f.file);
    NodeTopology topo = Model(f);
    XmlNode root = WriteAndRead(topo);
    CHECK(root.name == "system");
    CHECK(root.attributes == decltype(root.attributes){{"version", "1"}});
    CHECK(NcclGrammarViolation(root) == "");

    // Only attribute names that the real files use for the same kind.
    std::map<std::string, std::set<std::string>> ours;
    CollectAttributeNames(root, &ours);
    for (const auto& [kind, names] : ours) {
      INFO("kind " << kind);
      REQUIRE(real.count(kind) == 1);
      for (const std::string& n : names) {
        INFO("attribute " << n);
        CHECK(real.at(kind).count(n) == 1);
      }
    }

    DevicePaths d = FindDevices(root);
    REQUIRE(d.gpus.size() == static_cast<size_t>(topo.num_gpus()));
    for (int g = 0; g < topo.num_gpus(); ++g) {
      INFO("GPU" << g);
      REQUIRE(d.gpus[g].size() == 1);
      const XmlNode& pci = *d.gpus[g][0].back();
      CHECK(ElementKind(pci) == "pci(gpu)");
      const XmlNode& gpu = *Children(pci, "gpu").at(0);
      CHECK(gpu.AttrOr("rank") == std::to_string(g));
      const XmlNode* cpu = CpuOf(d.gpus[g][0]);
      REQUIRE(cpu != nullptr);
      if (topo.gpus()[g].numa_node >= 0) {
        CHECK(cpu->AttrOr("numaid") == std::to_string(topo.gpus()[g].numa_node));
      }
    }
    REQUIRE(d.nics.size() == static_cast<size_t>(topo.num_nics()));
    for (int n = 0; n < topo.num_nics(); ++n) {
      INFO("NIC" << n);
      REQUIRE(d.nics[n].size() == 1);
      CHECK(ElementKind(*d.nics[n][0].back()) == "pci(nic)");
    }

    // Bus ids are unique, as NCCL needs them to be.
    std::set<std::string> bus_ids;
    int pci_count = 0;
    for (const XmlPath& p : AllPaths(root)) {
      if (p.back()->name != "pci") continue;
      ++pci_count;
      bus_ids.insert(p.back()->AttrOr("busid"));
    }
    CHECK(bus_ids.size() == static_cast<size_t>(pci_count));
  }
}

TEST_CASE("devices share a bridge exactly as their PCIe link classes say") {
  for (const Fixture& f : kFixtures) {
    INFO(f.file);
    NodeTopology topo = Model(f);
    const XmlNode root = WriteAndRead(topo);
    DevicePaths d = FindDevices(root);
    // Devices 0..num_gpus-1 are the GPUs, the rest the NICs.
    auto path = [&](bool gpu, int i) { return (gpu ? d.gpus : d.nics).at(i).at(0); };
    const int total = topo.num_gpus() + topo.num_nics();
    for (int a = 0; a < total; ++a) {
      for (int b = a + 1; b < total; ++b) {
        const bool a_gpu = a < topo.num_gpus(), b_gpu = b < topo.num_gpus();
        const int ai = a_gpu ? a : a - topo.num_gpus();
        const int bi = b_gpu ? b : b - topo.num_gpus();
        Link l = a_gpu && b_gpu     ? topo.GpuLink(ai, bi)
                 : !a_gpu && !b_gpu ? topo.NicLink(ai, bi)
                 : a_gpu            ? topo.GpuNicLink(ai, bi)
                                    : topo.GpuNicLink(bi, ai);
        if (l.kind == LinkKind::kNvLink) continue;  // says nothing about PCIe
        XmlPath pa = path(a_gpu, ai), pb = path(b_gpu, bi);
        INFO((a_gpu ? "GPU" : "NIC") << ai << "-" << (b_gpu ? "GPU" : "NIC") << bi << " " << FormatLink(l));
        switch (l.kind) {
          case LinkKind::kPix:
            CHECK(ParentBridge(pa) != nullptr);
            CHECK(ParentBridge(pa) == ParentBridge(pb));
            break;
          case LinkKind::kPxb:
            CHECK(ParentBridge(pa) != ParentBridge(pb));
            CHECK(ShareBridge(pa, pb));
            break;
          default:
            CHECK_FALSE(ShareBridge(pa, pb));
            if (l.kind != LinkKind::kSys) CHECK(CpuOf(pa) == CpuOf(pb));
        }
      }
    }
  }
}

namespace {

// GPU index -> {peer GPU index -> count} of a GPU's <nvlink> to GPU peers,
// the peers found by bus id.
std::map<int, std::map<int, int>> PeerNvLinks(const XmlNode& root) {
  DevicePaths d = FindDevices(root);
  std::map<std::string, int> gpu_by_bus;
  for (const auto& [g, paths] : d.gpus) gpu_by_bus[paths.at(0).back()->AttrOr("busid")] = g;
  std::map<int, std::map<int, int>> out;
  for (const auto& [g, paths] : d.gpus) {
    out[g];
    const XmlNode& gpu = *Children(*paths.at(0).back(), "gpu").at(0);
    for (const XmlNode* l : Children(gpu, "nvlink")) {
      CHECK(l->AttrOr("tclass") == "0x030200");
      REQUIRE(gpu_by_bus.count(l->AttrOr("target")) == 1);
      out[g][gpu_by_bus[l->AttrOr("target")]] = std::stoi(l->AttrOr("count"));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("DGX-1: one <nvlink> per NVLinked peer with its NV1/NV2 count") {
  NodeTopology topo = Model("dgx1-v100.txt");
  std::map<int, std::map<int, int>> links = PeerNvLinks(WriteAndRead(topo));
  CHECK(links[0] == std::map<int, int>{{1, 1}, {2, 1}, {3, 2}, {4, 2}});
  CHECK(links[5] == std::map<int, int>{{1, 2}, {4, 1}, {6, 2}, {7, 1}});
  for (int g = 0; g < 8; ++g) {
    for (int p = 0; p < 8; ++p) {
      INFO("GPU" << g << "-GPU" << p);
      Link l = topo.GpuLink(g, p);
      int expected = l.kind == LinkKind::kNvLink ? l.nvlinks : 0;
      CHECK((links[g].count(p) ? links[g][p] : 0) == expected);
    }
  }
}

TEST_CASE("NVSwitch machines: one <nvlink> to the switch per GPU with its NV<n>") {
  const std::pair<const char*, int> kMachines[] = {
      {"dgx-a100.txt", 12}, {"aws-p4d.24xlarge.txt", 12}, {"aws-p5.48xlarge.txt", 18}, {"hgx-h200-8gpu-12nic.txt", 18}};
  for (const auto& [file, count] : kMachines) {
    INFO(file);
    const XmlNode root = WriteAndRead(Model(file));
    DevicePaths d = FindDevices(root);
    REQUIRE(d.gpus.size() == 8);
    for (const auto& [g, paths] : d.gpus) {
      INFO("GPU" << g);
      const XmlNode& gpu = *Children(*paths.at(0).back(), "gpu").at(0);
      std::vector<const XmlNode*> nvlinks = Children(gpu, "nvlink");
      REQUIRE(nvlinks.size() == 1);
      CHECK(nvlinks[0]->AttrOr("tclass") == "0x068000");
      CHECK(nvlinks[0]->AttrOr("count") == std::to_string(count));
      CHECK(nvlinks[0]->AttrOr("target") == "fffc:ff:00.0");
    }
  }
}

TEST_CASE("PCIe-only machines have no <nvlink>") {
  const std::pair<const char*, int> kMachines[] = {{"aws-g6e.12xlarge-4xL40S.txt", 4}, {"pcie-8x-rtx4090.txt", 8}};
  for (const auto& [file, gpus] : kMachines) {
    INFO(file);
    XmlNode root = WriteAndRead(Model(file));
    CHECK(CountKind(root, "nvlink") == 0);
    CHECK(CountKind(root, "pci(gpu)") == gpus);
  }
}

TEST_CASE("DGX A100: 4 NUMA CPUs plus the unknown one for the storage NICs") {
  NodeTopology topo = Model("dgx-a100.txt");
  XmlNode root = WriteAndRead(topo);
  std::vector<const XmlNode*> cpus = Children(root, "cpu");
  REQUIRE(cpus.size() == 5);
  std::vector<std::string> ids;
  for (const XmlNode* c : cpus) ids.push_back(c->AttrOr("numaid"));
  CHECK(ids == std::vector<std::string>{"1", "3", "5", "7", "-1"});
  // CPUs 48-63 (word 1) and 176-191 (word 5) over 8 words, the node's
  // highest CPU being 255.
  CHECK(cpus[1]->AttrOr("affinity") == "00000000,00000000,ffff0000,00000000,00000000,00000000,ffff0000,00000000");
  CHECK(cpus[4]->Attr("affinity") == nullptr);

  // GPU0, GPU1, mlx5_0 and mlx5_1 are all PXB to each other: one top bridge,
  // each device in a bridge of its own below it.
  const std::vector<const XmlNode*> top = Children(*cpus[1], "pci");
  REQUIRE(top.size() == 1);
  CHECK(ElementKind(*top[0]) == "pci(bridge)");
  REQUIRE(top[0]->children.size() == 4);
  for (const XmlNode& sub : top[0]->children) {
    CHECK(ElementKind(sub) == "pci(bridge)");
    CHECK(sub.children.size() == 1);
  }
  // The dual-port NICs mlx5_4/5 and mlx5_10/11 (PIX to each other, SYS to
  // every GPU): a bridge each under the unknown CPU.
  const std::vector<const XmlNode*> storage = Children(*cpus[4], "pci");
  REQUIRE(storage.size() == 2);
  auto net_name = [](const XmlNode& pci) { return Children(*Children(pci, "nic").at(0), "net").at(0)->AttrOr("name"); };
  REQUIRE(storage[0]->children.size() == 2);
  CHECK(net_name(storage[0]->children[0]) == "mlx5_4");
  CHECK(net_name(storage[0]->children[1]) == "mlx5_5");
  CHECK(storage[0]->children[1].AttrOr("class") == "0x020700");
  REQUIRE(storage[1]->children.size() == 2);
  CHECK(net_name(storage[1]->children[0]) == "mlx5_10");
  CHECK(net_name(storage[1]->children[1]) == "mlx5_11");
}

TEST_CASE("DGX-1: CPUs from the two affinity groups; GPU pairs share a bridge with their NIC") {
  NodeTopology topo = Model("dgx1-v100.txt");
  XmlNode root = WriteAndRead(topo);
  std::vector<const XmlNode*> cpus = Children(root, "cpu");
  REQUIRE(cpus.size() == 2);
  CHECK(cpus[0]->AttrOr("numaid") == "0");
  CHECK(cpus[0]->AttrOr("affinity") == "00000000,0fffff00,000fffff");  // 0-19,40-59
  CHECK(cpus[1]->AttrOr("numaid") == "1");
  CHECK(cpus[1]->AttrOr("affinity") == "0000ffff,f00000ff,fff00000");  // 20-39,60-79
  DevicePaths d = FindDevices(root);
  const XmlNode* bridge = ParentBridge(d.gpus[0][0]);
  REQUIRE(bridge != nullptr);
  CHECK(bridge->children.size() == 3);  // GPU0, GPU1, mlx5_0
  CHECK(ParentBridge(d.gpus[1][0]) == bridge);
  CHECK(ParentBridge(d.nics[*topo.FindNic("mlx5_0")][0]) == bridge);
  CHECK(CpuOf(d.gpus[7][0]) == cpus[1]);
  CHECK(CpuOf(d.nics[*topo.FindNic("mlx5_3")][0]) == cpus[1]);
}

TEST_CASE("p4d.24xlarge: same shape as AWS's own topology file once the EFA NICs are known") {
  // topo -m on p4d shows neither the EFA devices nor the PCIe switches (the
  // GPUs are NV12 to each other). AWS's file says each switch holds GPUs 2k,
  // 2k+1 and EFA k; with those NICs added to the model as PIX, the writer
  // rebuilds the same tree.
  NodeTopology parsed = Model("aws-p4d.24xlarge.txt");
  NodeTopology topo(8, 4);
  for (int g = 0; g < 8; ++g) {
    topo.gpus()[g] = parsed.gpus()[g];
    for (int p = 0; p < 8; ++p) topo.SetGpuLink(g, p, parsed.GpuLink(g, p));
  }
  topo.numa_nodes() = parsed.numa_nodes();
  topo.set_nvswitch(true);
  for (int n = 0; n < 4; ++n) {
    topo.nics()[n].name = topo.nics()[n].device = "rdmap" + std::to_string(16 * (n + 1)) + "s27";
    topo.nics()[n].numa_node = n / 2;
    for (int g = 0; g < 8; ++g) {
      topo.SetGpuNicLink(g, n,
                         Link{g / 2 == n       ? LinkKind::kPix
                              : g / 4 == n / 2 ? LinkKind::kNode
                                               : LinkKind::kSys,
                              0});
    }
    for (int m = 0; m < 4; ++m) {
      if (m != n) topo.SetNicLink(n, m, Link{n / 2 == m / 2 ? LinkKind::kNode : LinkKind::kSys, 0});
    }
  }

  // cpu -> bridges -> sorted device classes ("gpu"/"nic"), and affinities.
  using Shape = std::vector<std::vector<std::multiset<std::string>>>;
  auto shape = [](const XmlNode& root, std::vector<std::string>* affinities) {
    Shape s;
    for (const XmlNode* cpu : Children(root, "cpu")) {
      affinities->push_back(cpu->AttrOr("affinity"));
      std::vector<std::multiset<std::string>>& bridges = s.emplace_back();
      for (const XmlNode* b : Children(*cpu, "pci")) {
        REQUIRE(ElementKind(*b) == "pci(bridge)");
        std::multiset<std::string>& devs = bridges.emplace_back();
        for (const XmlNode& dev : b->children) devs.insert(ElementKind(dev));
      }
    }
    return s;
  };
  std::vector<std::string> real_affinity, our_affinity;
  Shape real = shape(Read(ReadNcclTopoFixture("aws-p4d-24xl-topo.xml")), &real_affinity);
  XmlNode ours_root = WriteAndRead(topo);
  Shape ours = shape(ours_root, &our_affinity);
  CHECK(ours == real);
  CHECK(our_affinity == real_affinity);
  // And the GPUs pair up per switch as in AWS's comments (GPU 0, 1 | 2, 3 ...).
  DevicePaths d = FindDevices(ours_root);
  for (int g = 0; g < 8; g += 2) {
    INFO("GPU" << g);
    CHECK(ParentBridge(d.gpus[g][0]) == ParentBridge(d.gpus[g + 1][0]));
    CHECK(ParentBridge(d.nics[g / 2][0]) == ParentBridge(d.gpus[g][0]));
  }
  CHECK(ParentBridge(d.gpus[1][0]) != ParentBridge(d.gpus[2][0]));
}

TEST_CASE("g6e: one NUMA node, four GPUs straight under the CPU") {
  XmlNode root = WriteAndRead(Model("aws-g6e.12xlarge-4xL40S.txt"));
  std::vector<const XmlNode*> cpus = Children(root, "cpu");
  REQUIRE(cpus.size() == 1);
  CHECK(cpus[0]->AttrOr("numaid") == "0");
  CHECK(cpus[0]->AttrOr("affinity") == "0000ffff,ffffffff");  // 0-47
  CHECK(Children(*cpus[0], "pci").size() == 4);
  CHECK(CountKind(root, "pci(bridge)") == 0);
}

TEST_CASE("HGX H200: each GPU two bridges away from its NIC; the dual-port NICs under one") {
  const XmlNode root = WriteAndRead(Model("hgx-h200-8gpu-12nic.txt"));
  DevicePaths d = FindDevices(root);
  CHECK(ShareBridge(d.gpus[0][0], d.nics[0][0]));
  CHECK(ParentBridge(d.gpus[0][0]) != ParentBridge(d.nics[0][0]));
  CHECK(ParentBridge(d.nics[1][0]) == ParentBridge(d.nics[2][0]));
  CHECK(CpuOf(d.nics[1][0])->AttrOr("numaid") == "0");
  CHECK(CpuOf(d.nics[11][0])->AttrOr("numaid") == "1");
  CHECK(Children(*d.nics[3][0].back(), "nic").at(0)->children.at(0).AttrOr("name") == "mlx5_3");
}
