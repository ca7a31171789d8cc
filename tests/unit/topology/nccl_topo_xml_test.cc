// WriteNcclTopoXml, byte for byte on small hand-built models, and its parts:
// cpumap masks, PCI bus ids, XML escaping and the synthesized PCIe tree.
#include "common/topology/nccl_topo_xml.h"

#include <catch2/catch.hpp>

#include "common/topology/cpu_mask.h"
#include "common/topology/pci_bus_id.h"
#include "common/topology/pcie_tree.h"
#include "common/topology/xml_element.h"
#include "xml_test_reader.h"

using namespace gpusched::topology;

namespace {

// Two GPUs with NV4 between them and a NIC, all behind one PCIe switch on
// NUMA node 0, with everything the model can know filled in.
NodeTopology TwoGpusOneNic() {
  NodeTopology t(2, 1);
  for (int g = 0; g < 2; ++g) {
    GpuInfo& gpu = t.gpus()[g];
    gpu.pci_bus_id = g == 0 ? "00000000:07:00.0" : "00000000:0F:00.0";
    gpu.numa_node = 0;
    gpu.cpu_affinity = {0, 1, 2, 3};
    gpu.compute_capability = 80;
    gpu.pcie_generation = 4;
    gpu.pcie_width = 16;
    t.SetGpuNicLink(g, 0, Link{LinkKind::kPix, 0});
  }
  t.SetGpuLink(0, 1, Link{LinkKind::kNvLink, 4});
  t.SetGpuLink(1, 0, Link{LinkKind::kNvLink, 4});
  t.nics()[0] = NicInfo{"NIC0", "mlx5_0", "0000:0c:00.0", 200, 0};
  t.numa_nodes().push_back(NumaNode{0, {0, 1, 2, 3}, 0});
  return t;
}

}  // namespace

TEST_CASE("a fully known model is written as NCCL writes its own files") {
  CHECK(WriteNcclTopoXml(TwoGpusOneNic()) ==
        "<system version=\"1\">\n"
        "  <cpu numaid=\"0\" affinity=\"0000000f\">\n"
        "    <pci busid=\"ffff:ff:01.0\" class=\"0x060400\" link_speed=\"16 GT/s\" link_width=\"16\">\n"
        "      <pci busid=\"0000:07:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" link_width=\"16\">\n"
        "        <gpu dev=\"0\" sm=\"80\" rank=\"0\">\n"
        "          <nvlink target=\"0000:0f:00.0\" count=\"4\" tclass=\"0x030200\"/>\n"
        "        </gpu>\n"
        "      </pci>\n"
        "      <pci busid=\"0000:0f:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" link_width=\"16\">\n"
        "        <gpu dev=\"1\" sm=\"80\" rank=\"1\">\n"
        "          <nvlink target=\"0000:07:00.0\" count=\"4\" tclass=\"0x030200\"/>\n"
        "        </gpu>\n"
        "      </pci>\n"
        "      <pci busid=\"0000:0c:00.0\" class=\"0x020700\">\n"
        "        <nic>\n"
        "          <net name=\"mlx5_0\" dev=\"0\" speed=\"200000\"/>\n"
        "        </nic>\n"
        "      </pci>\n"
        "    </pci>\n"
        "  </cpu>\n"
        "</system>\n");
}

TEST_CASE("unknown values are left out and unknown bus ids get stable placeholders") {
  NodeTopology t(2, 1);
  t.SetGpuLink(0, 1, Link{LinkKind::kNvLink, 2});
  t.SetGpuLink(1, 0, Link{LinkKind::kNvLink, 2});
  t.gpus()[1].pci_bus_id = "not a bus id";
  t.nics()[0].name = "NIC0";  // no device, no speed, SYS to both GPUs
  t.set_nvswitch(true);
  const std::string xml = WriteNcclTopoXml(t);
  CHECK(xml ==
        "<system version=\"1\">\n"
        "  <cpu numaid=\"-1\">\n"
        "    <pci busid=\"fffe:ff:00.0\" class=\"0x030200\">\n"
        "      <gpu dev=\"0\" rank=\"0\">\n"
        "        <nvlink target=\"fffc:ff:00.0\" count=\"2\" tclass=\"0x068000\"/>\n"
        "      </gpu>\n"
        "    </pci>\n"
        "    <pci busid=\"fffe:ff:01.0\" class=\"0x030200\">\n"
        "      <gpu dev=\"1\" rank=\"1\">\n"
        "        <nvlink target=\"fffc:ff:00.0\" count=\"2\" tclass=\"0x068000\"/>\n"
        "      </gpu>\n"
        "    </pci>\n"
        "    <pci busid=\"fffd:ff:00.0\" class=\"0x020000\">\n"
        "      <nic>\n"
        "        <net name=\"NIC0\" dev=\"0\"/>\n"
        "      </nic>\n"
        "    </pci>\n"
        "  </cpu>\n"
        "</system>\n");
  CHECK(WriteNcclTopoXml(t) == xml);  // stable
}

TEST_CASE("a bus id two devices claim is kept by the first only") {
  NodeTopology t(2, 0);
  t.gpus()[0].pci_bus_id = "0000:07:00.0";
  t.gpus()[1].pci_bus_id = "07:00.0";
  const std::string xml = WriteNcclTopoXml(t);
  CHECK(xml.find("busid=\"0000:07:00.0\"") != std::string::npos);
  CHECK(xml.find("busid=\"fffe:ff:01.0\"") != std::string::npos);
}

TEST_CASE("attribute values are escaped and read back unchanged") {
  NodeTopology t(1, 1);
  t.nics()[0].device = "a&b<c>\"d'e";
  const std::string xml = WriteNcclTopoXml(t);
  CHECK(xml.find("name=\"a&amp;b&lt;c&gt;&quot;d&apos;e\"") != std::string::npos);
  gpusched::testing::XmlReadResult r = gpusched::testing::ReadXml(xml);
  REQUIRE(r.root.has_value());
  std::string name;
  for (const auto& cpu : r.root->children) {
    for (const auto& pci : cpu.children) {
      for (const auto& nic : pci.children) {
        if (nic.name == "nic") name = nic.children.at(0).AttrOr("name");
      }
    }
  }
  CHECK(name == "a&b<c>\"d'e");
  CHECK(EscapeXmlAttribute("tab\there\nnl\x01") == "tab&#x9;here&#xA;nl?");
}

TEST_CASE("affinity is left out when NCCL could not read the mask") {
  NodeTopology t(1, 0);
  t.gpus()[0].numa_node = 0;
  t.numa_nodes().push_back(NumaNode{0, {0, 895}, 0});
  CHECK(WriteNcclTopoXml(t).find("affinity=") != std::string::npos);  // 28 words
  t.numa_nodes()[0].cpus = {0, 896};
  CHECK(WriteNcclTopoXml(t).find("affinity=") == std::string::npos);  // 29 words
}

TEST_CASE("cpumap masks are 32-bit words, most significant first") {
  std::vector<int> p4d_node0;
  for (int c = 0; c <= 23; ++c) p4d_node0.push_back(c);
  for (int c = 48; c <= 71; ++c) p4d_node0.push_back(c);
  CHECK(FormatCpuMask(p4d_node0, 3) == "000000ff,ffff0000,00ffffff");
  CHECK(FormatCpuMask(p4d_node0) == "000000ff,ffff0000,00ffffff");
  CHECK(FormatCpuMask({0}, 2) == "00000000,00000001");
  CHECK(FormatCpuMask({31, 32}) == "00000001,80000000");
  CHECK(FormatCpuMask({}) == "");
  CHECK(FormatCpuMask({-1, 3}) == "00000008");
  CHECK(CpuMaskWords(-1) == 1);
  CHECK(CpuMaskWords(31) == 1);
  CHECK(CpuMaskWords(32) == 2);
  CHECK(CpuMaskWords(255) == 8);
}

TEST_CASE("PCI bus ids in NCCL's spelling") {
  CHECK(NormalizePciBusId("00000000:07:00.0") == "0000:07:00.0");
  CHECK(NormalizePciBusId("0000:0F:1f.7") == "0000:0f:1f.7");
  CHECK(NormalizePciBusId(" 07:00.0\n") == "0000:07:00.0");
  CHECK(NormalizePciBusId("0001:00:00.0") == "0001:00:00.0");
  CHECK(NormalizePciBusId("10000:e1:00.0") == "10000:e1:00.0");  // Intel VMD domain
  CHECK_FALSE(NormalizePciBusId("").has_value());
  CHECK_FALSE(NormalizePciBusId("0000:07:20.0").has_value());  // device > 0x1f
  CHECK_FALSE(NormalizePciBusId("0000:07:00.8").has_value());  // function > 7
  CHECK_FALSE(NormalizePciBusId("0000:107:00.0").has_value());
  CHECK_FALSE(NormalizePciBusId("0x00:07:00.0").has_value());
  CHECK_FALSE(NormalizePciBusId("1:2:3:4.0").has_value());
  CHECK_FALSE(NormalizePciBusId("0000:07:00").has_value());
  CHECK(PlaceholderPciBusId(0xffff, 1) == "ffff:ff:01.0");
  CHECK(PlaceholderPciBusId(0xfffe, 255) == "fffe:ff:ff.0");
  CHECK(PlaceholderPciBusId(0xfffe, 256) == "fffe:fe:00.0");
}

TEST_CASE("the PCIe tree: PIX under one bridge, PXB clusters in bridges below a common one") {
  // GPU0-NIC0 PIX, GPU1-NIC1 PIX, the pairs PXB to each other, GPU2 alone
  // (NODE to everything), NIC2 SYS to everything with no NUMA node.
  NodeTopology t(3, 3);
  auto set_all = [&](LinkKind k) {
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) {
        if (a != b) t.SetGpuLink(a, b, Link{k, 0});
        if (a != b) t.SetNicLink(a, b, Link{k, 0});
        t.SetGpuNicLink(a, b, Link{k, 0});
      }
    }
  };
  set_all(LinkKind::kNode);
  for (int g = 0; g < 3; ++g) {
    t.gpus()[g].numa_node = 0;
    t.SetGpuNicLink(g, 2, Link{LinkKind::kSys, 0});
  }
  for (int n = 0; n < 3; ++n) {
    if (n != 2) t.SetNicLink(n, 2, Link{LinkKind::kSys, 0});
    if (n != 2) t.SetNicLink(2, n, Link{LinkKind::kSys, 0});
  }
  t.nics()[0].numa_node = t.nics()[1].numa_node = 0;
  t.SetGpuNicLink(0, 0, Link{LinkKind::kPix, 0});
  t.SetGpuNicLink(1, 1, Link{LinkKind::kPix, 0});
  t.SetGpuLink(0, 1, Link{LinkKind::kPxb, 0});
  t.SetGpuLink(1, 0, Link{LinkKind::kPxb, 0});
  t.SetGpuNicLink(0, 1, Link{LinkKind::kPxb, 0});
  t.SetGpuNicLink(1, 0, Link{LinkKind::kPxb, 0});
  t.SetNicLink(0, 1, Link{LinkKind::kPxb, 0});
  t.SetNicLink(1, 0, Link{LinkKind::kPxb, 0});

  std::vector<CpuDomain> domains = SynthesizePcieTree(t);
  REQUIRE(domains.size() == 2);
  CHECK(domains[0].numa_id == 0);
  CHECK(domains[1].numa_id == -1);
  using K = DeviceRef::Kind;
  const std::vector<PcieNode>& top = domains[0].children;
  REQUIRE(top.size() == 2);  // the PXB group, then GPU2
  REQUIRE(top[0].is_bridge());
  REQUIRE(top[0].children.size() == 2);
  const PcieNode& pair0 = top[0].children[0];
  REQUIRE(pair0.is_bridge());
  REQUIRE(pair0.children.size() == 2);
  CHECK(*pair0.children[0].device == DeviceRef{K::kGpu, 0});
  CHECK(*pair0.children[1].device == DeviceRef{K::kNic, 0});
  CHECK(*top[0].children[1].children[1].device == DeviceRef{K::kNic, 1});
  CHECK(*top[1].device == DeviceRef{K::kGpu, 2});
  REQUIRE(domains[1].children.size() == 1);
  CHECK(*domains[1].children[0].device == DeviceRef{K::kNic, 2});
}

TEST_CASE("the PCIe tree: affinity groups get the lowest NUMA ids no real node uses") {
  NodeTopology t(3, 0);
  t.gpus()[0].cpu_affinity = {0, 1};
  t.gpus()[1].numa_node = 0;
  t.gpus()[1].cpu_affinity = {4, 5};
  t.gpus()[2].cpu_affinity = {2, 3};
  t.numa_nodes().push_back(NumaNode{0, {4, 5}, 0});
  std::vector<CpuDomain> d = SynthesizePcieTree(t);
  REQUIRE(d.size() == 3);
  CHECK(d[0].numa_id == 0);
  CHECK_FALSE(d[0].numa_id_synthesized);
  CHECK(d[1].numa_id == 1);
  CHECK(d[1].numa_id_synthesized);
  CHECK(d[1].cpus == std::vector<int>{0, 1});
  CHECK(d[2].numa_id == 2);
  CHECK(d[2].cpus == std::vector<int>{2, 3});
  CHECK(SynthesizePcieTree(NodeTopology()).empty());
}

TEST_CASE("PCIe links: NCCL's spellings, and a bridge takes the fastest GPU below it") {
  NodeTopology t(3, 0);
  const int gen[] = {3, 5, 6}, width[] = {16, 8, 16};
  for (int g = 0; g < 3; ++g) {
    t.gpus()[g].pcie_generation = gen[g];
    t.gpus()[g].pcie_width = width[g];
  }
  t.SetGpuLink(0, 1, Link{LinkKind::kPix, 0});
  t.SetGpuLink(1, 0, Link{LinkKind::kPix, 0});
  const std::string xml = WriteNcclTopoXml(t);
  CHECK(xml.find("<pci busid=\"ffff:ff:01.0\" class=\"0x060400\" link_speed=\"32 GT/s\" "
                 "link_width=\"8\">") != std::string::npos);
  CHECK(xml.find("<pci busid=\"fffe:ff:00.0\" class=\"0x030200\" link_speed=\"8 GT/s\" "
                 "link_width=\"16\">") != std::string::npos);
  CHECK(xml.find("<pci busid=\"fffe:ff:02.0\" class=\"0x030200\" link_speed=\"64.0 GT/s PCIe\" "
                 "link_width=\"16\">") != std::string::npos);
  t.gpus()[2].pcie_generation = 9;  // unknown to NCCL: left out
  CHECK(WriteNcclTopoXml(t).find("<pci busid=\"fffe:ff:02.0\" class=\"0x030200\" "
                                 "link_width=\"16\">") != std::string::npos);
}

TEST_CASE("dev is the GPU's CUDA index, rank its position") {
  NodeTopology t(1, 0);
  t.gpus()[0].index = 3;
  CHECK(WriteNcclTopoXml(t).find("<gpu dev=\"3\" rank=\"0\"/>") != std::string::npos);
}
