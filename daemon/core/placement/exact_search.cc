#include "daemon/core/placement/exact_search.h"

#include <bit>

#include "daemon/core/placement/subset_table.h"

namespace gpusched::core::placement {
namespace {

// Gosper's hack: the next larger integer with the same number of set bits.
uint32_t NextSubsetOfSameSize(uint32_t s) {
  const uint32_t lowest = s & -s;
  const uint32_t ripple = s + lowest;
  return ripple | (((s ^ ripple) >> 2) / lowest);
}

// Rule 4 between two sets of the same size: the one holding the lowest
// position where they differ.
bool HasLowerPositions(uint32_t a, uint32_t b) {
  const uint32_t differ = a ^ b;
  return (a & differ & -differ) != 0;
}

// The gang sizes rule 3 looks at, most important first: powers of two
// (largest first), then the rest (largest first). Real gangs are powers of
// two: 1, 2, 4, 8 and multiples of 8 are every one of the 69,351 jobs of
// shared/traces/microsoft_itp_2021.csv.
std::vector<int> FutureGangSizes(int left) {
  std::vector<int> sizes;
  for (int j = std::bit_floor(static_cast<unsigned>(left)); j >= 1; j /= 2) sizes.push_back(j);
  for (int j = left; j >= 1; --j) {
    if (!std::has_single_bit(static_cast<unsigned>(j))) sizes.push_back(j);
  }
  return sizes;
}

// -1, 0, 1 as the GPUs left by `a` serve future gangs worse, equally, better
// than those left by `b`.
int CompareLeftovers(const SubsetTable& table, const std::vector<int>& sizes, uint32_t left_a, uint32_t left_b) {
  for (int j : sizes) {
    const uint64_t a = table.BestOfSize(left_a, j);
    const uint64_t b = table.BestOfSize(left_b, j);
    if (a != b) return a < b ? -1 : 1;
  }
  return 0;
}

uint32_t LeavingTheBestLeftover(SubsetTable& table, const std::vector<uint32_t>& tied) {
  const uint32_t full = (uint32_t{1} << table.size()) - 1;
  const int left = table.size() - std::popcount(tied.front());
  table.ComputeBestOfSize(left);
  const std::vector<int> sizes = FutureGangSizes(left);
  uint32_t best = tied.front();
  for (size_t i = 1; i < tied.size(); ++i) {
    const int order = CompareLeftovers(table, sizes, full & ~tied[i], full & ~best);
    if (order > 0 || (order == 0 && HasLowerPositions(tied[i], best))) best = tied[i];
  }
  return best;
}

}  // namespace

std::vector<int> ChooseSubsetExactly(const GpuGraph& graph, uint64_t free_mask, int k) {
  std::vector<int> members;
  for (uint64_t f = free_mask; f != 0; f &= f - 1) members.push_back(std::countr_zero(f));
  if (static_cast<int>(members.size()) == k) return members;
  SubsetTable table(graph, members);
  const uint32_t end = uint32_t{1} << table.size();

  uint64_t best_score = 0;
  std::vector<uint32_t> tied;
  for (uint32_t s = (uint32_t{1} << k) - 1; s < end; s = NextSubsetOfSameSize(s)) {
    const uint64_t score = table.Score(s);
    if (tied.empty() || score > best_score) {
      best_score = score;
      tied.assign(1, s);
    } else if (score == best_score) {
      tied.push_back(s);
    }
  }
  const uint32_t chosen = tied.size() == 1 ? tied.front() : LeavingTheBestLeftover(table, tied);

  std::vector<int> gpus;
  for (uint32_t c = chosen; c != 0; c &= c - 1) gpus.push_back(members[std::countr_zero(c)]);
  return gpus;
}

}  // namespace gpusched::core::placement
