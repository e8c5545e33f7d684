// The first collection allocates exactly once; later calls never allocate.
// This binary replaces the global operator new to count.
#include <gtest/gtest.h>

#include <roster/inventory.hpp>

#include <cstdlib>
#include <new>

#include "entries.hpp"

namespace {
thread_local bool counting = false;
thread_local int allocations = 0;

void* counted(std::size_t n) noexcept {
  if (counting) ++allocations;
  return std::malloc(n == 0 ? 1 : n);
}
void* counted_aligned(std::size_t n, std::align_val_t a) noexcept {
  if (counting) ++allocations;
  auto al = static_cast<std::size_t>(a);
#if defined(_WIN32)
  return _aligned_malloc(n == 0 ? 1 : n, al);  // the C runtime has no aligned_alloc
#else
  return std::aligned_alloc(al, (n + al - 1) / al * al);
#endif
}
void free_aligned(void* p) noexcept {
#if defined(_WIN32)
  _aligned_free(p);
#else
  std::free(p);
#endif
}

struct alloc_item : inv_test::item {};
struct other_item : inv_test::item {};
constexpr alloc_item a1{{"one", 1}};
constexpr alloc_item a2{{"two", 2}};
constexpr alloc_item a3{{"three", 3}};
constexpr other_item o1{{"other", 1}};
}  // namespace

ROSTER_SUBMIT(alloc_item, a1);
ROSTER_SUBMIT(alloc_item, a2);
ROSTER_SUBMIT(alloc_item, a3);
ROSTER_SUBMIT(other_item, o1);

void* operator new(std::size_t n) {
  if (void* p = counted(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = counted(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  if (void* p = counted_aligned(n, a)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_aligned(n, a);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { free_aligned(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { free_aligned(p); }

TEST(inventory_allocation, first_collection_allocates_exactly_once) {
  counting = true;
  allocations = 0;
  auto span = roster::inventory<alloc_item>();
  int first = allocations;
  counting = false;
  EXPECT_EQ(span.size(), 3u);
  EXPECT_EQ(first, 1);
}

TEST(inventory_allocation, later_calls_never_allocate) {
  (void)roster::inventory<alloc_item>();
  counting = true;
  allocations = 0;
  std::size_t total = 0;
  for (int i = 0; i < 1000; ++i) total += roster::inventory<alloc_item>().size();
  int later = allocations;
  counting = false;
  EXPECT_EQ(total, 3000u);
  EXPECT_EQ(later, 0);
}

TEST(inventory_allocation, each_type_collects_with_one_allocation) {
  counting = true;
  allocations = 0;
  auto span = roster::inventory<other_item>();
  int first = allocations;
  counting = false;
  EXPECT_EQ(span.size(), 1u);
  EXPECT_EQ(first, 1);
}

TEST(inventory_allocation, the_counter_sees_allocations) {
  // Guards the test itself: a replaced operator new that never counts would pass the others.
  counting = true;
  allocations = 0;
  int* volatile p = new int(1);
  int seen = allocations;
  counting = false;
  delete p;
  EXPECT_EQ(seen, 1);
}
