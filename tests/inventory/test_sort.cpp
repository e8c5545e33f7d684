// The collection's sort, against std::sort with the documented order: key,
// then module rank, then site, then address. Integral keys take a radix
// sort that reads only the bytes that differ; these cases reach each of its
// branches (one byte differing, all eight, signed keys, runs of one key).
#include <gtest/gtest.h>

#include <roster/inventory.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

template <class K>
struct keyed {
  K k;
  [[nodiscard]] constexpr K key() const noexcept { return k; }
};

// Sites as the macro makes them; tie cases need several per key.
const char* const sites[] = {"b.cpp:7", "a.cpp:12", "a.cpp:3", "c.cpp:1"};

template <class K>
void check_sort(const std::vector<K>& keys, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<keyed<K>> objects;
  objects.reserve(keys.size());
  for (K k : keys) objects.push_back({k});
  std::vector<roster::detail::walk_entry> entries;
  for (const auto& o : objects)
    entries.push_back({&o, sites[rng() % std::size(sites)], static_cast<std::size_t>(rng() % 3), 0});

  auto expected = entries;
  std::sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) {
    K ka = static_cast<const keyed<K>*>(a.object)->key(), kb = static_cast<const keyed<K>*>(b.object)->key();
    if (ka != kb) return ka < kb;
    return roster::detail::tie_less(a, b);
  });

  std::vector<roster::detail::walk_entry> scratch(entries.size());
  roster::detail::sort_entries<keyed<K>>(entries.data(), entries.data() + entries.size(), scratch.data());
  ASSERT_EQ(entries.size(), expected.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    ASSERT_EQ(entries[i].object, expected[i].object) << "at " << i << " of " << entries.size();
    ASSERT_EQ(entries[i].site, expected[i].site) << "at " << i;
    ASSERT_EQ(entries[i].module_rank, expected[i].module_rank) << "at " << i;
  }
}

TEST(InventorySort, SmallUnsignedKeysOneDigitDiffers) {
  std::vector<std::uint32_t> keys;
  for (std::uint32_t i = 0; i < 200; ++i) keys.push_back((i * 37) % 251);
  check_sort(keys, 1);
}

TEST(InventorySort, WideKeysEveryDigitDiffers) {
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> keys(5000);
  for (auto& k : keys) k = rng();
  check_sort(keys, 2);
}

TEST(InventorySort, SignedKeysOrderNegativesFirst) {
  std::mt19937_64 rng(11);
  std::vector<std::int64_t> keys(3000);
  for (auto& k : keys) k = static_cast<std::int64_t>(rng());
  keys.push_back(INT64_MIN);
  keys.push_back(INT64_MAX);
  keys.push_back(-1);
  keys.push_back(0);
  check_sort(keys, 3);
  std::vector<std::int16_t> small = {5, -3, 0, -32768, 32767, -1, 1, -3, 5};
  check_sort(small, 4);
}

TEST(InventorySort, RunsOfOneKeyOrderByModuleThenSite) {
  std::vector<std::uint32_t> keys;
  for (std::uint32_t i = 0; i < 400; ++i) keys.push_back(i % 9);  // runs of about 44
  check_sort(keys, 5);
  check_sort(std::vector<std::uint8_t>(50, 42), 6);  // one key only: no radix pass moves anything
}

TEST(InventorySort, NonIntegralKeysSortWithTheSameTies) {
  struct named {
    std::string_view name;
    [[nodiscard]] std::string_view key() const noexcept { return name; }
  };
  const named objs[] = {{"cuda"}, {"cpu"}, {"vulkan"}, {"cpu"}, {"aaa"}};
  std::vector<roster::detail::walk_entry> entries;
  std::size_t rank = 5;
  for (const auto& o : objs) entries.push_back({&o, "x.cpp:1", rank--, 0});
  std::vector<roster::detail::walk_entry> scratch(entries.size());
  roster::detail::sort_entries<named>(entries.data(), entries.data() + entries.size(), scratch.data());
  std::vector<std::string_view> got;
  for (const auto& e : entries) got.push_back(static_cast<const named*>(e.object)->name);
  EXPECT_EQ(got, (std::vector<std::string_view>{"aaa", "cpu", "cpu", "cuda", "vulkan"}));
  // The two "cpu" entries: the lower module rank first.
  EXPECT_LT(entries[1].module_rank, entries[2].module_rank);
}

}  // namespace
