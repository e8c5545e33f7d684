// Inventory of one executable: order, sizes, alignment, zero entries, one
// entry from a header included everywhere, conflicts and the first-call race.
#include <gtest/gtest.h>

#include <roster/inventory.hpp>

#include <barrier>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "entries.hpp"
#include "header_entry.hpp"

namespace {
constexpr inv_test::exe_item gamma_entry{{"gamma", 3}};
constexpr inv_test::race_item race_a{{"race-a", 1}};
constexpr inv_test::sized_64 s64_3{3, "sixty-four"};
constexpr inv_test::sized_200 s200_3{3, "two-hundred"};
}  // namespace
ROSTER_SUBMIT(inv_test::sized_64, s64_3);
ROSTER_SUBMIT(inv_test::sized_200, s200_3);
ROSTER_SUBMIT(inv_test::exe_item, gamma_entry);
ROSTER_SUBMIT(inv_test::race_item, race_a);
// A conditional submission: only the one whose condition holds is collected.
namespace {
constexpr inv_test::exe_item kept_if{{"kept-if", 4}};
constexpr inv_test::exe_item skipped_if{{"skipped-if", 5}};
}  // namespace
ROSTER_IMPL_SUBMIT_IF(inv_test::exe_item, sizeof(int) > 1, kept_if);
ROSTER_IMPL_SUBMIT_IF(inv_test::exe_item, sizeof(int) < 1, skipped_if);

using namespace inv_test;

TEST(inventory_executable, collects_every_translation_unit_sorted_by_key) {
  auto span = roster::inventory<exe_item>();
  ASSERT_EQ(span.size(), 4u);
  EXPECT_EQ(span[0]->name, "alpha");
  EXPECT_EQ(span[1]->name, "beta");
  EXPECT_EQ(span[2]->name, "gamma");
  EXPECT_EQ(span[3]->name, "kept-if");
  EXPECT_EQ(span[0]->value, 1);
  EXPECT_EQ(span[2]->value, 3);
}

TEST(inventory_executable, a_conditional_submission_whose_condition_is_false_is_skipped) {
  for (const auto* e : roster::inventory<exe_item>()) EXPECT_NE(e->name, "skipped-if");
  EXPECT_EQ(roster::inventory_info<exe_item>().entries, 4u);
}

TEST(inventory_executable, later_calls_return_the_same_snapshot) {
  auto first = roster::inventory<exe_item>();
  auto collections = roster::inventory_collections();
  for (int i = 0; i < 100; ++i) {
    auto again = roster::inventory<exe_item>();
    EXPECT_EQ(again.data(), first.data());
    EXPECT_EQ(again.size(), first.size());
  }
  EXPECT_EQ(roster::inventory_collections(), collections);
}

TEST(inventory_executable, header_submitted_from_many_units_is_one_entry) {
  auto span = roster::inventory<header_item>();
  ASSERT_EQ(span.size(), 1u);
  EXPECT_EQ(span[0], &header_shared);
  EXPECT_EQ(span[0]->value, 7);
  EXPECT_EQ(roster::inventory_info<header_item>().conflicts, 0u);
}

TEST(inventory_executable, zero_entries_is_an_empty_span) {
  auto span = roster::inventory<none_item>();
  EXPECT_TRUE(span.empty());
  auto info = roster::inventory_info<none_item>();
  EXPECT_EQ(info.entries, 0u);
  EXPECT_EQ(info.conflicts, 0u);
  EXPECT_GE(info.modules, 1u);
}

template <class T>
void expect_ids_1_2_3(std::span<const T* const> span, const char* text) {
  ASSERT_EQ(span.size(), 3u);
  for (std::size_t i = 0; i < span.size(); ++i) {
    EXPECT_EQ(span[i]->id, i + 1);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(span[i]) % alignof(T), 0u);
    if constexpr (requires { span[i]->pad; }) {
      EXPECT_EQ(std::string(span[i]->pad), text);
    }
  }
}

TEST(inventory_executable, entries_of_48_64_and_200_bytes_survive_whole) {
  expect_ids_1_2_3(roster::inventory<sized_48>(), "forty-eight");
  expect_ids_1_2_3(roster::inventory<sized_64>(), "sixty-four");
  expect_ids_1_2_3(roster::inventory<sized_200>(), "two-hundred");
}

TEST(inventory_executable, over_aligned_entries_keep_their_alignment) {
  auto span = roster::inventory<aligned_64>();
  expect_ids_1_2_3(span, nullptr);
  for (const auto* p : span) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
  auto span_256 = roster::inventory<aligned_256>();
  expect_ids_1_2_3(span_256, nullptr);
  for (const auto* p : span_256) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u);
}

TEST(inventory_executable, entries_without_key_are_sorted_by_site) {
  auto span = roster::inventory<note>();
  ASSERT_EQ(span.size(), 3u);
  EXPECT_EQ(span[0]->text, "a1");
  EXPECT_EQ(span[1]->text, "a2");
  EXPECT_EQ(span[2]->text, "b1");
}

TEST(inventory_executable, duplicate_key_keeps_the_first_site_and_reports_both) {
  auto span = roster::inventory<conflict_item>();
  ASSERT_EQ(span.size(), 1u);
  EXPECT_EQ(span[0]->value, 1);  // basic_a.cpp sorts before basic_b.cpp
  auto info = roster::inventory_info<conflict_item>();
  EXPECT_EQ(info.conflicts, 1u);
  EXPECT_EQ(info.duplicates, 0u);
  ASSERT_NE(info.kept_site, nullptr);
  ASSERT_NE(info.dropped_site, nullptr);
  EXPECT_NE(std::string(info.kept_site).find("basic_a.cpp:"), std::string::npos) << info.kept_site;
  EXPECT_NE(std::string(info.dropped_site).find("basic_b.cpp:"), std::string::npos) << info.dropped_site;
}

TEST(inventory_executable, sixty_four_threads_racing_the_first_call_collect_once) {
  constexpr int threads = 64;
  const auto before = roster::inventory_collections();
  std::barrier start(threads);
  std::vector<const race_item* const*> seen(threads, nullptr);
  std::vector<std::size_t> sizes(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      auto span = roster::inventory<race_item>();
      seen[t] = span.data();
      sizes[t] = span.size();
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(roster::inventory_collections() - before, 1u);
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(seen[t], seen[0]);
    EXPECT_EQ(sizes[t], 3u);
  }
  EXPECT_EQ(roster::inventory<race_item>()[0]->name, "race-a");
}
