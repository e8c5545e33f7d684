// The kernel inventory: registration and lookup of variants, the check of a
// call against its signature, CPU execution mixed with built-in ops, and the
// router's rule that a backend needs a kernel for every user op.
#include <roster/backends/cpu.hpp>
#include <roster/kernels.hpp>
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include "../support/cpu_device.hpp"

#include "../support/cpu_test_kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using roster_test::axpy;  // y[i] += alpha * x[i]
// The same result, four at a time: a second variant of one op.
template <class T>
void axpy_unrolled(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  T* y = a.data<T>(0);
  const T* x = a.data<const T>(1);
  const T alpha = a.scalar<T>(0);
  std::size_t i = begin;
  for (; i + 4 <= end; i += 4)
    for (std::size_t k = 0; k < 4; ++k) y[i + k] += alpha * x[i + k];
  for (; i < end; ++i) y[i] += alpha * x[i];
}
ROSTER_CPU_KERNEL("axpy", "plain", roster::default_variant, axpy, roster::read_write<roster::elem>,
                  roster::read<roster::elem>, roster::scalar<roster::elem>);
ROSTER_CPU_KERNEL("axpy", "unrolled", roster::other_variant, axpy_unrolled, roster::read_write<roster::elem>,
                  roster::read<roster::elem>, roster::scalar<roster::elem>);

// Two variants that write different marks, so a test sees which one ran.
template <int Mark>
void mark(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  double* out = a.data<double>(0);
  for (std::size_t i = begin; i < end; ++i) out[i] = Mark;
}
constinit const roster::kernel_entry mark_one =
    roster::cpu::kernel<&mark<1>, roster::write<double>>("mark", "one", roster::default_variant);
constinit const roster::kernel_entry mark_two =
    roster::cpu::kernel<&mark<2>, roster::write<double>>("mark", "two", roster::other_variant);
ROSTER_KERNEL(mark_one);
ROSTER_KERNEL(mark_two);

// Two variants and no default.
constinit const roster::kernel_entry pick_a =
    roster::cpu::kernel<&mark<3>, roster::write<double>>("pick", "a", roster::other_variant);
constinit const roster::kernel_entry pick_b =
    roster::cpu::kernel<&mark<4>, roster::write<double>>("pick", "b", roster::other_variant);
ROSTER_KERNEL(pick_a);
ROSTER_KERNEL(pick_b);

// out[i] = i + offset for i < extent, over a buffer of any length, with
// integer scalars: the extent comes from the call.
void iota(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  float* out = a.data<float>(0);
  const auto offset = a.scalar<std::int32_t>(0);
  for (std::size_t i = begin; i < end; ++i) out[i] = static_cast<float>(static_cast<std::int64_t>(i) + offset);
}
constinit const roster::kernel_entry iota_cpu =
    roster::cpu::kernel<&iota, roster::write<float, roster::length::any>, roster::scalar<std::int32_t>>("iota", "plain", roster::default_variant);
ROSTER_KERNEL(iota_cpu);

// A kernel only another backend has: the entry is never run here (its
// payload is that backend's business; the core never looks inside).
constinit const roster::kernel_entry elsewhere_vulkan = roster::kernel_entry_of<roster::read_write<double>>(
    "elsewhere", "vulkan", "plain", roster::default_variant, roster::kernel_payload{});
ROSTER_KERNEL(elsewhere_vulkan);

void expect_fix(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
}

std::unique_ptr<roster::device> open_cpu() {
  auto d = roster_test::open_cpu_device(3);  // an odd count: parts of unequal size
  EXPECT_TRUE(d) << d.error().message();
  return std::unique_ptr<roster::device>(std::move(*d));
}

TEST(KernelInventory, EntriesAreSortedAndFoundByOp) {
  auto axpys = roster::kernels_of("axpy");
  ASSERT_EQ(axpys.size(), 4u);  // two variants, float and double
  for (const auto* e : axpys) {
    EXPECT_EQ(e->op, "axpy");
    EXPECT_EQ(e->backend, "cpu");
    ASSERT_EQ(e->signature.size(), 3u);
    EXPECT_EQ(e->signature[0].mode, roster::access::read_write);
    EXPECT_EQ(e->signature[0].type, e->type);
    EXPECT_EQ(e->signature[1].mode, roster::access::read);
    EXPECT_FALSE(e->signature[2].is_buffer);
    EXPECT_EQ(e->signature[2].scalar,
              e->type == roster::element_type::f32 ? roster::scalar_type::f32 : roster::scalar_type::f64);
    EXPECT_EQ(e->is_default, e->variant == "plain");
    EXPECT_NE(e->payload_as<roster::host_kernel>()->fn, nullptr);
  }
  EXPECT_TRUE(roster::kernels_of("no-such-op").empty());
  EXPECT_EQ(roster::kernel_backends("elsewhere", roster::element_type::f64), "vulkan");
  EXPECT_EQ(roster::kernel_backends("axpy", roster::element_type::f32), "cpu");
  EXPECT_TRUE(roster::check_kernels()) << roster::check_kernels().error().message();
}

TEST(KernelInventory, FindsTheDefaultOrTheNamedVariant) {
  auto d = roster::find_kernel("axpy", "cpu", roster::element_type::f64);
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ((*d)->variant, "plain");
  EXPECT_EQ((*d)->payload_as<roster::host_kernel>()->fn, &axpy<double>);
  auto u = roster::find_kernel("axpy", "cpu", roster::element_type::f32, "unrolled");
  ASSERT_TRUE(u) << u.error().message();
  EXPECT_EQ((*u)->payload_as<roster::host_kernel>()->fn, &axpy_unrolled<float>);
  // The only variant needs no default flag.
  auto i = roster::find_kernel("iota", "cpu", roster::element_type::f32);
  ASSERT_TRUE(i);
  EXPECT_EQ((*i)->payload_as<roster::host_kernel>()->fn, &iota);

  auto missing = roster::find_kernel("axpy", "cpu", roster::element_type::f64, "tiled");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), roster::errc::not_found);
  EXPECT_NE(missing.error().fix().find("'plain', 'unrolled'"), std::string::npos) << missing.error().message();
  auto none = roster::find_kernel("pick", "cpu", roster::element_type::f64);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("none is the default"), std::string::npos) << none.error().message();
  expect_fix(none.error());
  auto other = roster::find_kernel("elsewhere", "cpu", roster::element_type::f64);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code(), roster::errc::unsupported);
  EXPECT_NE(other.error().fix().find("(vulkan)"), std::string::npos) << other.error().message();
}

TEST(KernelCall, SignatureErrorsNameTheOpAndTheParameter) {
  auto dev = open_cpu();
  auto y = dev->allocate<double>(100), x = dev->allocate<double>(100), xs = dev->allocate<double>(99);
  auto f = dev->allocate<float>(100);
  ASSERT_TRUE(y && x && xs && f);

  auto error_of = [&](const roster::program& p) {
    auto ok = dev->dispatch(p);
    EXPECT_FALSE(ok);
    if (ok) return std::string();
    expect_fix(ok.error());
    EXPECT_TRUE(ok.error().code() == roster::errc::invalid_argument || ok.error().code() == roster::errc::not_found)
        << ok.error().message();
    return ok.error().message();
  };
  {  // unknown op
    roster::program p;
    p.call("axpyy", {*y, *x}, {2.0});
    auto m = error_of(p);
    EXPECT_NE(m.find("call of 'axpyy': no kernel is registered"), std::string::npos) << m;
  }
  {  // arity: a missing scalar
    roster::program p;
    p.call("axpy", {*y, *x});
    auto m = error_of(p);
    EXPECT_NE(m.find("call of 'axpy': 2 buffers and 0 scalars passed"), std::string::npos) << m;
    EXPECT_NE(m.find("(read_write double buffer, read double buffer, double scalar)"), std::string::npos) << m;
  }
  {  // arity: a buffer too many
    roster::program p;
    p.call("axpy", {*y, *x, *x}, {2.0});
    auto m = error_of(p);
    EXPECT_NE(m.find("3 buffers and 1 scalars passed"), std::string::npos) << m;
  }
  {  // element type of a later parameter
    roster::program p;
    p.call("axpy", {*y, *f}, {2.0});
    auto m = error_of(p);
    EXPECT_NE(m.find("parameter 1 (read double buffer): a float buffer was passed"), std::string::npos) << m;
  }
  {  // element type the op has no kernel for
    roster::program p;
    p.call("mark", {*f});
    auto m = error_of(p);
    EXPECT_NE(m.find("the op is registered for double only"), std::string::npos) << m;
  }
  {  // scalar type
    roster::program p;
    p.call("axpy", {*y, *x}, {std::int32_t{2}});
    auto m = error_of(p);
    EXPECT_NE(m.find("parameter 2 (double scalar): a int32 was passed"), std::string::npos) << m;
  }
  {  // length
    roster::program p;
    p.call("axpy", {*y, *xs}, {2.0});
    auto m = error_of(p);
    EXPECT_NE(m.find("parameter 1 (read double buffer): its length 99 disagrees with parameter 0's 100"),
              std::string::npos)
        << m;
  }
  {  // an extent beyond the buffers
    roster::program p;
    p.call("axpy", {*y, *x}, {2.0}, {.extent = 101});
    auto m = error_of(p);
    EXPECT_NE(m.find("the extent 101 is beyond parameter 0's length 100"), std::string::npos) << m;
  }
  {  // no buffer sized by the extent and no extent given
    roster::program p;
    p.call("iota", {*f}, {std::int32_t{0}});
    auto m = error_of(p);
    EXPECT_NE(m.find("sizes no buffer by the extent"), std::string::npos) << m;
  }
  {  // the error names the step
    roster::program p;
    p.fill(*y, 1.0).call("axpy", {*y}, {2.0});
    auto m = error_of(p);
    EXPECT_NE(m.find("program step 1: call of 'axpy'"), std::string::npos) << m;
  }
  {  // a call step pushed by hand, without its call
    roster::program p;
    roster::step s{};
    s.op = roster::op::call;
    s.out = *y;
    p.push(s);
    auto m = error_of(p);
    EXPECT_NE(m.find("a call step without its call"), std::string::npos) << m;
  }
  {  // validate() alone says the same, with no device
    roster::program p;
    p.call("axpyy", {*y, *x}, {2.0});
    auto ok = roster::validate(p);
    ASSERT_FALSE(ok);
    EXPECT_EQ(ok.error().code(), roster::errc::not_found);
  }
}

TEST(KernelCall, CpuRunsCallsInOrderWithBuiltInOps) {
  auto dev = open_cpu();
  constexpr std::size_t n = 10007;  // not a multiple of the thread count
  auto y = dev->allocate<double>(n), x = dev->allocate<double>(n), z = dev->allocate<double>(n);
  auto r = dev->allocate<double>(1);
  ASSERT_TRUE(y && x && z && r);
  roster::program p;
  p.fill(*x, 2.0)
      .fill(*y, 1.0)
      .call("axpy", {*y, *x}, {3.0})            // y = 1 + 3 * 2 = 7
      .triad(*z, *y, *x, 0.5)                   // z = 7 + 0.5 * 2 = 8
      .call("axpy", {*z, *y}, {2.0}, {.variant = "unrolled"})  // z = 8 + 2 * 7 = 22
      .grid_sync()
      .dot(*r, *z, *x);                         // r = 44 n
  ASSERT_TRUE(dev->dispatch(p)) << dev->dispatch(p).error().message();
  std::vector<double> hy(n), hz(n), hr(1);
  ASSERT_TRUE(dev->download(*y, std::span<double>(hy)));
  ASSERT_TRUE(dev->download(*z, std::span<double>(hz)));
  ASSERT_TRUE(dev->download(*r, std::span<double>(hr)));
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(hy[i], 7.0) << i;
    ASSERT_EQ(hz[i], 22.0) << i;
  }
  EXPECT_EQ(hr[0], 44.0 * n);
}

TEST(KernelCall, FloatInstanceAndConvertedScalar) {
  auto dev = open_cpu();
  auto y = dev->allocate<float>(33), x = dev->allocate<float>(33);
  ASSERT_TRUE(y && x);
  roster::program p;
  p.fill(*x, 1.5).fill(*y, 0.25).call("axpy", {*y, *x}, {2.0});  // a double literal for a float scalar
  ASSERT_TRUE(dev->dispatch(p));
  std::vector<float> hy(33);
  ASSERT_TRUE(dev->download(*y, std::span<float>(hy)));
  for (float v : hy) ASSERT_EQ(v, 3.25f);
}

// Typed handles: the signature in the type.
constexpr roster::kernel_ref<roster::read_write<double>, roster::read<double>, roster::scalar<double>> axpy_f64{"axpy"};
constexpr roster::kernel_ref<roster::write<float, roster::length::any>, roster::scalar<std::int32_t>> iota_ref{"iota"};

TEST(KernelCall, TypedHandlesCallWithTheirSignature) {
  auto dev = open_cpu();
  auto y = dev->allocate<double>(40), x = dev->allocate<double>(40);
  auto f = dev->allocate<float>(10);
  ASSERT_TRUE(y && x && f);
  roster::program p;
  p.fill(*x, 1.0).fill(*y, 1.0);
  roster::call(p, axpy_f64, *y, *x, 2);                                   // an int for a double scalar
  roster::call(p, axpy_f64.with({.variant = "unrolled"}), *y, *x, 0.5f);  // y = 1 + 2 + 0.5
  auto ok = dev->dispatch(p);
  ASSERT_TRUE(ok) << ok.error().message();
  roster::program q;  // built-in steps of one program share one element type
  q.fill(*f, 0.0);
  roster::call(q, iota_ref.with({.extent = 4}), *f, 3);
  ok = dev->dispatch(q);
  ASSERT_TRUE(ok) << ok.error().message();
  std::vector<double> hy(40);
  std::vector<float> hf(10);
  ASSERT_TRUE(dev->download(*y, std::span<double>(hy)));
  ASSERT_TRUE(dev->download(*f, std::span<float>(hf)));
  for (double v : hy) ASSERT_EQ(v, 3.5);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(hf[i], i < 4 ? static_cast<float>(i + 3) : 0.0f) << i;
  // Kinds are checked as it compiles (tests/kernels/fail); types and lengths when validated.
  roster::program wrong;
  roster::call(wrong, axpy_f64, *f, *x, 1.0);
  EXPECT_FALSE(roster::validate(wrong));
}

TEST(KernelCall, TheNamedVariantRuns) {
  auto dev = open_cpu();
  auto a = dev->allocate<double>(50);
  ASSERT_TRUE(a);
  std::vector<double> h(50);
  for (auto [variant, expected] : {std::pair<const char*, double>{"", 1.0}, {"one", 1.0}, {"two", 2.0}}) {
    roster::program p;
    p.fill(*a, 0.0).call("mark", {*a}, {}, {.variant = variant});
    ASSERT_TRUE(dev->dispatch(p)) << variant;
    ASSERT_TRUE(dev->download(*a, std::span<double>(h)));
    for (double v : h) ASSERT_EQ(v, expected) << variant;
  }
  roster::program p;
  p.call("mark", {*a}, {}, {.variant = "three"});
  auto bad = dev->dispatch(p);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("no variant 'three'"), std::string::npos) << bad.error().message();
}

TEST(KernelCall, ExplicitExtentCoversOnlyItsIndices) {
  auto dev = open_cpu();
  auto a = dev->allocate<float>(20);
  ASSERT_TRUE(a);
  roster::program p;
  p.fill(*a, -1.0).call("iota", {*a}, {std::int32_t{10}}, {.extent = 7});
  ASSERT_TRUE(dev->dispatch(p)) << dev->dispatch(p).error().message();
  std::vector<float> h(20);
  ASSERT_TRUE(dev->download(*a, std::span<float>(h)));
  for (std::size_t i = 0; i < 20; ++i) EXPECT_EQ(h[i], i < 7 ? static_cast<float>(i + 10) : -1.0f) << i;
}

TEST(KernelCall, CopiedProgramKeepsItsCalls) {
  auto dev = open_cpu();
  auto a = dev->allocate<double>(8);
  ASSERT_TRUE(a);
  roster::program copy;
  {
    roster::program p;
    p.fill(*a, 0.0).call("mark", {*a}, {}, {.variant = "two"});
    copy = p;
  }
  ASSERT_TRUE(dev->dispatch(copy));
  std::vector<double> h(8);
  ASSERT_TRUE(dev->download(*a, std::span<double>(h)));
  for (double v : h) EXPECT_EQ(v, 2.0);
}

TEST(KernelRouter, ABackendWithoutTheKernelRefusesTheProgram) {
  auto dev = open_cpu();
  auto a = dev->allocate<double>(16);
  ASSERT_TRUE(a);
  roster::program p;
  p.fill(*a, 1.0).call("elsewhere", {*a});
  ASSERT_TRUE(roster::validate(p));  // the op exists and the call fits its signature
  auto ok = dev->dispatch(p);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code(), roster::errc::unsupported);
  EXPECT_NE(ok.error().message().find("no kernel for op 'elsewhere' over double on backend 'cpu'"),
            std::string::npos)
      << ok.error().message();
  EXPECT_NE(ok.error().fix().find("(vulkan)"), std::string::npos) << ok.error().message();
}

TEST(KernelRouter, AcquirePreferredSkipsBackendsWithoutTheKernels) {
  auto dev = open_cpu();
  auto a = dev->allocate<double>(16);
  ASSERT_TRUE(a);
  roster::program runs_here;
  runs_here.fill(*a, 1.0).call("mark", {*a});
  auto routed = roster::acquire_preferred(runs_here);
  ASSERT_TRUE(routed) << routed.error().message();
  EXPECT_EQ(routed->backend, "cpu");

  roster::program runs_nowhere;
  runs_nowhere.fill(*a, 1.0).call("elsewhere", {*a});
  auto refused = roster::acquire_preferred(runs_nowhere);
  ASSERT_FALSE(refused);  // only the CPU backend is linked into this test
  EXPECT_NE(refused.error().message().find("cpu:0: has no kernel for 'elsewhere'"), std::string::npos)
      << refused.error().message();
  expect_fix(refused.error());
}

// The built-in ops: inventory entries like users' kernels (one mechanism).
TEST(BuiltinKernels, EveryBuiltInOpIsACpuInventoryEntry) {
  using roster::op;
  for (std::size_t k = 0; k < roster::op_count; ++k) {
    const op o = static_cast<op>(k);
    for (auto type : {roster::element_type::f32, roster::element_type::f64}) {
      auto e = roster::find_kernel(roster::to_string(o), "cpu", type);
      ASSERT_TRUE(e) << roster::to_string(o) << ": " << e.error().message();
      EXPECT_EQ((*e)->variant, "builtin");
      EXPECT_TRUE((*e)->is_default);
      EXPECT_EQ((*e)->builtin, o);
      EXPECT_EQ((*e)->type, type);
      EXPECT_NE((*e)->payload_as<roster::host_kernel>()->fn, nullptr) << roster::to_string(o);  // the backend's own loop
      const auto want = type == roster::element_type::f32 ? roster::builtin_signature<float>(o)
                                                          : roster::builtin_signature<double>(o);
      EXPECT_TRUE(std::equal((*e)->signature.begin(), (*e)->signature.end(), want.begin(), want.end(),
                             [](const roster::kernel_param& x, const roster::kernel_param& y) {
                               return x.is_buffer == y.is_buffer && x.mode == y.mode && x.type == y.type &&
                                      x.length == y.length && x.scalar == y.scalar;
                             }))
          << roster::to_string(o);
    }
  }
  // triad: write a, read b, read c, scalar s; dot: write r of any length, read a, read b.
  auto triad = roster::signature_for("triad", roster::element_type::f64);
  ASSERT_EQ(triad.size(), 4u);
  EXPECT_EQ(triad[0].mode, roster::access::write);
  EXPECT_EQ(triad[1].mode, roster::access::read);
  EXPECT_EQ(triad[2].mode, roster::access::read);
  EXPECT_FALSE(triad[3].is_buffer);
  auto dot = roster::signature_for("dot", roster::element_type::f32);
  ASSERT_EQ(dot.size(), 3u);
  EXPECT_EQ(dot[0].length, roster::length::any);
  EXPECT_EQ(dot[0].type, roster::element_type::f32);
  EXPECT_EQ(roster::kernel_backends("triad", roster::element_type::f64), "cpu");
  EXPECT_TRUE(roster::check_kernels()) << roster::check_kernels().error().message();
}

TEST(BuiltinKernels, TheCpuEntryPointRunsTheBackendsLoop) {
  std::vector<double> a(37, 0.0), b(37), c(37), r(1, 0.0);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = double(i), c[i] = 2.0 * double(i);
  auto triad = roster::find_kernel("triad", "cpu", roster::element_type::f64);
  ASSERT_TRUE(triad);
  const roster::kernel_buffer bufs[] = {{a.data(), a.size(), roster::element_type::f64},
                                        {b.data(), b.size(), roster::element_type::f64},
                                        {c.data(), c.size(), roster::element_type::f64}};
  const roster::scalar_arg s[] = {roster::scalar_arg(3.0)};
  const roster::kernel_args args{bufs, s, a.size()};
  (*triad)->payload_as<roster::host_kernel>()->fn(args, 0, 20);
  (*triad)->payload_as<roster::host_kernel>()->fn(args, 20, a.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i] + 3.0 * c[i]) << i;
  auto dot = roster::find_kernel("dot", "cpu", roster::element_type::f64);
  ASSERT_TRUE(dot);
  const roster::kernel_buffer dbufs[] = {{r.data(), 1, roster::element_type::f64}, bufs[1], bufs[2]};
  (*dot)->payload_as<roster::host_kernel>()->fn(roster::kernel_args{dbufs, {}, b.size()}, 0, b.size());
  double want = 0;
  for (std::size_t i = 0; i < b.size(); ++i) want += b[i] * c[i];
  EXPECT_EQ(r[0], want);
}

// Runs one program and returns a's, c's and r's contents.
std::vector<double> run_stream(roster::device& dev, bool as_calls, std::size_t n) {
  auto a = *dev.allocate<double>(n), b = *dev.allocate<double>(n), c = *dev.allocate<double>(n);
  auto r = *dev.allocate<double>(1);
  roster::program p;
  if (as_calls) {
    p.call("fill", {a}, {1.0}).call("fill", {b}, {2.0}).call("fill", {c}, {0.5});
    p.call("copy", {c, a}).call("mul", {b, c}, {3.0}).call("add", {c, a, b});
    p.call("triad", {a, b, c}, {0.25}).call("nstream", {a, b, c}, {2.0}).call("grid_sync", {});
    p.call("dot", {r, a, b});
  } else {
    p.fill(a, 1.0).fill(b, 2.0).fill(c, 0.5);
    p.copy(c, a).mul(b, c, 3.0).add(c, a, b);
    p.triad(a, b, c, 0.25).nstream(a, b, c, 2.0).grid_sync();
    p.dot(r, a, b);
  }
  EXPECT_EQ(p.has_calls(), as_calls);
  auto ok = dev.dispatch(p);
  EXPECT_TRUE(ok) << ok.error().message();
  std::vector<double> out(2 * n + 1);
  EXPECT_TRUE(dev.download(a, std::span<double>(out.data(), n)));
  EXPECT_TRUE(dev.download(c, std::span<double>(out.data() + n, n)));
  EXPECT_TRUE(dev.download(r, std::span<double>(out.data() + 2 * n, 1)));
  return out;
}

TEST(BuiltinKernels, CallsOfBuiltInOpsGiveTheStepsResults) {
  auto dev = open_cpu();
  constexpr std::size_t n = 10007;
  const auto steps = run_stream(*dev, false, n);
  const auto calls = run_stream(*dev, true, n);
  ASSERT_EQ(steps.size(), calls.size());
  for (std::size_t i = 0; i < steps.size(); ++i) ASSERT_EQ(steps[i], calls[i]) << i;
  // c = 1, b = 3, c = 4; a = 3 + 0.25 * 4 = 4, then a += 3 + 2 * 4: 15; r = 15 * 3 n.
  EXPECT_EQ(steps[0], 15.0);
  EXPECT_EQ(steps[n], 4.0);
  EXPECT_EQ(steps[2 * n], 45.0 * n);
}

TEST(BuiltinKernels, ACallOfAnotherTypeThanTheFusedStepsRunsOnItsOwn) {
  auto dev = open_cpu();
  auto a = *dev->allocate<double>(100), fa = *dev->allocate<float>(100), fb = *dev->allocate<float>(100);
  roster::program p;
  p.fill(a, 1.0).call("fill", {fb}, {2.0f}).call("triad", {fa, fb, fb}, {0.5});
  ASSERT_TRUE(dev->dispatch(p)) << dev->dispatch(p).error().message();
  std::vector<float> h(100);
  ASSERT_TRUE(dev->download(fa, std::span<float>(h)));
  EXPECT_EQ(h[99], 3.0f);
}

// One check, one set of errors: a built-in step and a call of the op by name.
TEST(BuiltinKernels, StepsAndCallsOfABuiltInOpFailAlike) {
  auto dev = open_cpu();
  auto a = *dev->allocate<double>(64), b = *dev->allocate<double>(64), shorter = *dev->allocate<double>(63);
  auto fa = *dev->allocate<float>(64);
  auto same = [](const roster::program& step, const roster::program& call) {
    auto x = roster::validate(step), y = roster::validate(call);
    ASSERT_FALSE(x);
    ASSERT_FALSE(y);
    EXPECT_EQ(x.error().code(), y.error().code());
    EXPECT_EQ(x.error().message(), y.error().message());
    expect_fix(x.error());
  };
  {  // length
    roster::program s, c;
    s.triad(a, shorter, b, 2.0);
    c.call("triad", {a, shorter, b}, {2.0});
    same(s, c);
    EXPECT_NE(roster::validate(s).error().message().find(
                  "program step 0: call of 'triad': parameter 1 (read double buffer): its length 63 disagrees"),
              std::string::npos)
        << roster::validate(s).error().message();
  }
  {  // type
    roster::program s, c;
    s.add(a, b, fa);
    c.call("add", {a, b, fa});
    same(s, c);
  }
  {  // scalar
    roster::program s, c;
    s.mul(a, b, std::numeric_limits<double>::infinity());
    c.call("mul", {a, b}, {std::numeric_limits<double>::infinity()});
    same(s, c);
  }
  // Arity and a scalar of the wrong kind: only a call can get them wrong.
  roster::program arity;
  arity.call("triad", {a, b}, {2.0});
  auto e = roster::validate(arity);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message().find("call of 'triad': 2 buffers and 1 scalars passed, the signature (write double "
                                     "buffer, read double buffer, read double buffer, double scalar) takes 3 and 1"),
            std::string::npos)
      << e.error().message();
  expect_fix(e.error());
  roster::program kind;
  kind.call("triad", {a, b, b}, {std::int32_t{2}});
  auto k = roster::validate(kind);
  ASSERT_FALSE(k);
  EXPECT_NE(k.error().message().find("parameter 3 (double scalar): a int32 was passed"), std::string::npos)
      << k.error().message();
  // An unknown op is refused with the user kernel's words.
  roster::program unknown;
  unknown.call("triadd", {a, b, b}, {2.0});
  auto u = roster::validate(unknown);
  ASSERT_FALSE(u);
  EXPECT_EQ(u.error().code(), roster::errc::not_found);
  expect_fix(u.error());
}

TEST(KernelCall, ProgramsWithoutCallsReportNoCalls) {
  roster::program p;
  p.fill(roster::buffer{1, 0, roster::element_type::f64, 4}, 1.0);
  EXPECT_FALSE(p.has_calls());
  p.call("mark", {roster::buffer{1, 0, roster::element_type::f64, 4}});
  EXPECT_TRUE(p.has_calls());
  EXPECT_EQ(p.ops(), roster::op_set::of({roster::op::fill}));  // a call is no built-in op
  EXPECT_EQ(roster::to_string(roster::op::call), "call");
}

}  // namespace
