// The Vulkan backend's ROSTER_VULKAN_* variables, read with roster::env:
// flags take 1/0, true/false, yes/no, on/off and refuse anything else with
// an error that quotes the value; ROSTER_VULKAN_MAX_RANGE is a whole number
// in range; ROSTER_VULKAN_LOADER names a library file or a library name, and
// a folder, a FIFO or a device is refused before dlopen (a FIFO used to hang).
//
// The instance reads its variables once per process, so each case of those
// runs in its own process: meson.build runs this binary once per filter with
// the environment the case names (Settings.* reads per device, in-process).
#include <roster/acquire.hpp>
#include <roster/backends/vulkan.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include "../support/scoped_env.hpp"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace {

void expect_malformed(const roster::error& e, const std::string& quoted) {
  EXPECT_EQ(e.code(), roster::errc::invalid_argument) << e.message();
  EXPECT_EQ(std::string(e.what()).rfind("vulkan: " + quoted + " is not ", 0), 0u) << e.message();
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
}

using roster_test::scoped_env;

bool have_adapter() {
  auto list = roster::vulkan::backend::enumerate();
  return list && !list->empty();
}

// Per device: ROSTER_VULKAN_VECTOR and ROSTER_VULKAN_MAX_RANGE.
TEST(Settings, DeviceVariablesAreCheckedWhenADeviceOpens) {
  if (!have_adapter()) GTEST_SKIP() << "no Vulkan adapter here (install mesa-vulkan-drivers for lavapipe)";
  {
    scoped_env v("ROSTER_VULKAN_VECTOR", "maybe");
    auto d = roster::acquire("vulkan:0");
    ASSERT_FALSE(d);
    expect_malformed(d.error(), "ROSTER_VULKAN_VECTOR='maybe'");
    EXPECT_NE(d.error().what().find("one of 1, true, yes, on or 0, false, no, off"), std::string_view::npos);
  }
  for (const char* word : {"off", "No", "FALSE", "0", "on", "yes"}) {
    scoped_env v("ROSTER_VULKAN_VECTOR", word);
    auto d = roster::acquire("vulkan:0");
    ASSERT_TRUE(d) << word << ": " << d.error().message();
  }
  for (const char* bad : {"abc", "8", "-4096", "99999999999", "4k"}) {
    scoped_env v("ROSTER_VULKAN_MAX_RANGE", bad);
    auto d = roster::acquire("vulkan:0");
    ASSERT_FALSE(d) << bad;
    expect_malformed(d.error(), std::string("ROSTER_VULKAN_MAX_RANGE='") + bad + "'");
    EXPECT_NE(d.error().what().find("a whole number from 16 to 4294967295"), std::string_view::npos);
  }
  scoped_env v("ROSTER_VULKAN_MAX_RANGE", "4096");
  auto d = roster::acquire("vulkan:0");
  ASSERT_TRUE(d) << d.error().message();
  auto a = (*d)->allocate<float>(5000), b = (*d)->allocate<float>(5000);  // 20 KB: chunks of 4 KiB
  ASSERT_TRUE(a && b);
  roster::program p;
  p.fill(*a, 2.0f).copy(*b, *a);
  ASSERT_TRUE((*d)->dispatch(p));
  std::vector<float> out(5000);
  ASSERT_TRUE((*d)->download(*b, std::span<float>(out)));
  EXPECT_EQ(out.front(), 2.0f);
  EXPECT_EQ(out.back(), 2.0f);
}

// Run with ROSTER_VULKAN_VALIDATION=banana.
TEST(BadValidation, IsAnErrorFromEnumerateAndOpen) {
  auto list = roster::vulkan::backend::enumerate();
  ASSERT_FALSE(list);
  expect_malformed(list.error(), "ROSTER_VULKAN_VALIDATION='banana'");
  auto d = roster::acquire("vulkan:0");
  ASSERT_FALSE(d);
  expect_malformed(d.error(), "ROSTER_VULKAN_VALIDATION='banana'");
}

// Run with ROSTER_VULKAN_VALIDATION=yes: the layer is on, as with 1.
TEST(ValidationWords, YesTurnsTheLayerOn) {
  ASSERT_TRUE(have_adapter()) << "the Vulkan suite runs where lavapipe or a GPU driver is installed";
  EXPECT_TRUE(roster::vulkan::validation().enabled);
}

// Run with ROSTER_VULKAN_NO_F64=2.
TEST(BadNoF64, IsAnErrorFromEnumerate) {
  auto list = roster::vulkan::backend::enumerate();
  ASSERT_FALSE(list);
  expect_malformed(list.error(), "ROSTER_VULKAN_NO_F64='2'");
}

// Run with ROSTER_VULKAN_NO_F64=on.
TEST(NoF64Words, OnTurnsDoubleOff) {
  auto list = roster::vulkan::backend::enumerate();
  ASSERT_TRUE(list) << list.error().message();
  ASSERT_FALSE(list->empty()) << "the Vulkan suite runs where lavapipe or a GPU driver is installed";
  for (const auto& a : *list) EXPECT_FALSE(a.f64) << a.spec();
}

// ROSTER_VULKAN_LOADER at something dlopen must not be given: refused with a
// Fix before dlopen, from enumerate and open alike. Each in its own process
// (the loader is opened once); the test sets the variable before first use.
void expect_refused_loader(const std::string& path, std::string_view kind) {
  ::setenv("ROSTER_VULKAN_LOADER", path.c_str(), 1);
  auto list = roster::vulkan::backend::enumerate();
  ASSERT_FALSE(list) << "enumerate() must say why, not list nothing";
  const auto& e = list.error();
  EXPECT_EQ(e.code(), roster::errc::invalid_argument) << e.message();
  EXPECT_NE(e.what().find("vulkan: ROSTER_VULKAN_LOADER='" + path + "' " + std::string(kind)), std::string_view::npos)
      << e.message();
  EXPECT_NE(e.fix().find("libvulkan.so.1"), std::string_view::npos) << e.message();
  auto d = roster::acquire("vulkan:0");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().what(), e.what());
}

std::string scratch(const char* name) {
  return (std::filesystem::temp_directory_path() / ("roster-loader-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

TEST(Loader, AFifoIsRefusedNotWaitedOn) {
  const std::string fifo = scratch("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused_loader(fifo, "is a FIFO, not a library file");
  ::unlink(fifo.c_str());
}

TEST(Loader, AFolderIsRefused) {
  const std::string dir = scratch("dir");
  std::filesystem::create_directory(dir);
  expect_refused_loader(dir, "is a folder, not a library file");
  std::filesystem::remove(dir);
}

TEST(Loader, ADeviceIsRefused) { expect_refused_loader("/dev/zero", "is a device, not a library file"); }

TEST(Loader, NotALibraryNameIsRefused) { expect_refused_loader("..", "is not a library name"); }

}  // namespace
