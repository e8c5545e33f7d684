// A user type collected across translation units with ROSTER_SUBMIT, as
// docs/inventory.md shows it: the entries come back sorted by key().
#include <roster/inventory.hpp>

#include <cstdio>
#include <string_view>

namespace example {

struct codec {
  std::string_view name;
  int version;
  constexpr std::string_view key() const noexcept { return name; }  // sort and dedup key
};

constexpr codec zstd{"zstd", 1};
ROSTER_SUBMIT(codec, zstd);            // namespace scope, any translation unit

constexpr codec lz4{"lz4", 3};
ROSTER_SUBMIT(codec, lz4);

void use(const codec& c) { std::printf("%.*s %d\n", static_cast<int>(c.name.size()), c.name.data(), c.version); }

}  // namespace example

int main() {
  using example::codec, example::use;
  for (const codec* c : roster::inventory<codec>()) use(*c);
  auto list = roster::inventory<codec>();
  auto info = roster::inventory_info<codec>();
  std::printf("%zu entries from %zu module(s)\n", info.entries, info.modules);
  return list.size() == 2 && list[0]->name == "lz4" && list[1]->name == "zstd" ? 0 : 1;
}
