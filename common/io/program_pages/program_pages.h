#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched::io {

// Once a long-running program serves, much of the code and read-only data
// it has touched was only for starting: reading its configuration,
// opening and recovering its store, building gRPC's and protobuf's tables.
// Those pages stay mapped, and counted as its resident memory, for as long
// as it runs. ReleaseProgramPages() unmaps them: every page of the
// program's own file that it maps read-only is dropped from the process
// (madvise MADV_DONTNEED); the file's pages stay in the page cache, and the
// ones it runs or reads again are mapped back on their next touch (a minor
// fault, in blocks of 64 KiB). What stays resident is what it uses while
// serving. With the serving code first in the text (cmake/make_text_order.sh)
// that is a block of its own.
//
// Safe to drop are the pages the process never wrote: a page of a
// read-only segment that it did write (a debugger's breakpoint, a uprobe,
// a text relocation) is a private copy, and dropping it would lose the
// write, so /proc/self/pagemap is read first and such pages are kept. A
// breakpoint set in the moment between that read and the drop (at most 512
// pages later) would be lost: call it once, not while being debugged.

// A span of whole pages, [begin, end).
struct PageRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  bool operator==(const PageRange& other) const { return begin == other.begin && end == other.end; }
};

// One program header as ReadOnlyRanges needs it (ElfW(Phdr)'s fields).
struct Segment {
  std::uint32_t type = 0;   // PT_LOAD, PT_GNU_RELRO, ...
  std::uint32_t flags = 0;  // PF_R, PF_W, PF_X
  std::uint64_t vaddr = 0;
  std::uint64_t memsz = 0;
};

// The pages a program's read-only loaded segments span, at load_bias, that
// no writable segment and no RELRO region (which the loader wrote before
// making it read-only) touches, in address order.
std::vector<PageRange> ReadOnlyRanges(const std::vector<Segment>& segments, std::uintptr_t load_bias,
                                      std::size_t page_size);

struct ReleasedPages {
  std::size_t bytes = 0;       // resident pages of the file unmapped
  std::size_t kept_pages = 0;  // private copies left mapped (see above)
};

// Drops the running program's read-only pages (above). Fails, saying what
// it could not do, when /proc/self/pagemap cannot be opened (nothing has
// been dropped then) or read, or madvise refuses (some pages may have been
// dropped before, which is harmless).
absl::StatusOr<ReleasedPages> ReleaseProgramPages();

}  // namespace gpusched::io
