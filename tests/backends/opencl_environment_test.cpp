// The OpenCL backend on hosts that lack a part of OpenCL, one case a run
// (tests/backends/meson.build sets the environment and the filter):
//   opencl_without_icd     OCL_ICD_VENDORS names a folder with no ICD file
//   opencl_without_loader  ROSTER_OPENCL_LOADER names a library that is not there
//   opencl_without_f64     ROSTER_OPENCL_NO_F64=1: every device lacks double support
//   opencl_forged_loader   ROSTER_OPENCL_LOADER holds a newline and a forged "Fix:" line
// In the first two the program starts, the backend lists no adapter, and
// opening one is an error with a Fix; nothing aborts.
#include <roster/acquire.hpp>
#include <roster/backends/opencl.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

void expect_unavailable(std::string_view in_what, std::string_view in_fix) {
  auto adapters = roster::opencl::backend::enumerate();
  ASSERT_TRUE(adapters) << adapters.error().message();
  EXPECT_TRUE(adapters->empty());
  auto again = roster::enumerate_adapters(*roster::find_backend("opencl"));  // the core's guarded call
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->empty());
  for (int i = 0; i < 2; ++i) {  // the answer is stable, not a one-time failure
    auto d = roster::acquire("opencl:0");
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code(), roster::errc::unavailable) << d.error().message();
    EXPECT_NE(d.error().what().find(in_what), std::string_view::npos) << d.error().message();
    EXPECT_NE(d.error().fix().find(in_fix), std::string_view::npos) << d.error().message();
    EXPECT_NE(d.error().fix().find("ROSTER_DEVICE_SELECTOR='!opencl:*'"), std::string_view::npos);
  }
  // The rest of roster goes on: the CPU backend still opens.
  EXPECT_TRUE(roster::acquire("cpu"));
}

TEST(opencl_without_icd, lists_nothing_and_says_how_to_install_a_driver) {
  // The ICD loader also loads every driver OCL_ICD_FILENAMES names, whatever
  // OCL_ICD_VENDORS says (the H200 node sets it to PoCL and NVIDIA's driver):
  // no ICD means neither. The loader reads it at first use, after this.
  ::unsetenv("OCL_ICD_FILENAMES");
  const std::string folder = env("OCL_ICD_VENDORS");
  ASSERT_FALSE(folder.empty()) << "run through meson test opencl_no_icd (OCL_ICD_VENDORS=<a folder with no ICD file>)";
  std::filesystem::create_directories(folder);
  for (const auto& f : std::filesystem::directory_iterator(folder))
    ASSERT_NE(f.path().extension(), ".icd") << folder << " holds an ICD file";
  expect_unavailable("finds no platform", "OCL_ICD_VENDORS");
}

TEST(opencl_without_loader, lists_nothing_and_names_the_loader_package) {
  ASSERT_NE(env("ROSTER_OPENCL_LOADER").find("nonexistent"), std::string::npos)
      << "run through meson test opencl_no_loader (ROSTER_OPENCL_LOADER=/nonexistent/libOpenCL.so.1)";
  expect_unavailable("ICD loader", "ocl-icd-libopencl1");
}

TEST(opencl_forged_loader, the_loader_name_is_escaped_in_the_error) {
  // The name given, and what dlopen says of it, are text from outside roster:
  // a newline in them must not print a line of its own (hostile case 71).
  ASSERT_NE(env("ROSTER_OPENCL_LOADER").find('\n'), std::string::npos)
      << "run through meson test opencl_forged_loader (ROSTER_OPENCL_LOADER with a newline)";
  auto d = roster::acquire("opencl:0");
  ASSERT_FALSE(d);
  const std::string m = d.error().message();
  EXPECT_EQ(m.find("\nFix: rm"), std::string::npos) << m;
  EXPECT_NE(m.find("libnosuch-roster.so\\nFix: rm -rf ~"), std::string::npos) << m;
}

TEST(opencl_without_f64, double_buffers_are_refused_float_runs) {
  ASSERT_EQ(env("ROSTER_OPENCL_NO_F64"), "1") << "run through meson test opencl_nof64 (ROSTER_OPENCL_NO_F64=1)";
  auto adapters = roster::opencl::backend::enumerate();
  ASSERT_TRUE(adapters) << adapters.error().message();
  ASSERT_FALSE(adapters->empty());
  for (const auto& a : *adapters) EXPECT_FALSE(a.f64) << a.name;
  auto d = roster::acquire("opencl:0");
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_FALSE((*d)->caps().f64);
  auto x = (*d)->allocate<double>(16);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error().code(), roster::errc::unsupported) << x.error().message();
  EXPECT_FALSE(x.error().fix().empty());
  auto y = (*d)->allocate<float>(16);
  ASSERT_TRUE(y);
  roster::program p;
  p.fill(*y, 4).mul(*y, *y, 0.5);
  ASSERT_TRUE((*d)->dispatch(p));
  std::vector<float> h(16);
  ASSERT_TRUE((*d)->download(*y, std::span<float>(h)));
  EXPECT_EQ(h[15], 2.0f);
}

TEST(opencl_without_f64, a_malformed_value_is_an_error_naming_it) {
  ASSERT_EQ(env("ROSTER_OPENCL_NO_F64"), "1") << "run through meson test opencl_nof64";
  ASSERT_EQ(setenv("ROSTER_OPENCL_NO_F64", "perhaps", 1), 0);
  auto adapters = roster::opencl::backend::enumerate();
  ASSERT_EQ(setenv("ROSTER_OPENCL_NO_F64", "1", 1), 0);
  ASSERT_FALSE(adapters);
  EXPECT_EQ(adapters.error().code(), roster::errc::invalid_argument);
  EXPECT_NE(adapters.error().what().find("ROSTER_OPENCL_NO_F64='perhaps'"), std::string_view::npos)
      << adapters.error().message();
  EXPECT_FALSE(adapters.error().fix().empty());
}

}  // namespace
