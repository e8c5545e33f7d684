// Fault injection through registry test backends: factories that fail, throw
// or return nothing; enumerators that fail, throw or report absurd adapters
// (no UUID, one UUID twice, UINT64_MAX bytes of memory, an unknown device
// type); a device that fails every Nth allocation, upload, dispatch and
// synchronize. Every fault must come back as an error whose message ends with
// a Fix: part, and the CPU backend must keep serving throughout. The ASan
// build of scripts/test runs this under LeakSanitizer: nothing may leak.
// The tests share one process and run in order.
#include <roster/roster.hpp>
#include <roster/backends/cpu.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

std::atomic<int> injected{0};  // faults the test backends produced
std::atomic<int> survived{0};  // of those, the ones roster turned into an error with a Fix:

// Counts one injected fault as survived when roster answered with an error that says how to fix it.
void survive(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
  if (e.message().find("\nFix: ") != std::string::npos && !e.fix().empty()) ++survived;
}

// A device on host memory that fails every Nth call of each kind (0: never).
struct flaky_plan {
  std::atomic<int> allocate_every{0}, upload_every{0}, dispatch_every{0}, sync_every{0};
  std::atomic<int> allocates{0}, uploads{0}, dispatches{0}, syncs{0};
};
flaky_plan plan;

bool nth(std::atomic<int>& count, const std::atomic<int>& every) {
  const int n = ++count;
  const int e = every.load();
  if (e == 0 || n % e != 0) return false;
  ++injected;
  return true;
}

class flaky_device final : public roster::device {
 public:
  explicit flaky_device(roster::adapter_info info) : info_(std::move(info)) {}
  const roster::adapter_info& adapter() const noexcept override { return info_; }
  roster::device_caps caps() const noexcept override { return {false, true, roster::op_set::all()}; }
  roster::expected<void> synchronize() override {
    if (nth(plan.syncs, plan.sync_every))
      return roster::make_error(roster::errc::device_fault, "flaky: synchronize failed (injected)", "retry");
    return {};
  }
  roster::expected<void> dispatch_steps(std::span<const roster::step> steps) override {
    if (nth(plan.dispatches, plan.dispatch_every))
      return roster::make_error(roster::errc::device_fault, "flaky: dispatch failed (injected)",
                                "retry the dispatch");
    for (const auto& s : steps) {
      if (s.op == roster::op::grid_sync) continue;
      auto& o = memory_[s.out.slot];
      const auto* a = s.in1.owner != 0 ? &memory_[s.in1.slot] : nullptr;
      const auto* b = s.in2.owner != 0 ? &memory_[s.in2.slot] : nullptr;
      const double x = s.scalar;
      double sum = 0;
      for (std::size_t i = 0; i < (s.op == roster::op::dot ? s.in1.size : s.out.size); ++i) {
        switch (s.op) {
          case roster::op::fill: o[i] = x; break;
          case roster::op::copy: o[i] = (*a)[i]; break;
          case roster::op::mul: o[i] = x * (*a)[i]; break;
          case roster::op::add: o[i] = (*a)[i] + (*b)[i]; break;
          case roster::op::triad: o[i] = (*a)[i] + x * (*b)[i]; break;
          case roster::op::nstream: o[i] += (*a)[i] + x * (*b)[i]; break;
          case roster::op::dot: sum += (*a)[i] * (*b)[i]; break;
          default: break;
        }
      }
      if (s.op == roster::op::dot) o[0] = sum;
    }
    return {};
  }

 protected:
  roster::expected<std::uint32_t> do_allocate(roster::element_type, std::size_t n) override {
    if (nth(plan.allocates, plan.allocate_every))
      return roster::make_error(roster::errc::out_of_memory, "flaky: allocation failed (injected)",
                                "free buffers, or allocate fewer elements");
    memory_.emplace_back(n, 0.0);
    live_.push_back(true);
    return static_cast<std::uint32_t>(memory_.size() - 1);
  }
  roster::expected<void> do_release(std::uint32_t slot) override {
    live_[slot] = false;
    memory_[slot].clear();
    memory_[slot].shrink_to_fit();
    return {};
  }
  bool owns(const roster::buffer& b) const noexcept override {
    return b.slot < live_.size() && live_[b.slot] && memory_[b.slot].size() == b.size;
  }
  roster::expected<void> do_upload(const roster::buffer& b, const void* src) override {
    if (nth(plan.uploads, plan.upload_every))
      return roster::make_error(roster::errc::device_fault, "flaky: upload failed (injected)", "retry the upload");
    for (std::size_t i = 0; i < b.size; ++i)
      memory_[b.slot][i] = b.type == roster::element_type::f32 ? static_cast<const float*>(src)[i]
                                                               : static_cast<const double*>(src)[i];
    return {};
  }
  roster::expected<void> do_download(const roster::buffer& b, void* dst) override {
    for (std::size_t i = 0; i < b.size; ++i) {
      if (b.type == roster::element_type::f32) static_cast<float*>(dst)[i] = static_cast<float>(memory_[b.slot][i]);
      else static_cast<double*>(dst)[i] = memory_[b.slot][i];
    }
    return {};
  }

 private:
  roster::adapter_info info_;
  std::vector<std::vector<double>> memory_;
  std::vector<bool> live_;
};

roster::adapter_info adapter(const char* backend, std::uint32_t ordinal, roster::device_type type, std::uint8_t uuid_seed) {
  roster::adapter_info a;
  a.backend = backend;
  a.ordinal = ordinal;
  a.name = "faulty test adapter";
  a.type = type;
  for (std::size_t i = 0; i < a.uuid.size() && uuid_seed != 0; ++i) a.uuid[i] = static_cast<std::uint8_t>(uuid_seed + i);
  return a;
}

// The registry test backends.
constexpr const char* fails = "test_registry_backend_faulty_fails";
constexpr const char* throws = "test_registry_backend_faulty_throws";
constexpr const char* throws_int = "test_registry_backend_faulty_throws_int";
constexpr const char* null = "test_registry_backend_faulty_null";
constexpr const char* liar = "test_registry_backend_faulty_liar";
constexpr const char* flaky = "test_registry_backend_faulty_device";

using factory_result = roster::expected<std::unique_ptr<roster::device>>;
using enum_result = roster::expected<std::vector<roster::adapter_info>>;

factory_result open_fails(std::uint32_t) {
  ++injected;
  return roster::make_error(roster::errc::unavailable, "faulty: no device here (injected)", "exclude the backend");
}
enum_result enumerate_fails() {
  ++injected;
  return roster::make_error(roster::errc::unavailable, "faulty: cannot enumerate (injected)", "exclude the backend");
}
factory_result open_throws(std::uint32_t) {
  ++injected;
  throw std::runtime_error("faulty factory (injected)");
}
enum_result enumerate_throws() {
  ++injected;
  throw std::runtime_error("faulty enumerator (injected)");
}
factory_result open_throws_int(std::uint32_t) {
  ++injected;
  throw 42;
}
enum_result enumerate_throws_int() {
  ++injected;
  throw 42;
}
factory_result open_null(std::uint32_t) {
  ++injected;
  return std::unique_ptr<roster::device>();
}
// The liar: adapters with no UUID, one UUID twice, absurd memory and ordinal,
// a control-character name, and a device type roster does not know.
enum_result enumerate_liar() {
  std::vector<roster::adapter_info> out;
  out.push_back(adapter(liar, 0, roster::device_type::discrete_gpu, 0));        // empty UUID, no PCI address
  out.push_back(adapter(liar, 1, roster::device_type::discrete_gpu, 0x40));     // one UUID ...
  out.push_back(adapter(liar, 2, roster::device_type::integrated_gpu, 0x40));   // ... twice
  auto huge = adapter(liar, std::numeric_limits<std::uint32_t>::max(), roster::device_type::other, 0x80);
  huge.memory_bytes = std::numeric_limits<std::uint64_t>::max();
  huge.compute_units = std::numeric_limits<std::uint32_t>::max();
  static constexpr char raw_name[] = "bad\0name\x01\x7f\n";
  huge.name = std::string(raw_name, sizeof raw_name - 1) + std::string(4096, 'x');
  huge.pci_address = "zz:zz:zz.zz:";
  out.push_back(huge);
  out.push_back(adapter(liar, 3, static_cast<roster::device_type>(250), 0x90));  // unknown type
  injected += 5;
  return out;
}
factory_result open_flaky(std::uint32_t ordinal) {
  return std::unique_ptr<roster::device>(
      std::make_unique<flaky_device>(adapter(flaky, ordinal, roster::device_type::virtual_gpu, 0xa0)));
}
enum_result enumerate_flaky() {
  std::vector<roster::adapter_info> out{adapter(flaky, 0, roster::device_type::virtual_gpu, 0xa0)};
  return out;
}

void register_all() {
  static const bool once = [] {
    EXPECT_TRUE(roster::register_factory(fails, &open_fails, &enumerate_fails, 1).has_value());
    EXPECT_TRUE(roster::register_factory(throws, &open_throws, &enumerate_throws, 2).has_value());
    EXPECT_TRUE(roster::register_factory(throws_int, &open_throws_int, &enumerate_throws_int, 3).has_value());
    EXPECT_TRUE(roster::register_factory(null, &open_null, &enumerate_fails, 4).has_value());
    EXPECT_TRUE(roster::register_factory(liar, &open_flaky, &enumerate_liar, 5).has_value());
    EXPECT_TRUE(roster::register_factory(flaky, &open_flaky, &enumerate_flaky, 6).has_value());
    return true;
  }();
  (void)once;
}

// Runs a triad on the CPU backend's cached device and checks it.
void cpu_still_serves() {
  auto d = roster::get_device("cpu");
  ASSERT_TRUE(d.has_value()) << d.error().message();
  auto a = (*d)->allocate<double>(1000), b = (*d)->allocate<double>(1000), c = (*d)->allocate<double>(1000);
  ASSERT_TRUE(a && b && c);
  roster::program p;
  p.fill(*b, 1.0).fill(*c, 2.0).triad(*a, *b, *c, 3.0);
  ASSERT_TRUE((*d)->dispatch(p).has_value());
  std::vector<double> host(1000);
  ASSERT_TRUE((*d)->download<double>(*a, host).has_value());
  EXPECT_EQ(host.front(), 7.0);
  EXPECT_EQ(host.back(), 7.0);
  for (auto* x : {&*a, &*b, &*c}) EXPECT_TRUE((*d)->release(*x).has_value());
}

class figures : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("reliability: faults injected %d, survived %d (an error with a Fix:, the CPU backend still serving)\n",
                injected.load(), survived.load());
  }
};
const auto* env = ::testing::AddGlobalTestEnvironment(new figures);

TEST(faults, factories_that_fail_throw_or_return_nothing_are_errors) {
  register_all();
  struct expect_t {
    const char* spec;
    roster::errc code;
  };
  for (const auto& e : {expect_t{fails, roster::errc::unavailable}, expect_t{throws, roster::errc::internal},
                        expect_t{throws_int, roster::errc::internal}, expect_t{null, roster::errc::internal}}) {
    SCOPED_TRACE(e.spec);
    for (int round = 0; round < 3; ++round) {
      auto fresh = roster::acquire(e.spec);  // opens every time
      ASSERT_FALSE(fresh.has_value());
      EXPECT_EQ(fresh.error().code(), e.code) << fresh.error().message();
      survive(fresh.error());
      roster::rescan();  // forget the cached failure: get_device calls the factory again
      auto cached = roster::get_device(e.spec);
      ASSERT_FALSE(cached.has_value());
      EXPECT_EQ(cached.error().code(), e.code);
      survive(cached.error());
      auto again = roster::get_device(std::string(" ") + e.spec + ":0 ");  // the cached failure, no new fault
      ASSERT_FALSE(again.has_value());
      EXPECT_EQ(again.error().message(), cached.error().message());
      cpu_still_serves();
    }
  }
  EXPECT_EQ(survived.load(), injected.load());
}

TEST(faults, enumerators_that_fail_throw_or_lie_leave_the_other_circuits) {
  register_all();
  const int before = injected.load();
  roster::rescan();
  auto list = roster::circuits();
  ASSERT_TRUE(list.has_value()) << list.error().message();
  const int faults = injected.load() - before;
  EXPECT_EQ(faults, 4 + 5);  // fails, throws, throws 42, null's failing enumerator; the liar's five adapters

  // Each failing enumerator is reported with a Fix:, and only those.
  auto failures = roster::enumeration_failures();
  std::vector<std::string> failed;
  for (const auto& f : failures) {
    failed.push_back(f.backend);
    survive(f.error);
  }
  std::sort(failed.begin(), failed.end());
  EXPECT_EQ(failed, (std::vector<std::string>{fails, null, throws, throws_int}));

  // The liar's adapters: listed, the two with one UUID merged into one circuit,
  // the absurd ones neither dropped nor fatal.
  int liar_circuits = 0;
  bool cpu = false, merged = false, huge = false, unknown_type = false;
  for (const auto& c : *list) {
    (void)c.identity();
    if (c.type() == roster::device_type::cpu) cpu = true;
    if (c.adapter.backend != liar) continue;
    ++liar_circuits;
    if (c.adapter.ordinal == 1 || c.adapter.ordinal == 2) merged = c.alternates.size() == 1;
    if (c.adapter.memory_bytes == std::numeric_limits<std::uint64_t>::max()) huge = true;
    if (static_cast<int>(c.adapter.type) == 250) unknown_type = true;
  }
  EXPECT_TRUE(cpu);
  EXPECT_EQ(liar_circuits, 4);
  EXPECT_TRUE(merged);
  EXPECT_TRUE(huge);
  EXPECT_TRUE(unknown_type);
  EXPECT_FALSE(roster::trace_lines().empty());
  for (const auto& line : roster::trace_lines()) EXPECT_FALSE(line.empty());
  survived += faults - 4;  // the liar's five: served without fault (the four failures were counted above)

  // The roles still resolve, and a selector can drop the liar and the failing backends.
  EXPECT_NE(roster::primary(), nullptr);
  EXPECT_NE(roster::try_primary_device(), nullptr);
  EXPECT_NE(roster::try_auxiliary_device(), nullptr);
  ASSERT_EQ(setenv("ROSTER_DEVICE_SELECTOR", "!test_registry_backend_faulty_liar:*;!test_registry_backend_faulty_device:*", 1), 0);
  const int before_second = injected.load();
  roster::rescan();
  // The failing enumerators run again (the same four faults, survived
  // again); the liar, which the selector excludes whole, is not asked.
  auto only_cpu = roster::circuits();
  ASSERT_TRUE(only_cpu.has_value());
  ASSERT_EQ(only_cpu->size(), 1u);
  EXPECT_EQ(only_cpu->front().type(), roster::device_type::cpu);
  EXPECT_EQ(injected.load() - before_second, 4);
  survived += injected.load() - before_second;
  ASSERT_EQ(setenv("ROSTER_DEVICE_SELECTOR", "!!!:", 1), 0);  // malformed: an error, never a silent empty list
  roster::rescan();
  auto bad = roster::circuits();
  ASSERT_FALSE(bad.has_value());
  survive(bad.error());
  ++injected;
  ASSERT_EQ(unsetenv("ROSTER_DEVICE_SELECTOR"), 0);
  roster::rescan();
  cpu_still_serves();
  EXPECT_EQ(survived.load(), injected.load());
}

TEST(faults, a_device_failing_every_nth_call_returns_errors_and_recovers) {
  register_all();
  auto d = roster::get_device(flaky);
  ASSERT_TRUE(d.has_value()) << d.error().message();
  roster::device& dev = **d;
  plan.allocate_every = 7;
  plan.upload_every = 5;
  plan.dispatch_every = 5;
  plan.sync_every = 7;
  const int before = injected.load();
  int good_runs = 0;
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<roster::buffer> held;
    bool ok = true;
    for (int k = 0; k < 3 && ok; ++k) {
      auto b = dev.allocate<double>(64);
      if (!b) {
        EXPECT_EQ(b.error().code(), roster::errc::out_of_memory);
        survive(b.error());
        ok = false;
      } else {
        held.push_back(*b);
      }
    }
    if (ok) {
      std::vector<double> ones(64, 1.0);
      auto up = dev.upload<double>(held[1], ones);
      if (!up) {
        EXPECT_EQ(up.error().code(), roster::errc::device_fault);
        survive(up.error());
      } else {
        roster::program p;
        p.fill(held[2], 2.0).triad(held[0], held[1], held[2], 3.0).grid_sync().dot(held[2], held[0], held[1]);
        auto run = iter % 2 == 0 ? dev.dispatch(p) : [&]() -> roster::expected<void> {
          auto t = dev.timed_dispatch(p);
          if (!t) return std::move(t).error();
          return {};
        }();
        if (!run) {
          EXPECT_EQ(run.error().code(), roster::errc::device_fault);
          survive(run.error());
        } else {
          std::vector<double> a(64), r(64);
          ASSERT_TRUE(dev.download<double>(held[0], a).has_value());
          ASSERT_TRUE(dev.download<double>(held[2], r).has_value());
          EXPECT_EQ(a[63], 7.0);
          EXPECT_EQ(r[0], 7.0 * 64);
          ++good_runs;
        }
      }
    }
    for (const auto& b : held) EXPECT_TRUE(dev.release(b).has_value());
    if (iter % 50 == 0) cpu_still_serves();
  }
  plan.allocate_every = plan.upload_every = plan.dispatch_every = plan.sync_every = 0;
  EXPECT_GT(injected.load() - before, 100);
  EXPECT_GT(good_runs, 20);
  EXPECT_EQ(survived.load(), injected.load());
  cpu_still_serves();
}

TEST(faults, bad_registrations_and_specs_are_errors) {
  register_all();
  auto dummy = [](std::uint32_t) -> factory_result { return std::unique_ptr<roster::device>(); };
  for (auto r : {roster::register_factory("", dummy, nullptr), roster::register_factory("a:b", dummy, nullptr),
                 roster::register_factory("fine_name", nullptr, nullptr), roster::register_factory("CPU", dummy, nullptr),
                 roster::register_factory(flaky, dummy, nullptr)}) {
    ASSERT_FALSE(r.has_value());
    ++injected;
    survive(r.error());
  }
  // Specs no backend has: a long type (past the cache's inline spellings) and
  // a short one, failed, forgotten by rescan and failed again: the replaced
  // cache entries must not leak (LeakSanitizer checks at exit).
  const std::string long_type(70, 'q');
  for (int round = 0; round < 4; ++round) {
    for (const std::string& spec : {long_type + ":1", std::string("nosuchbackend:2"), std::string("cpu:7")}) {
      auto d = roster::get_device(spec);
      ASSERT_FALSE(d.has_value());
      ++injected;
      survive(d.error());
    }
    roster::rescan();
  }
  cpu_still_serves();
  EXPECT_EQ(survived.load(), injected.load());
}

}  // namespace
