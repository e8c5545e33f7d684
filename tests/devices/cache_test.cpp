// The device cache: spec normalization, one open per spec, cached failures,
// rescan, run-time factories, and a hit path that does not allocate.

#include "test_backends.hpp"

#include <roster/detail/backend/spec_key.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <new>
#include <thread>

// GCC cannot see that this operator new and delete are a replacing pair.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
thread_local std::size_t allocations = 0;
}  // namespace

// Counts this thread's allocations, to prove the hit path makes none.
void* operator new(std::size_t n) {
  ++allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too (std::stable_sort's buffer uses them): every new here
// pairs with a delete here, so ASan sees malloc matched by free.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++allocations;
  return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {
using namespace devices_test;

// The counting backend: a fresh one per test through its own ordinals.
std::atomic<int> counted_opens{0};
std::atomic<bool> counted_fails{false};
roster::expected<std::unique_ptr<roster::device>> open_counted(std::uint32_t ordinal) {
  counted_opens.fetch_add(1);
  // Widen the window in which racing threads could open twice.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (counted_fails.load())
    return roster::make_error(roster::errc::unavailable, "counted adapter fails", "this is a test");
  roster::adapter_info a;
  a.backend = "test_registry_backend_count";
  a.ordinal = ordinal;
  return std::unique_ptr<roster::device>(std::make_unique<fake_device>(a));
}

class cache : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_backends();
    static const bool once = [] {
      return roster::register_factory("Test_Registry_Backend_Count", &open_counted, nullptr).has_value();
    }();
    ASSERT_TRUE(once);
    counted_opens = 0;
    counted_fails = false;
  }
};

TEST(spec, parses_the_grammar) {
  auto s = roster::parse_spec(" Vulkan:0 ");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->str(), "vulkan:0");
  EXPECT_EQ(roster::parse_spec("CPU")->str(), "cpu:0");
  EXPECT_EQ(roster::parse_spec("cuda:1")->str(), "cuda:1");
  EXPECT_EQ(roster::parse_spec("cuda:2147483647")->ordinal, 2147483647u);
  for (const char* bad : {"", "   ", "cuda:", "cuda:-1", "cuda:x", "cuda:2147483648", "cuda:4294967296", "cuda:99999999999999999999",
                          ":1", "cu da:1", "cuda: 1", "cuda:1:2"}) {
    auto e = roster::parse_spec(bad);
    ASSERT_FALSE(e) << bad;
    EXPECT_EQ(e.error().code(), roster::errc::invalid_argument);
    EXPECT_FALSE(e.error().fix().empty()) << bad;
  }
}

TEST(spec, the_hit_path_normalizer_agrees_with_parse_spec) {
  for (const char* text : {"CPU", "cpu", " cpu ", "\tVulkan:0\n", "cuda:1", "CUDA:0001", "cuda:2147483647",
                           "cuda:2147483648", "cuda:4294967296", "cuda:21474836470", "", " ", "cuda:", "cuda:-1", "cuda:x", ":0", "a_b-c:7", "ä:1",
                           "cuda:1 2", "x:0:0"}) {
    char buf[roster::detail::spec_key_capacity];
    const std::size_t n = roster::detail::normalize_spec_into(text, buf);
    auto parsed = roster::parse_spec(text);
    if (n != 0) {
      ASSERT_TRUE(parsed) << text;
      EXPECT_EQ(std::string_view(buf, n), parsed->str()) << text;
    } else {
      EXPECT_FALSE(parsed) << text;  // the slow path gives the error
    }
  }
}

TEST_F(cache, equivalent_specs_are_one_device) {
  const auto a = make_adapter(backend_a, roster::device_type::discrete_gpu, 1, "");
  set_adapters<0>({a});
  const std::string spec = std::string(backend_a) + ":" + std::to_string(a.ordinal);
  std::string shouted = spec;
  for (auto& c : shouted) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto d1 = roster::get_device(spec);
  ASSERT_TRUE(d1) << d1.error().message();
  auto d2 = roster::get_device("  " + shouted + " ");
  ASSERT_TRUE(d2);
  EXPECT_EQ(*d1, *d2);
  EXPECT_EQ((*d1)->adapter().ordinal, a.ordinal);
  EXPECT_EQ(opens_of<0>(a.ordinal), 1);
}

TEST_F(cache, the_ordinal_defaults_to_zero) {
  auto d1 = roster::get_device("test_registry_backend_count");
  auto d2 = roster::get_device("test_registry_backend_count:0");
  ASSERT_TRUE(d1) << d1.error().message();
  ASSERT_TRUE(d2);
  EXPECT_EQ(*d1, *d2);
}

TEST_F(cache, sixty_four_threads_open_a_new_spec_once) {
  const std::string spec = "test_registry_backend_count:" + std::to_string(fresh_ordinal());
  constexpr int threads = 64;
  std::barrier start(threads);
  std::vector<roster::device*> seen(threads, nullptr);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      auto d = roster::get_device(spec);
      seen[t] = d ? *d : nullptr;
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(counted_opens.load(), 1);
  ASSERT_NE(seen[0], nullptr);
  for (int t = 1; t < threads; ++t) EXPECT_EQ(seen[t], seen[0]);
}

TEST_F(cache, a_hit_does_not_allocate) {
  const std::string ordinal = std::to_string(fresh_ordinal());
  const std::string spec = "Test_Registry_Backend_Count:" + ordinal;
  const std::string other = "  TEST_registry_backend_COUNT:000" + ordinal + "\t";  // a spelling not yet seen
  const std::string normal = "test_registry_backend_count:" + ordinal;
  ASSERT_TRUE(roster::get_device(spec));
  const std::size_t before = allocations;
  for (int i = 0; i < 100; ++i) {
    auto d = roster::get_device(spec);
    ASSERT_TRUE(d);
    auto o = roster::get_device(other);
    ASSERT_TRUE(o);
    auto n = roster::get_device(normal);
    ASSERT_TRUE(n);
    ASSERT_EQ(*d, *o);
    ASSERT_EQ(*d, *n);
  }
  EXPECT_EQ(allocations - before, 0u);
  EXPECT_EQ(counted_opens.load(), 1);
}

TEST(spec, the_hit_path_normalizer_agrees_with_parse_spec_on_random_text) {
  // Random texts over the characters that matter, checked against parse_spec.
  const std::string alphabet = "aZz_-09:: \t\xc3\xa4!A5";
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int i = 0; i < 200000; ++i) {
    std::string text(next() % 70, ' ');
    for (auto& c : text) c = alphabet[next() % alphabet.size()];
    if (next() % 2 == 0 && text.size() > 3) {  // many well-formed ones too
      text = text.substr(0, next() % 50) + ":" + std::to_string(next() % 3000000000ull);
    }
    char buf[roster::detail::spec_key_capacity];
    const std::size_t n = roster::detail::normalize_spec_into(text, buf);
    auto parsed = roster::parse_spec(text);
    if (n != 0) {
      ASSERT_TRUE(parsed) << text;
      ASSERT_EQ(std::string_view(buf, n), parsed->str()) << text;
      for (std::size_t k = n; k < n + 8; ++k) ASSERT_EQ(buf[k], 0) << text;
    } else if (parsed && text.size() < 60 && parsed->backend.size() <= roster::detail::spec_type_max) {
      FAIL() << "the normalizer declined a spec parse_spec accepts: '" << text << "'";
    }
  }
}

TEST_F(cache, a_failure_under_another_spelling_is_retried_after_rescan) {
  counted_fails = true;
  const std::string ordinal = std::to_string(fresh_ordinal());
  const std::string spec = " TEST_REGISTRY_BACKEND_COUNT:" + ordinal;
  EXPECT_FALSE(roster::get_device(spec));
  EXPECT_FALSE(roster::get_device(spec));
  EXPECT_FALSE(roster::get_device("test_registry_backend_count:" + ordinal));
  EXPECT_EQ(counted_opens.load(), 1);
  counted_fails = false;
  roster::rescan();
  auto d = roster::get_device(spec);
  ASSERT_TRUE(d) << d.error().message();
  auto n = roster::get_device("test_registry_backend_count:" + ordinal);
  ASSERT_TRUE(n);
  EXPECT_EQ(*d, *n);
  EXPECT_EQ(counted_opens.load(), 2);
}

TEST_F(cache, a_type_too_long_for_the_hit_path_still_works) {
  const std::string name(60, 'q');
  ASSERT_TRUE(roster::register_factory(name, &open_counted, nullptr));
  auto d1 = roster::get_device(name + ":2");
  ASSERT_TRUE(d1) << d1.error().message();
  auto d2 = roster::get_device(" " + name + ":02 ");
  ASSERT_TRUE(d2);
  EXPECT_EQ(*d1, *d2);
  EXPECT_EQ(counted_opens.load(), 1);
}

TEST_F(cache, a_failed_open_is_cached_until_rescan) {
  counted_fails = true;
  const std::string spec = "test_registry_backend_count:" + std::to_string(fresh_ordinal());
  for (int i = 0; i < 3; ++i) {
    auto d = roster::get_device(spec);
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code(), roster::errc::unavailable);
    EXPECT_NE(d.error().message().find("Fix:"), std::string::npos);
  }
  EXPECT_EQ(counted_opens.load(), 1);
  counted_fails = false;
  EXPECT_FALSE(roster::get_device(spec));
  roster::rescan();
  auto d = roster::get_device(spec);
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(counted_opens.load(), 2);
}

TEST_F(cache, an_unknown_type_lists_the_known_types) {
  auto d = roster::get_device("nosuchbackend:0");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), roster::errc::not_found);
  EXPECT_NE(d.error().message().find("test_registry_backend_a"), std::string::npos) << d.error().message();
  EXPECT_FALSE(d.error().fix().empty());
  auto bad = roster::get_device("cuda:-1");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), roster::errc::invalid_argument);
}

TEST_F(cache, run_time_factories_are_case_insensitive_and_unique) {
  EXPECT_NE(roster::find_backend("TEST_REGISTRY_BACKEND_A"), nullptr);
  bool listed = false;
  for (const auto& b : roster::registered_backends()) listed |= b.id() == "test_registry_backend_b";
  EXPECT_TRUE(listed);
  auto dup = roster::register_factory("Test_Registry_Backend_A", &open_test<0>, &enumerate_test<0>);
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code(), roster::errc::conflict);
  EXPECT_FALSE(dup.error().fix().empty());
  auto bad = roster::register_factory("bad:name", &open_test<0>, nullptr);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), roster::errc::invalid_argument);
  auto null = roster::register_factory("test_registry_backend_null", nullptr, nullptr);
  ASSERT_FALSE(null);
}

TEST_F(cache, registering_a_type_forgets_its_unknown_type_failure) {
  auto before = roster::get_device("test_registry_backend_late:0");
  ASSERT_FALSE(before);
  ASSERT_TRUE(roster::register_factory("test_registry_backend_late", &open_counted, nullptr));
  auto after = roster::get_device("test_registry_backend_late:0");
  EXPECT_TRUE(after) << after.error().message();
}

TEST_F(cache, acquire_opens_run_time_factories) {
  auto d = roster::acquire("TEST_REGISTRY_BACKEND_COUNT:5");
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ((*d)->adapter().ordinal, 5u);
}

}  // namespace
