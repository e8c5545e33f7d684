// The program check_scaling.py reads: the same main with 10 or 1,000
// generated entries; it also checks that every entry is collected.
#include <roster/inventory.hpp>

#include <cstdio>

#include "gen_item.hpp"

int main() {
  auto span = roster::inventory<gen_item>();
  for (std::uint32_t i = 0; i < span.size(); ++i)
    if (span[i]->id != i || span[i]->check != gen_check(i)) return 1;
  std::printf("%zu entries\n", span.size());
  return span.size() == ROSTER_TEST_ENTRIES ? 0 : 1;
}
