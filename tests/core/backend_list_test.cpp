// registered_backends() hands out a view of one frozen list: after the first
// call it allocates nothing, and it is rebuilt only when the registrations
// change (a run-time factory registered here). Counts every operator new of
// the process, so it runs in a binary of its own.
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<long> allocations{0};

roster::expected<std::unique_ptr<roster::device>> open_none(std::uint32_t) {
  return roster::make_error(roster::errc::not_found, "no device", "this is a test backend");
}
roster::expected<std::vector<roster::adapter_info>> enumerate_none() { return std::vector<roster::adapter_info>{}; }
}  // namespace

void* operator new(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

TEST(backend_list, registered_backends_allocates_nothing_after_the_first_call) {
  const auto first = roster::registered_backends();
  const long before = allocations.load();
  for (int i = 0; i < 1000; ++i) {
    const auto again = roster::registered_backends();
    ASSERT_EQ(again.data(), first.data());
    ASSERT_EQ(again.size(), first.size());
  }
  EXPECT_EQ(allocations.load() - before, 0) << "registered_backends() allocated after the first call";
}

TEST(backend_list, a_new_registration_gives_a_new_list_and_the_old_view_stays_valid) {
  const auto old = roster::registered_backends();
  const std::size_t old_size = old.size();
  ASSERT_TRUE(roster::register_factory("test_registry_backend_list", &open_none, &enumerate_none, 99));
  const auto now = roster::registered_backends();
  EXPECT_EQ(now.size(), old_size + 1);
  EXPECT_NE(now.data(), old.data());
  EXPECT_EQ(old.size(), old_size);  // the old view still reads its list
  bool found = false;
  for (const auto& b : now) found = found || b.id() == "test_registry_backend_list";
  EXPECT_TRUE(found);
  const long before = allocations.load();
  (void)roster::registered_backends();
  EXPECT_EQ(allocations.load() - before, 0);
}
