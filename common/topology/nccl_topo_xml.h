#pragma once

#include <string>

#include "common/topology/node_topology.h"

namespace gpusched::topology {

// The node as an NCCL topology file, the XML that NCCL reads from the file
// named by NCCL_TOPO_FILE (src/graph/xml.cc, topo.cc in NCCL):
//
//   <system version="1">
//     <cpu numaid="0" affinity="000000ff,ffff0000,00ffffff">
//       <pci busid="ffff:ff:01.0" class="0x060400" link_speed="16 GT/s" link_width="16">
//         <pci busid="0000:07:00.0" class="0x030200" link_speed="16 GT/s" link_width="16">
//           <gpu dev="0" sm="80" rank="0">
//             <nvlink target="fffc:ff:00.0" count="12" tclass="0x068000"/>
//           </gpu>
//         </pci>
//         <pci busid="fffd:ff:00.0" class="0x020700">
//           <nic>
//             <net name="mlx5_0" dev="0" speed="200000"/>
//           </nic>
//         </pci>
//       </pci>
//     </cpu>
//   </system>
//
// How the model maps onto it:
// - One <cpu> per CPU domain of SynthesizePcieTree (pcie_tree.h): NUMA nodes,
//   affinity groups, and numaid="-1" (NCCL's own name for an unknown CPU) for
//   devices whose node cannot be told. affinity is the domain's CPUs as a
//   cpumap mask (cpu_mask.h), all masks as wide as the node's highest CPU
//   needs. The PCIe switches are those SynthesizePcieTree makes up, as
//   <pci class="0x060400"> (PCI-to-PCI bridge) with placeholder bus ids
//   ffff:ff:01.0, ffff:ff:02.0, ... in document order.
// - A GPU is <pci class="0x030200"> (3D controller) holding
//   <gpu dev=GpuInfo::index [sm=compute capability] rank=position in gpus()>.
//   rank is a stand-in: NCCL overwrites it with the communicator rank when it
//   loads the file.
// - NVLinks: with nvswitch() set, one <nvlink tclass="0x068000"> (NVSwitch)
//   per GPU whose count is the GPU's largest NV<n>; NCCL merges all NVSwitch
//   targets into one switch node and ignores the target, which is the
//   placeholder fffc:ff:00.0 because the model has no switch address.
//   Otherwise one <nvlink tclass="0x030200" target=peer bus id count=n> per
//   NVLinked peer.
// - A NIC is <pci class="0x020700"> (InfiniBand; for names starting "mlx" or
//   "ib") or "0x020000" (Ethernet; all others) holding
//   <nic><net name=device dev=index [speed=Mbit/s]/></nic>. NCCL finds nets
//   by name, so name is the device ("mlx5_0"), or the topo -m column title
//   when no device is known; dev is a stand-in that NCCL replaces with its
//   net plugin's index. The class is cosmetic: NCCL only reads its 0x02
//   prefix.
// - PCI bus ids: a device's own, normalized to NCCL's spelling
//   (pci_bus_id.h); when it is empty, malformed or taken by another device, a
//   placeholder: fffe:ff:NN.0 for GPU NN, fffd:ff:NN.0 for NIC NN. NCCL uses
//   the GPUs and NICs of a file only where a bus id (for nets: the name)
//   matches a device it detects, and drops the rest; a file with placeholder
//   GPU ids is therefore a description of the topology (for simulation and
//   for reading), not something to hand to NCCL on the real node. The
//   placeholders are stable: the same model always yields the same file.
// - link_speed / link_width: from GpuInfo's PCIe generation and width, in the
//   short spelling of kernels up to 5.6 ("8 GT/s" ... "32 GT/s"), which NCCL
//   has matched longest (releases before Gen5 support stop at "16 GT/s" and
//   rate anything else as Gen3); Gen6 as "64.0 GT/s PCIe", the only spelling
//   NCCL has for it. A bridge carries the fastest link among the GPUs below
//   it (highest generation, then widest), so that NCCL does not rate its
//   uplink at the Gen3 fallback it uses when the speed is unknown; nothing
//   when no GPU below it has a known link.
//
// Left out because the model does not know them and NCCL fills them in for
// every device it keeps (from sysfs, NVML and the net plugin) before it uses
// the file: the CPU's arch/vendor/familyid/modelid, PCI vendor/device ids,
// gpu gdr, a GPU's sm when compute_capability is 0, a NIC's link, net
// port/latency/guid/maxconn/gdr, and net speed when link_speed_gbps is 0.
// affinity is also left out when the domain's CPUs are unknown, or when the
// mask would be longer than the 253 characters NCCL reads per value (CPU ids
// beyond 895); NCCL then reads the node's cpumap from sysfs.
//
// Attribute values are XML-escaped. NCCL's reader does not decode entities, so
// a NIC name that needs escaping would not match on the real node; such names
// do not occur in practice.
std::string WriteNcclTopoXml(const NodeTopology& topo);

}  // namespace gpusched::topology
