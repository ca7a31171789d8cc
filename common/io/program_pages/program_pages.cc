#include "common/io/program_pages/program_pages.h"

#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpusched::io {
namespace {

// /proc/self/pagemap: one 64-bit entry per virtual page (the kernel's
// Documentation/admin-guide/mm/pagemap.rst).
constexpr std::uint64_t kPresent = std::uint64_t{1} << 63;
constexpr std::uint64_t kSwapped = std::uint64_t{1} << 62;
constexpr std::uint64_t kFileOrShared = std::uint64_t{1} << 61;

// Subtracts `cut` from each range of `ranges`.
std::vector<PageRange> Without(const std::vector<PageRange>& ranges, const PageRange& cut) {
  std::vector<PageRange> left;
  for (const PageRange& r : ranges) {
    if (cut.end <= r.begin || r.end <= cut.begin) {
      left.push_back(r);
      continue;
    }
    if (r.begin < cut.begin) left.push_back({r.begin, cut.begin});
    if (cut.end < r.end) left.push_back({cut.end, r.end});
  }
  return left;
}

struct MainProgram {
  std::vector<Segment> segments;
  std::uintptr_t load_bias = 0;
  bool found = false;
};

int TakeMainProgram(dl_phdr_info* info, std::size_t, void* out) {
  // dl_iterate_phdr visits the main program first.
  auto* program = static_cast<MainProgram*>(out);
  program->load_bias = info->dlpi_addr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    program->segments.push_back({p.p_type, p.p_flags, p.p_vaddr, p.p_memsz});
  }
  program->found = true;
  return 1;
}

absl::Status Drop(std::uintptr_t begin, std::uintptr_t end) {
  if (begin == end) return absl::OkStatus();
  if (madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED) != 0) {
    return absl::InternalError(absl::StrCat("madvise(MADV_DONTNEED) of the program's pages at 0x", absl::Hex(begin),
                                            "-0x", absl::Hex(end), ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// Drops the pages of `range` that pagemap says are not private copies.
absl::Status ReleaseRange(int pagemap, const PageRange& range, std::size_t page_size, ReleasedPages& released) {
  std::array<std::uint64_t, 512> entries;  // on the stack: a heap buffer would stay resident
  std::uintptr_t run_begin = range.begin;  // the droppable pages not yet dropped start here
  for (std::uintptr_t chunk = range.begin; chunk < range.end;) {
    const std::size_t pages = std::min<std::size_t>(entries.size(), (range.end - chunk) / page_size);
    const std::size_t want = pages * sizeof(std::uint64_t);
    const ssize_t got =
        pread(pagemap, entries.data(), want, static_cast<off_t>(chunk / page_size * sizeof(std::uint64_t)));
    if (got != static_cast<ssize_t>(want)) {
      return absl::UnavailableError(absl::StrCat("cannot read /proc/self/pagemap at the program's page 0x",
                                                 absl::Hex(chunk), ": ",
                                                 got < 0 ? std::strerror(errno) : "short read"));
    }
    for (std::size_t i = 0; i < pages; ++i) {
      const std::uint64_t entry = entries[i];
      const std::uintptr_t page = chunk + i * page_size;
      const bool present = (entry & kPresent) != 0;
      const bool copy = (present && (entry & kFileOrShared) == 0) || (entry & kSwapped) != 0;
      if (copy) {
        if (absl::Status s = Drop(run_begin, page); !s.ok()) return s;
        run_begin = page + page_size;
        ++released.kept_pages;
      } else if (present) {
        released.bytes += page_size;
      }
    }
    chunk += pages * page_size;
    // Dropped chunk by chunk, so that a page written after its entry was
    // read (a breakpoint set meanwhile) has at most one chunk's time to be.
    if (absl::Status s = Drop(run_begin, chunk); !s.ok()) return s;
    run_begin = chunk;
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<PageRange> ReadOnlyRanges(const std::vector<Segment>& segments, std::uintptr_t load_bias,
                                      std::size_t page_size) {
  auto down = [page_size](std::uintptr_t a) { return a / page_size * page_size; };
  auto up = [page_size](std::uintptr_t a) { return (a + page_size - 1) / page_size * page_size; };
  std::vector<PageRange> read_only;
  std::vector<PageRange> written;
  for (const Segment& s : segments) {
    if (s.memsz == 0) continue;
    const PageRange pages{down(load_bias + s.vaddr), up(load_bias + s.vaddr + s.memsz)};
    if (s.type == PT_LOAD && (s.flags & PF_W) == 0) {
      read_only.push_back(pages);
    } else if (s.type == PT_LOAD || s.type == PT_GNU_RELRO) {
      written.push_back(pages);
    }
  }
  for (const PageRange& cut : written) read_only = Without(read_only, cut);
  std::sort(read_only.begin(), read_only.end(),
            [](const PageRange& a, const PageRange& b) { return a.begin < b.begin; });
  return read_only;
}

absl::StatusOr<ReleasedPages> ReleaseProgramPages() {
  MainProgram program;
  dl_iterate_phdr(TakeMainProgram, &program);
  if (!program.found) return absl::InternalError("dl_iterate_phdr named no program");
  const auto page_size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap < 0) {
    return absl::UnavailableError(absl::StrCat("cannot open /proc/self/pagemap: ", std::strerror(errno)));
  }
  ReleasedPages released;
  absl::Status status;
  for (const PageRange& range : ReadOnlyRanges(program.segments, program.load_bias, page_size)) {
    status = ReleaseRange(pagemap, range, page_size, released);
    if (!status.ok()) break;
  }
  close(pagemap);
  if (!status.ok()) return status;
  return released;
}

}  // namespace gpusched::io
