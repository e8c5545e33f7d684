// User kernels on the OpenCL backend (PoCL in CI): OpenCL C registered with
// roster::opencl::kernel, built at the first call and called in one program
// with built-in ops; kernel functions whose parameters disagree with their
// signature, that do not compile or are not in their source, refused with a Fix.
#include <roster/acquire.hpp>
#include <roster/backends/opencl.hpp>
#include <roster/backends/opencl/detail/testing.hpp>
#include <roster/kernels.hpp>
#include <roster/variants.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using roster::element_type;

constexpr std::string_view axpy_f64_cl = R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void axpy(global double* y, global const double* x, double a, ulong n) {
  const size_t i = get_global_id(0);
  if (i < n) y[i] += a * x[i];
}
)CL";
constexpr std::string_view float_cl = R"CL(
kernel void axpy(global float* y, global const float* x, float a, ulong n) {
  const size_t i = get_global_id(0);
  if (i < n) y[i] += a * x[i];
}
kernel void iota(global float* out, int start, float step, ulong n) {
  const size_t i = get_global_id(0);
  if (i < n) out[i] = (float)(start + (int)i) * step;
}
kernel void no_extent(global float* out, float x) { out[get_global_id(0)] = x; }
kernel void wrong_type(global float* y, ulong n) {}
kernel void scalar_as_buffer(global float* y, global float* x, ulong n) {}
)CL";

constinit const roster::opencl::source axpy_f64_src{axpy_f64_cl, "axpy", 64};
constinit const roster::opencl::source axpy_f32_src{float_cl, "axpy"};
constinit const roster::opencl::source iota_src{float_cl, "iota", 32};
constinit const roster::kernel_entry axpy_f64_entry =
    roster::opencl::kernel<roster::read_write<double>, roster::read<double>, roster::scalar<double>>(
    "axpy", "plain", roster::default_variant, &axpy_f64_src);
ROSTER_KERNEL(axpy_f64_entry);
constinit const roster::kernel_entry axpy_f32_entry =
    roster::opencl::kernel<roster::read_write<float>, roster::read<float>, roster::scalar<float>>(
    "axpy", "plain", roster::default_variant, &axpy_f32_src);
ROSTER_KERNEL(axpy_f32_entry);
constinit const roster::kernel_entry iota_f32_entry =
    roster::opencl::kernel<roster::write<float, roster::length::any>, roster::scalar<std::int32_t>,
                                      roster::scalar<float>>("iota", "plain", roster::default_variant, &iota_src);
ROSTER_KERNEL(iota_f32_entry);

// Kernels that must be refused, each under its own op.
constinit const roster::opencl::source no_extent_src{float_cl, "no_extent"};
constinit const roster::opencl::source wrong_type_src{float_cl, "wrong_type"};
constinit const roster::opencl::source scalar_as_buffer_src{float_cl, "scalar_as_buffer"};
constinit const roster::opencl::source missing_src{float_cl, "not_in_the_source"};
constinit const roster::opencl::source broken_src{"kernel void broken(global float* y, ulong n) { y[0] = ; }",
                                                   "broken"};
constinit const roster::opencl::source huge_local_src{float_cl, "iota", 1u << 30};
constinit const roster::kernel_entry no_extent_entry =
    roster::opencl::kernel<roster::write<float>, roster::scalar<float>>(
    "no_extent", "plain", roster::default_variant, &no_extent_src);
ROSTER_KERNEL(no_extent_entry);
constinit const roster::kernel_entry wrong_type_entry =
    roster::opencl::kernel<roster::read_write<double>>("wrong_type", "plain", roster::default_variant,
                                                                 &wrong_type_src);
ROSTER_KERNEL(wrong_type_entry);
constinit const roster::kernel_entry scalar_as_buffer_entry =
    roster::opencl::kernel<roster::write<float>, roster::scalar<float>>(
    "scalar_as_buffer", "plain", roster::default_variant, &scalar_as_buffer_src);
ROSTER_KERNEL(scalar_as_buffer_entry);
constinit const roster::kernel_entry missing_entry =
    roster::opencl::kernel<roster::write<float>>("missing", "plain", roster::default_variant,
                                                           &missing_src);
ROSTER_KERNEL(missing_entry);
constinit const roster::kernel_entry broken_entry =
    roster::opencl::kernel<roster::write<float>>("broken", "plain", roster::default_variant,
                                                           &broken_src);
ROSTER_KERNEL(broken_entry);
constinit const roster::kernel_entry huge_local_entry =
    roster::opencl::kernel<roster::write<float, roster::length::any>, roster::scalar<std::int32_t>,
                                      roster::scalar<float>>("huge_local", "plain", roster::default_variant,
                                                             &huge_local_src);
ROSTER_KERNEL(huge_local_entry);

void cpu_only(const roster::kernel_args&, std::size_t, std::size_t) {}
// An entry for the OpenCL backend that carries another backend's payload.
constinit const roster::kernel_entry foreign_payload_entry = roster::kernel_entry_of<roster::write<float>>(
    "foreign_payload", "opencl", "plain", roster::default_variant,
    roster::payload_of(&roster::host_kernel_of<&cpu_only>));
ROSTER_KERNEL(foreign_payload_entry);
constinit const roster::kernel_entry cpu_only_entry = roster::kernel_entry_of<roster::write<float>>(
    "cpu_only", "cpu", "plain", roster::default_variant, roster::payload_of(&roster::host_kernel_of<&cpu_only>));
ROSTER_KERNEL(cpu_only_entry);

std::unique_ptr<roster::device> open_opencl() {
  auto d = roster::acquire("opencl:0");
  EXPECT_TRUE(d) << d.error().message();
  return d ? std::move(*d) : nullptr;
}

template <class T>
std::vector<T> fetch(roster::device& d, const roster::buffer& b) {
  std::vector<T> v(b.size);
  EXPECT_TRUE(d.download(b, std::span<T>(v)));
  return v;
}

TEST(OpenclKernels, CallsRunInOrderWithBuiltInOps) {
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  if (!dev->caps().f64) GTEST_SKIP() << "the adapter has no double support";
  constexpr std::size_t n = 10007;  // not a multiple of the local size
  auto y = *dev->allocate<double>(n), x = *dev->allocate<double>(n), z = *dev->allocate<double>(n);
  auto r = *dev->allocate<double>(1);
  roster::program p;
  p.fill(x, 2.0)
      .fill(y, 1.0)
      .call("axpy", {y, x}, {3.0})  // y = 7
      .triad(z, y, x, 0.5)          // z = 8
      .call("axpy", {z, y}, {2.0})  // z = 22
      .grid_sync()
      .dot(r, z, x);                // r = 44 n
  auto ok = dev->dispatch(p);
  ASSERT_TRUE(ok) << ok.error().message();
  ASSERT_TRUE(dev->synchronize());
  for (double v : fetch<double>(*dev, y)) ASSERT_EQ(v, 7.0);
  for (double v : fetch<double>(*dev, z)) ASSERT_EQ(v, 22.0);
  EXPECT_EQ(fetch<double>(*dev, r)[0], 44.0 * n);
  ASSERT_TRUE(dev->dispatch(p));  // again: the kernel built once, its arguments set anew
  EXPECT_EQ(fetch<double>(*dev, y)[0], 7.0);
}

TEST(OpenclKernels, FloatKernelWithIntAndFloatScalarsAndAnExtent) {
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  auto a = *dev->allocate<float>(100), y = *dev->allocate<float>(100);
  roster::program p;
  p.fill(a, -1.0)
      .call("iota", {a}, {std::int32_t{-5}, 0.5}, {.extent = 70})  // a[i] = (i - 5) / 2 below 70
      .fill(y, 1.0)
      .call("axpy", {y, a}, {2.0});                               // y = 1 + 2 a
  auto ok = dev->dispatch(p);
  ASSERT_TRUE(ok) << ok.error().message();
  const auto ha = fetch<float>(*dev, a), hy = fetch<float>(*dev, y);
  for (std::size_t i = 0; i < 100; ++i) {
    const float want = i < 70 ? 0.5f * static_cast<float>(static_cast<int>(i) - 5) : -1.0f;
    ASSERT_EQ(ha[i], want) << i;
    ASSERT_EQ(hy[i], 1.0f + 2.0f * want) << i;
  }
}

// Runs a one-call program of `op` and returns its error (the test fails if it runs).
roster::error refused(roster::device& dev, const std::string& op, std::initializer_list<roster::scalar_arg> s = {}) {
  auto a = *dev.allocate<float>(64);
  roster::program p;
  p.call(op, {a}, s);
  auto ok = dev.dispatch(p);
  EXPECT_FALSE(ok) << op << " ran";
  return ok ? roster::error(roster::errc::internal, "ran", "-") : ok.error();
}

TEST(OpenclKernels, ParametersThatDisagreeWithTheSignatureAreRefused) {
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  auto e = refused(*dev, "no_extent", {1.0f});
  EXPECT_EQ(e.code(), roster::errc::invalid_argument);
  EXPECT_NE(e.what().find("the kernel function takes 2 parameters; its signature and the extent make 3"),
            std::string_view::npos)
      << e.message();
  EXPECT_NE(e.fix().find("(float*, float, ulong)"), std::string_view::npos) << e.message();

  e = refused(*dev, "scalar_as_buffer", {1.0f});
  EXPECT_NE(e.what().find("parameter 1 ('x') is global float*, but the signature's parameter 1 (float scalar) "
                          "needs float"),
            std::string_view::npos)
      << e.message();

  if (!dev->caps().f64) GTEST_SKIP() << "the adapter has no double support";
  auto d = dev->allocate<double>(8);
  ASSERT_TRUE(d);
  roster::program p;
  p.call("wrong_type", {*d});
  auto ok = dev->dispatch(p);
  ASSERT_FALSE(ok);
  EXPECT_NE(ok.error().what().find("parameter 0 ('y') is global float*, but the signature's parameter 0 "
                                   "(read_write double buffer) needs global double*"),
            std::string_view::npos)
      << ok.error().message();
}

TEST(OpenclKernels, SourcesThatDoNotBuildAreRefusedWithTheCompilersWord) {
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  auto e = refused(*dev, "broken");
  EXPECT_EQ(e.code(), roster::errc::invalid_argument);
  EXPECT_NE(e.what().find("clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE"), std::string_view::npos) << e.message();
  EXPECT_NE(e.what().find("the compiler said:"), std::string_view::npos) << e.message();
  EXPECT_NE(e.fix().find("correct the OpenCL C source"), std::string_view::npos) << e.message();

  e = refused(*dev, "missing");
  EXPECT_NE(e.what().find("the source has no kernel function named 'not_in_the_source'"), std::string_view::npos)
      << e.message();

  auto a = *dev->allocate<float>(64);
  roster::program p;
  p.call("huge_local", {a}, {std::int32_t{0}, 1.0f}, {.extent = 8});
  auto ok = dev->dispatch(p);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code(), roster::errc::unsupported);
  EXPECT_NE(ok.error().what().find("beyond the device's largest work-group"), std::string_view::npos)
      << ok.error().message();

  // The device still runs the next program.
  roster::program fine;
  fine.call("iota", {a}, {std::int32_t{0}, 1.0f}, {.extent = 64});
  ok = dev->dispatch(fine);
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(fetch<float>(*dev, a)[63], 63.0f);
}

TEST(OpenclKernels, AKernelWithoutAnOpenclEntryIsRefused) {
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  auto foreign = refused(*dev, "foreign_payload");
  EXPECT_EQ(foreign.code(), roster::errc::invalid_argument);
  EXPECT_NE(foreign.what().find("has no OpenCL C source"), std::string_view::npos) << foreign.message();
  EXPECT_NE(foreign.fix().find("roster::opencl::kernel"), std::string_view::npos) << foreign.message();
  auto e = refused(*dev, "cpu_only");
  EXPECT_NE(e.message().find("no kernel for op 'cpu_only' over float on backend 'opencl'"), std::string::npos)
      << e.message();
  EXPECT_NE(e.fix().find("(cpu)"), std::string_view::npos) << e.message();
}

// The spellings drivers report a parameter's type in (PoCL's are checked above).
TEST(OpenclKernels, ParameterTypesAreComparedWithoutQualifiersOrLongSpellings) {
  using roster::opencl::detail::kernel_type_name;
  EXPECT_EQ(kernel_type_name("double*"), "double*");
  EXPECT_EQ(kernel_type_name("const double*"), "double*");
  EXPECT_EQ(kernel_type_name("__global const float *"), "float*");
  EXPECT_EQ(kernel_type_name("float* restrict"), "float*");
  EXPECT_EQ(kernel_type_name("unsigned int"), "uint");
  EXPECT_EQ(kernel_type_name("unsigned long"), "ulong");
  EXPECT_EQ(kernel_type_name("ulong"), "ulong");
  EXPECT_EQ(kernel_type_name("int"), "int");
  EXPECT_EQ(kernel_type_name("double2*"), "double2*");
}

// Variants and measured choice: a second variant of the float axpy (the same
// source), both timed and checked against a host reference.
constinit const roster::opencl::source axpy_again_src{float_cl, "axpy", 128};
constinit const roster::kernel_entry axpy_f32_again_entry =
    roster::opencl::kernel<roster::read_write<float>, roster::read<float>, roster::scalar<float>>(
    "axpy", "again", roster::other_variant, &axpy_again_src);
ROSTER_KERNEL(axpy_f32_again_entry);
void axpy_host(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  float* y = a.data<float>(0);
  const float* x = a.data<const float>(1);
  for (std::size_t i = begin; i < end; ++i) y[i] += a.scalar<float>(0) * x[i];
}

TEST(OpenclKernels, TuneKernelTimesAndChecksEachVariant) {
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  auto t = roster::tune_kernel(*dev, "axpy", element_type::f32, 1000,
                               roster::tune_options{.reps = 3, .reference = &axpy_host});
  ASSERT_TRUE(t) << t.error().message();
  ASSERT_EQ(t->variants.size(), 2u);
  for (const auto& v : t->variants) {
    EXPECT_FALSE(v.wrong) << v.wrong->message();
    EXPECT_EQ(v.ns.size(), 3u);
  }
  EXPECT_EQ(t->choice.baseline, "plain");
}

// The built-in ops are inventory entries with no source of their own: a call
// of one runs in the backend's own passes.
TEST(OpenclKernels, BuiltInOpsAreInventoryEntries) {
  for (std::size_t k = 0; k < roster::op_count; ++k) {
    const auto o = static_cast<roster::op>(k);
    for (auto type : {element_type::f32, element_type::f64}) {
      auto e = roster::find_kernel(roster::to_string(o), "opencl", type);
      ASSERT_TRUE(e) << roster::to_string(o) << ": " << e.error().message();
      EXPECT_EQ((*e)->variant, "builtin");
      EXPECT_EQ((*e)->builtin, o);
      EXPECT_EQ((*e)->payload_as<roster::opencl::source>(), nullptr);
    }
  }
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  auto a = *dev->allocate<float>(300), b = *dev->allocate<float>(300);
  roster::program p;
  p.fill(a, 2).call("mul", {b, a}, {4.0});
  ASSERT_TRUE(dev->dispatch(p));
  EXPECT_EQ(fetch<float>(*dev, b)[299], 8.0f);
}

}  // namespace
