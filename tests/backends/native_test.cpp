// Native handles on the CPU backend and the core's checks: the pool runs a
// user's callable between two roster programs with a working barrier, buffers
// give their host memory, and asking for another backend's handles, or for a
// buffer of another device or a released one, is an error with a Fix.
#include <roster/backends/cpu.hpp>
#include <roster/native.hpp>
#include <roster/roster.hpp>
#if defined(ROSTER_TEST_HAVE_CUDA)
#  include <roster/backends/cuda.hpp>
#endif

#include <gtest/gtest.h>

#include "../support/cpu_device.hpp"

#include <atomic>
#include <chrono>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

// A backend's handle type that no linked backend fills in.
struct fake_native {
  static constexpr std::uint64_t native_id = roster::native_id_of("test::fake_native/1");
  static constexpr std::string_view backend = "fake";
  struct buffer {
    int unused = 0;
  };
};

// The CPU backend's name with another layout version: what a program built
// against other headers than the backend would ask for.
struct cpu_native_v0 {
  static constexpr std::uint64_t native_id = roster::native_id_of("roster::cpu::native/0");
  static constexpr std::string_view backend = "cpu";
  struct buffer {
    void* data = nullptr;
  };
};

static_assert(roster::native_handles<roster::cpu::native>);
static_assert(roster::native_handles<fake_native>);
static_assert(!roster::native_handles<int>);

void expect_fix(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
}

void expect_names(const roster::error& e, std::initializer_list<const char*> words) {
  for (const char* w : words) EXPECT_NE(e.what().find(w), std::string::npos) << "no '" << w << "' in: " << e.message();
}

// A device of backend "probe" whose do_native fails in the way asked: an
// error that names the adapter, one that does not, a throw; or succeeds.
struct probe_native {
  static constexpr std::uint64_t native_id = roster::native_id_of("test::probe_native/1");
  static constexpr std::string_view backend = "probe";
  struct buffer {};
  int value = 0;
};
enum class probe_mode { named_error, bare_error, throws, none, ok };
class probe_device final : public roster::device {
 public:
  explicit probe_device(probe_mode m) : mode_(m) {
    info_.backend = "probe";
    info_.name = "probe";
  }
  const roster::adapter_info& adapter() const noexcept override { return info_; }
  roster::device_caps caps() const noexcept override { return {true, true, roster::op_set::all()}; }
  roster::expected<void> synchronize() override { return {}; }
  roster::expected<void> dispatch_steps(std::span<const roster::step>) override { return {}; }

 protected:
  roster::expected<std::uint32_t> do_allocate(roster::element_type, std::size_t) override { return 0u; }
  roster::expected<void> do_release(std::uint32_t) override { return {}; }
  bool owns(const roster::buffer& b) const noexcept override { return b.slot == 0; }
  roster::expected<void> do_upload(const roster::buffer&, const void*) override { return {}; }
  roster::expected<void> do_download(const roster::buffer&, void*) override { return {}; }
  roster::expected<bool> do_native(std::uint64_t kind, void* out) override {
    switch (mode_) {
      case probe_mode::named_error:
        return roster::make_error(roster::errc::device_fault, "probe:0: the driver lost the context", "restart");
      case probe_mode::bare_error:
        return roster::make_error(roster::errc::device_fault, "the driver lost the context", "restart");
      case probe_mode::throws: throw std::runtime_error("probe exploded");
      case probe_mode::none: return false;
      case probe_mode::ok: break;
    }
    if (kind != probe_native::native_id) return false;
    static_cast<probe_native*>(out)->value = 42;
    return true;
  }

 private:
  probe_mode mode_;
  roster::adapter_info info_;
};

std::unique_ptr<roster::cpu::device> open_cpu(unsigned threads) {
  auto d = roster_test::open_cpu_device(threads);
  EXPECT_TRUE(d) << d.error().message();
  return std::move(*d);
}

TEST(cpu_native, handles_name_the_pool_and_the_host_memory) {
  auto d = open_cpu(4);
  auto n = roster::native<roster::cpu::native>(*d);
  ASSERT_TRUE(n) << n.error().message();
  EXPECT_EQ(n->threads, 4u);
  EXPECT_EQ(n->dev, d.get());
  auto b = d->allocate<float>(1000);
  ASSERT_TRUE(b);
  auto nb = roster::native_buffer<roster::cpu::native>(*d, *b);
  ASSERT_TRUE(nb) << nb.error().message();
  EXPECT_EQ(nb->data, d->address(*b));
  EXPECT_NE(nb->data, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(nb->data) % roster::cpu::buffer_alignment, 0u);
  EXPECT_EQ(nb->type, roster::element_type::f32);
  EXPECT_EQ(nb->size, 1000u);
}

TEST(cpu_native, a_wrapped_device_gives_the_handles_of_the_device_inside) {
  roster::acquire_options force;
  force.force_split = true;
  auto d = roster::acquire("cpu", force);
  ASSERT_TRUE(d) << d.error().message();
  ASSERT_NE(dynamic_cast<roster::grid_sync_split<roster::device>*>(d->get()), nullptr);
  auto n = roster::native<roster::cpu::native>(**d);
  ASSERT_TRUE(n) << n.error().message();
  EXPECT_NE(n->dev, nullptr);
  EXPECT_EQ(static_cast<roster::device*>(n->dev)->id(), (*d)->id());
  auto b = (*d)->allocate<double>(10);
  ASSERT_TRUE(b);
  std::vector<double> host(10, 4.5);
  ASSERT_TRUE((*d)->upload<double>(*b, host));
  auto nb = roster::native_buffer<roster::cpu::native>(**d, *b);
  ASSERT_TRUE(nb) << nb.error().message();
  EXPECT_EQ(static_cast<double*>(nb->data)[9], 4.5);
}

TEST(cpu_native, run_on_threads_runs_once_on_each_thread_with_the_caller_as_thread_0) {
  auto d = open_cpu(4);
  auto n = roster::native<roster::cpu::native>(*d);
  ASSERT_TRUE(n);
  std::vector<std::atomic<int>> seen(4);
  std::vector<std::thread::id> ids(4);
  std::atomic<int> wrong_count{0};
  auto ok = n->run_on_threads([&](unsigned t, unsigned count) {
    if (count != 4 || t >= 4) {
      wrong_count.fetch_add(1);
      return;
    }
    seen[t].fetch_add(1);
    ids[t] = std::this_thread::get_id();
  });
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(wrong_count.load(), 0);
  for (unsigned t = 0; t < 4; ++t) EXPECT_EQ(seen[t].load(), 1) << "thread " << t;
  EXPECT_EQ(ids[0], std::this_thread::get_id());
  for (unsigned t = 1; t < 4; ++t) EXPECT_NE(ids[t], ids[0]) << "thread " << t;
}

TEST(cpu_native, the_barrier_holds_every_thread_until_all_arrive) {
  auto d = open_cpu(4);
  auto n = roster::native<roster::cpu::native>(*d);
  ASSERT_TRUE(n);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::atomic<int>> flags(4);
    std::atomic<int> early{0};
    auto ok = n->run_on_threads([&](unsigned t, unsigned count) {
      // The last thread arrives late: without the barrier the others would
      // read its flag before it is set.
      if (t == count - 1) std::this_thread::sleep_for(std::chrono::milliseconds(30));
      flags[t].store(1, std::memory_order_relaxed);
      n->barrier();
      for (unsigned i = 0; i < count; ++i)
        if (flags[i].load(std::memory_order_relaxed) != 1) early.fetch_add(1);
    });
    ASSERT_TRUE(ok) << ok.error().message();
    EXPECT_EQ(early.load(), 0) << "round " << round;
  }
}

// A roster program writes, the user's callable transforms on the pool (each
// thread reads its neighbours' writes after the barrier), a second roster
// program continues; every value is checked exactly.
TEST(cpu_native, user_work_on_the_pool_between_two_programs) {
  auto d = open_cpu(4);
  constexpr std::size_t n = 3 * roster::cpu::block_elements + 77;  // several blocks per thread, uneven
  auto a = d->allocate<double>(n), b = d->allocate<double>(n), c = d->allocate<double>(n);
  ASSERT_TRUE(a && b && c);
  roster::program first;
  first.fill(*a, 2.0).fill(*b, 3.0).triad(*c, *a, *b, 0.5);  // c = 3.5
  ASSERT_TRUE(d->dispatch(first));

  auto h = roster::native<roster::cpu::native>(*d);
  auto hb = roster::native_buffer<roster::cpu::native>(*d, *b);
  auto hc = roster::native_buffer<roster::cpu::native>(*d, *c);
  ASSERT_TRUE(h && hb && hc);
  auto* pb = static_cast<double*>(hb->data);
  auto* pc = static_cast<double*>(hc->data);
  auto ok = h->run_on_threads([&](unsigned t, unsigned count) {
    const std::size_t lo = n * t / count, hi = n * (t + 1) / count;
    for (std::size_t i = lo; i < hi; ++i) pc[i] = pc[i] * 10.0 + static_cast<double>(i);  // 35 + i
    h->barrier();
    // The next element may belong to the next thread: its write must be done.
    for (std::size_t i = lo; i < hi; ++i) pb[i] = pc[(i + 1) % n];
  });
  ASSERT_TRUE(ok) << ok.error().message();

  roster::program second;
  second.add(*a, *b, *c);  // a = c[(i+1)%n] + c[i]
  ASSERT_TRUE(d->dispatch(second));
  ASSERT_TRUE(d->synchronize());
  std::vector<double> out(n);
  ASSERT_TRUE(d->download<double>(*a, out));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double want = (35.0 + static_cast<double>((i + 1) % n)) + (35.0 + static_cast<double>(i));
    if (out[i] != want && wrong++ < 5) ADD_FAILURE() << "a[" << i << "] = " << out[i] << ", want " << want;
  }
  EXPECT_EQ(wrong, 0u);
}

TEST(cpu_native, a_callable_that_throws_is_an_error_with_a_fix) {
  auto d = open_cpu(2);
  auto n = roster::native<roster::cpu::native>(*d);
  ASSERT_TRUE(n);
  auto ok = n->run_on_threads([](unsigned t, unsigned) {
    if (t == 1) throw std::runtime_error("user kernel failed");
  });
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code(), roster::errc::internal);
  expect_names(ok.error(), {"run_on_threads", "thread 1", "user kernel failed"});
  expect_fix(ok.error());
  // The device still works.
  EXPECT_TRUE(n->run_on_threads([](unsigned, unsigned) {}));
}

// The CPU runs code compiled into the program: it has no load to report.
TEST(cpu_native, kernels_loaded_is_nothing_on_the_cpu) {
  auto d = roster::acquire("cpu:0");
  ASSERT_TRUE(d) << d.error().message();
  auto load = roster::kernels_loaded(**d);
  ASSERT_TRUE(load) << load.error().message();
  EXPECT_FALSE(load->has_value());
}

TEST(native_errors, a_cpu_device_asked_for_another_backends_handles) {
  auto d = open_cpu(2);
  auto b = d->allocate<float>(8);
  ASSERT_TRUE(b);
  auto n = roster::native<fake_native>(*d);
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().code(), roster::errc::invalid_argument);
  expect_names(n.error(), {"fake", "cpu", "fake_native"});
  EXPECT_NE(n.error().fix().find("roster::cpu::native"), std::string::npos) << n.error().message();
  expect_fix(n.error());
  auto nb = roster::native_buffer<fake_native>(*d, *b);
  ASSERT_FALSE(nb);
  EXPECT_EQ(nb.error().code(), roster::errc::invalid_argument);
  expect_names(nb.error(), {"fake", "cpu", "native_buffer"});
  expect_fix(nb.error());
#if defined(ROSTER_TEST_HAVE_CUDA)
  auto c = roster::native<roster::cuda::native>(*d);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code(), roster::errc::invalid_argument);
  expect_names(c.error(), {"asked for cuda handles", "cpu device"});
  expect_fix(c.error());
  auto cb = roster::native_buffer<roster::cuda::native>(*d, *b);
  ASSERT_FALSE(cb);
  expect_names(cb.error(), {"cuda", "cpu"});
  expect_fix(cb.error());
#endif
}

TEST(native_errors, the_backends_own_name_with_another_layout_is_refused) {
  auto d = open_cpu(2);
  auto n = roster::native<cpu_native_v0>(*d);
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().code(), roster::errc::unsupported);
  expect_fix(n.error());
}

TEST(native_errors, a_buffer_of_another_device) {
  auto d1 = open_cpu(2), d2 = open_cpu(2);
  auto b = d1->allocate<double>(8);
  ASSERT_TRUE(b);
  auto nb = roster::native_buffer<roster::cpu::native>(*d2, *b);
  ASSERT_FALSE(nb);
  EXPECT_EQ(nb.error().code(), roster::errc::invalid_argument);
  expect_names(nb.error(), {"another device", "cpu"});
  expect_fix(nb.error());
  auto none = roster::native_buffer<roster::cpu::native>(*d2, roster::buffer{});
  ASSERT_FALSE(none);
  expect_names(none.error(), {"no device"});
  expect_fix(none.error());
}

TEST(native_errors, a_released_buffer) {
  auto d = open_cpu(2);
  auto b = d->allocate<double>(8);
  ASSERT_TRUE(b);
  ASSERT_TRUE(d->release(*b));
  auto nb = roster::native_buffer<roster::cpu::native>(*d, *b);
  ASSERT_FALSE(nb);
  EXPECT_EQ(nb.error().code(), roster::errc::invalid_argument);
  expect_names(nb.error(), {"not live", "released"});
  expect_fix(nb.error());
}

TEST(native_errors, a_backend_s_own_error_names_the_adapter_and_the_call_once) {
  probe_device named(probe_mode::named_error), bare(probe_mode::bare_error);
  auto a = roster::native<probe_native>(named);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code(), roster::errc::device_fault);
  EXPECT_EQ(a.error().what(), "probe:0: the driver lost the context");
  auto b = roster::native<probe_native>(bare);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().what(), "probe:0: native: the driver lost the context");
  expect_fix(b.error());
}

TEST(native_errors, a_backend_that_throws_is_an_error_with_a_fix) {
  probe_device d(probe_mode::throws);
  auto n = roster::native<probe_native>(d);
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().code(), roster::errc::internal);
  expect_names(n.error(), {"probe:0", "probe exploded"});
  expect_fix(n.error());
}

TEST(native_errors, a_backend_without_native_handles_says_so) {
  probe_device d(probe_mode::none);
  auto n = roster::native<probe_native>(d);
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().code(), roster::errc::unsupported);
  expect_names(n.error(), {"probe:0", "no handles of this kind"});
  expect_fix(n.error());
  probe_device ok(probe_mode::ok);
  auto good = roster::native<probe_native>(ok);
  ASSERT_TRUE(good) << good.error().message();
  EXPECT_EQ(good->value, 42);
}

}  // namespace
