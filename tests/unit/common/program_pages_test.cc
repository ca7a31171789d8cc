#include "common/io/program_pages/program_pages.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/skip.h"

namespace {

using gpusched::io::PageRange;
using gpusched::io::ReadOnlyRanges;
using gpusched::io::ReleaseProgramPages;
using gpusched::io::Segment;

constexpr std::size_t kPage = 4096;

// Read-only data of this test program's own file, each on pages of its own:
// a block that start-up touched and serving does not, aligned to the 64 KiB
// the kernel maps around a fault, so that no other read maps it back; and a
// page a debugger patches.
alignas(65536) const char kStartupOnly[65536] = "only start-up reads this";
alignas(kPage) const char kPatched[kPage] = "as built";

const std::size_t kPageSize = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

// Whether each page of [address, address + bytes) is mapped, from
// /proc/self/pagemap, read with nothing else touched in between; empty when
// it cannot be read.
std::vector<bool> Mapped(int pagemap, const void* address, std::size_t bytes) {
  std::uint64_t entries[16];
  const std::size_t pages = std::min<std::size_t>(16, bytes / kPageSize);
  const auto first = reinterpret_cast<std::uintptr_t>(address) / kPageSize;
  const ssize_t got = pread(pagemap, entries, pages * sizeof entries[0], static_cast<off_t>(first * sizeof entries[0]));
  std::vector<bool> mapped;
  if (got != static_cast<ssize_t>(pages * sizeof entries[0])) return mapped;
  for (std::size_t i = 0; i < pages; ++i) mapped.push_back((entries[i] >> 63) != 0);
  return mapped;
}

}  // namespace

TEST_CASE("the read-only ranges of a program are its read-only segments' pages, less any a writable one touches") {
  const std::uintptr_t bias = 0x555500000000;
  const std::vector<Segment> lld_layout = {
      {PT_PHDR, PF_R, 0x40, 0x2a0},
      {PT_LOAD, PF_R, 0x0, 0x496c34},              // headers, .rodata, .eh_frame
      {PT_LOAD, PF_R | PF_X, 0x497000, 0xe5f590},  // .text
      {PT_LOAD, PF_R | PF_W, 0x12f75c0, 0x9b7b8},  // .data.rel.ro, .got
      {PT_LOAD, PF_R | PF_W, 0x1392d80, 0x25090},  // .data, .bss
      {PT_GNU_RELRO, PF_R, 0x12f75c0, 0x9ba40},
      {PT_GNU_EH_FRAME, PF_R, 0x41a000, 0x1234},  // inside the first: not counted twice
      {PT_GNU_STACK, PF_R | PF_W, 0x0, 0x0},
  };
  CHECK(ReadOnlyRanges(lld_layout, bias, kPage) ==
        std::vector<PageRange>{{bias + 0x0, bias + 0x497000}, {bias + 0x497000, bias + 0x12f7000}});

  // ld.bfd without separate code: text ends on the page where the data
  // starts, and that page is the data's.
  const std::vector<Segment> shared_page = {
      {PT_LOAD, PF_R | PF_X, 0x0, 0x1834},
      {PT_LOAD, PF_R | PF_W, 0x1e10, 0x300},
      {PT_GNU_RELRO, PF_R, 0x1e10, 0x1f0},
  };
  CHECK(ReadOnlyRanges(shared_page, 0, kPage) == std::vector<PageRange>{{0x0, 0x1000}});

  // A RELRO region inside a read-only segment (a linker script's doing)
  // splits it.
  const std::vector<Segment> relro_inside = {
      {PT_LOAD, PF_R, 0x0, 0x5000},
      {PT_GNU_RELRO, PF_R, 0x2100, 0x100},
  };
  CHECK(ReadOnlyRanges(relro_inside, 0, kPage) == std::vector<PageRange>{{0x0, 0x2000}, {0x3000, 0x5000}});
}

TEST_CASE("released pages of the program are unmapped, map back when read, and a debugger's patch survives") {
  const int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap < 0) GPUSCHED_SKIP("/proc/self/pagemap cannot be opened here (the programs then keep their pages)");
  const std::size_t pages = std::min<std::size_t>(16, sizeof kStartupOnly / kPageSize);
  // Start-up reads the block; a debugger sets a breakpoint, which writes
  // through /proc/PID/mem into a private copy of the page.
  int sum = 0;
  for (std::size_t i = 0; i < sizeof kStartupOnly; i += kPageSize) {
    sum += *static_cast<const volatile char*>(&kStartupOnly[i]);
  }
  CHECK(sum == 'o');
  const std::vector<bool> before = Mapped(pagemap, kStartupOnly, sizeof kStartupOnly);
  if (before.empty()) {
    close(pagemap);
    GPUSCHED_SKIP("/proc/self/pagemap cannot be read here");
  }
  REQUIRE(before == std::vector<bool>(pages, true));
  const int mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
  REQUIRE(mem >= 0);
  const bool patched = pwrite(mem, "X", 1, static_cast<off_t>(reinterpret_cast<std::uintptr_t>(kPatched))) == 1;
  close(mem);

  auto released = ReleaseProgramPages();
  const std::vector<bool> after = Mapped(pagemap, kStartupOnly, sizeof kStartupOnly);
  REQUIRE(released.ok());
  CHECK(after == std::vector<bool>(pages, false));
  CHECK(released->bytes >= sizeof kStartupOnly);

  // Read again: mapped back from the page cache, as built.
  std::string text;
  for (const volatile char* c = kStartupOnly; *c != '\0'; ++c) text += *c;
  const std::vector<bool> read_again = Mapped(pagemap, kStartupOnly, kPageSize);
  close(pagemap);
  CHECK(text == "only start-up reads this");
  CHECK(read_again == std::vector<bool>{true});
  if (!patched) {
    GPUSCHED_SKIP("this kernel refuses writes to read-only pages through /proc/self/mem (proc_mem.force_override)");
  }
  CHECK(*static_cast<const volatile char*>(kPatched) == 'X');
  CHECK(released->kept_pages >= 1);
}
