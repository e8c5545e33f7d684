// Backend plugins: ROSTER_PLUGIN_PATH (set by the test to a folder holding
// libroster_toy_plugin.so) is loaded on the first registered_backends(); the
// plugin's backend can be acquired and disappears when it is unloaded. Then
// the errors: a missing folder, a file dlopen rejects, a plugin unloaded twice.
// The tests run in order and share the process.
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

bool listed(std::string_view id) {
  auto all = roster::registered_backends();
  return std::any_of(all.begin(), all.end(), [&](const roster::backend_entry& e) { return e.id() == id; });
}

void expect_fix(const roster::error& e) {
  EXPECT_FALSE(e.fix().empty()) << e.message();
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
}

void run_triad(std::string_view spec) {
  auto dev = roster::acquire(spec);
  ASSERT_TRUE(dev.has_value()) << dev.error().message();
  EXPECT_EQ((*dev)->adapter().backend, "toy-plugin");
  auto a = (*dev)->allocate<double>(64), b = (*dev)->allocate<double>(64), c = (*dev)->allocate<double>(64);
  ASSERT_TRUE(a && b && c);
  roster::program p;
  p.fill(*b, 1.0).fill(*c, 2.0).grid_sync().triad(*a, *b, *c, 3.0);
  ASSERT_TRUE((*dev)->dispatch(p).has_value());
  std::vector<double> host(64);
  ASSERT_TRUE((*dev)->download<double>(*a, host).has_value());
  EXPECT_EQ(host[0], 7.0);
  EXPECT_EQ(host[63], 7.0);
}  // the device is released here, before the plugin is unloaded

std::string temp_folder() {
  std::string t = (std::filesystem::temp_directory_path() / "roster-plugins-XXXXXX").string();
  return mkdtemp(t.data()) != nullptr ? t : std::string();
}

}  // namespace

TEST(consumers_plugin, plugin_path_is_loaded_on_first_use) {
  ASSERT_NE(std::getenv("ROSTER_PLUGIN_PATH"), nullptr);
  EXPECT_TRUE(roster::loaded_plugins().empty());  // nothing before the first use
  EXPECT_TRUE(listed("toy-plugin"));
  const auto& once = roster::load_plugin_path_once();
  EXPECT_TRUE(once.has_value()) << once.error().message();
  ASSERT_EQ(roster::loaded_plugins().size(), 1u);
  EXPECT_NE(roster::loaded_plugins()[0].path.find("libroster_toy_plugin.so"), std::string::npos);
  EXPECT_NE(roster::find_backend("TOY-PLUGIN"), nullptr);
}

TEST(consumers_plugin, plugin_backend_can_be_acquired) { run_triad("toy-plugin:0"); }

TEST(consumers_plugin, unloaded_plugin_disappears) {
  ASSERT_EQ(roster::loaded_plugins().size(), 1u);
  const roster::plugin p = roster::loaded_plugins()[0];
  auto ok = roster::unload_plugin(p);
  ASSERT_TRUE(ok.has_value()) << ok.error().message();
  EXPECT_TRUE(roster::loaded_plugins().empty());
  EXPECT_EQ(dlopen(p.path.c_str(), RTLD_LAZY | RTLD_NOLOAD), nullptr) << "still mapped";
  EXPECT_FALSE(listed("toy-plugin"));
  EXPECT_EQ(roster::find_backend("toy-plugin"), nullptr);
  EXPECT_FALSE(roster::acquire("toy-plugin").has_value());

  // Unloading it again is an error, not a second dlclose.
  auto again = roster::unload_plugin(p);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), roster::errc::not_found);
  expect_fix(again.error());
}

TEST(consumers_plugin, explicit_load_and_unload) {
  const std::string folder = std::getenv("ROSTER_PLUGIN_PATH");
  auto loaded = roster::load_plugins(folder);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message();
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_TRUE(listed("toy-plugin"));
  // Loading the same file again returns the plugin already loaded.
  auto same = roster::load_plugin((*loaded)[0].path);
  ASSERT_TRUE(same.has_value()) << same.error().message();
  EXPECT_EQ(same->handle, (*loaded)[0].handle);
  EXPECT_EQ(roster::loaded_plugins().size(), 1u);
  run_triad("toy-plugin");
  ASSERT_TRUE(roster::unload_plugin((*loaded)[0]).has_value());
  EXPECT_FALSE(listed("toy-plugin"));
}

TEST(consumers_plugin, missing_folder_is_an_error) {
  auto r = roster::load_plugins("/nonexistent/roster-plugins");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), roster::errc::not_found);
  EXPECT_NE(r.error().what().find("/nonexistent/roster-plugins"), std::string::npos) << r.error().message();
  expect_fix(r.error());

  // Through the environment, the message names the variable.
  const std::string saved = std::getenv("ROSTER_PLUGIN_PATH");
  setenv("ROSTER_PLUGIN_PATH", "/nonexistent/roster-plugins", 1);
  auto env = roster::load_plugins();
  setenv("ROSTER_PLUGIN_PATH", saved.c_str(), 1);
  ASSERT_FALSE(env.has_value());
  EXPECT_EQ(env.error().message().rfind("ROSTER_PLUGIN_PATH: ", 0), 0u) << env.error().message();
  expect_fix(env.error());
}

TEST(consumers_plugin, file_that_is_not_a_plugin_is_refused_before_dlopen) {
  const std::string folder = temp_folder();
  ASSERT_FALSE(folder.empty());
  std::ofstream(folder + "/libbroken.so") << "not an ELF file";
  std::ofstream(folder + "/README.txt") << "not a plugin name: skipped";
  auto r = roster::load_plugins(folder);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), roster::errc::invalid_argument);
  EXPECT_NE(r.error().what().find("libbroken.so"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().what().find("is not a roster plugin: not an ELF file"), std::string::npos)
      << r.error().message();
  expect_fix(r.error());
  EXPECT_TRUE(roster::loaded_plugins().empty());

  auto missing = roster::load_plugin(folder + "/libabsent.so");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), roster::errc::not_found);
  expect_fix(missing.error());
  std::filesystem::remove_all(folder);
}

TEST(consumers_plugin, other_plugin_folders_still_load_past_a_failure) {
  auto r = roster::load_plugins("/nonexistent/roster-plugins:" + std::string(std::getenv("ROSTER_PLUGIN_PATH")));
  ASSERT_FALSE(r.has_value());  // the first error is returned...
  EXPECT_EQ(r.error().code(), roster::errc::not_found);
  ASSERT_EQ(roster::loaded_plugins().size(), 1u);  // ...and the good folder was loaded
  EXPECT_TRUE(listed("toy-plugin"));
  ASSERT_TRUE(roster::unload_plugin(roster::loaded_plugins()[0]).has_value());
}

TEST(consumers_plugin, plugin_kept_mapped_by_another_handle_is_an_error) {
  auto loaded = roster::load_plugins(std::getenv("ROSTER_PLUGIN_PATH"));
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message();
  ASSERT_EQ(loaded->size(), 1u);
  const roster::plugin p = (*loaded)[0];
  void* other = dlopen(p.path.c_str(), RTLD_NOW | RTLD_LOCAL);  // someone else's handle
  ASSERT_NE(other, nullptr) << dlerror();

  auto r = roster::unload_plugin(p);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), roster::errc::unavailable);
  EXPECT_NE(r.error().what().find("stays loaded after dlclose"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().fix().find("-fno-gnu-unique"), std::string::npos) << r.error().message();
  expect_fix(r.error());
  EXPECT_TRUE(listed("toy-plugin"));  // still mapped, so still registered
  ASSERT_EQ(roster::loaded_plugins().size(), 1u);  // and still roster's to unload

  ASSERT_EQ(dlclose(other), 0);
  EXPECT_TRUE(listed("toy-plugin"));
  ASSERT_TRUE(roster::unload_plugin(roster::loaded_plugins()[0]).has_value());
  EXPECT_FALSE(listed("toy-plugin"));
}
