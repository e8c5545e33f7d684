// CPU locality and pinning: CPU lists, the choice within the launcher's
// binding, and bind_rank over a synthetic sysfs tree with two NUMA nodes
// (the H200 node has one, with all CPUs local to both GPUs).
#include "test_backends.hpp"

#include <roster/detail/devices/cpu_affinity.hpp>

#include <gtest/gtest.h>

#include <sched.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {
using namespace devices_test;
using roster::detail::choose_cpus;
using roster::detail::cpu_locality;
using roster::detail::format_cpu_list;
using roster::detail::parse_cpu_list;

TEST(cpu_list, parses_and_formats_linux_cpu_lists) {
  auto l = parse_cpu_list("0-3,8,10-11\n");
  ASSERT_TRUE(l);
  EXPECT_EQ(*l, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(format_cpu_list(*l), "0-3,8,10-11");
  EXPECT_TRUE(parse_cpu_list("")->empty());
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("0-99999999"));  // past CPU_SETSIZE: refused, not looped over
  EXPECT_FALSE(parse_cpu_list("a-b"));
  EXPECT_FALSE(parse_cpu_list("1,,2"));
}

TEST(cpu_choice, stays_within_the_launchers_cpus_and_splits_among_sharing_ranks) {
  cpu_locality gpu{{0, 1, 2, 3, 4, 5, 6, 7}, 0};
  auto all = choose_cpus(gpu, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0, 1);
  EXPECT_EQ(format_cpu_list(all.cpus), "0-7");
  auto within = choose_cpus(gpu, {2, 3, 9}, 0, 1);  // the launcher bound this rank to 2,3,9
  EXPECT_EQ(format_cpu_list(within.cpus), "2-3");
  auto second_of_two = choose_cpus(gpu, {0, 1, 2, 3, 4, 5, 6, 7}, 1, 2);
  EXPECT_EQ(format_cpu_list(second_of_two.cpus), "4-7");
  auto disjoint = choose_cpus(gpu, {8, 9}, 0, 1);
  EXPECT_EQ(format_cpu_list(disjoint.cpus), "8-9");
  EXPECT_NE(disjoint.reason.find("is allowed by the launcher's binding"), std::string::npos) << disjoint.reason;
  auto unknown = choose_cpus(cpu_locality{}, {0, 1}, 0, 1);
  EXPECT_EQ(format_cpu_list(unknown.cpus), "0-1");
  EXPECT_NE(unknown.reason.find("unknown"), std::string::npos);
}

class sysfs_binding : public ::testing::Test {
 protected:
  std::filesystem::path root = std::filesystem::path(::testing::TempDir()) / "roster-affinity-sysfs";
  cpu_set_t saved{};
  void SetUp() override {
    register_test_backends();
    for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "ROSTER_DEVICE_SELECTOR",
                          "ROSTER_REQUIRE", "ROSTER_BIND_CPUS", "CUDA_VISIBLE_DEVICES"})
      unsetenv(v);
    ASSERT_EQ(::sched_getaffinity(0, sizeof saved, &saved), 0);
    std::filesystem::remove_all(root);
    // Two GPUs on two NUMA nodes: CPU 0 is local to the first, CPU 1 to the second.
    write("0000:00:06.0", "0", "0");
    write("0000:00:07.0", "1", "1");
    setenv("ROSTER_SYSFS_ROOT", root.c_str(), 1);
    set_adapters<0>({make_adapter(backend_a, roster::device_type::discrete_gpu, 1, "0000:00:06.0"),
                     make_adapter(backend_a, roster::device_type::discrete_gpu, 2, "0000:00:07.0")});
    set_adapters<1>({});
    set_adapters<2>({});
    roster::rescan();
  }
  void TearDown() override {
    ::sched_setaffinity(0, sizeof saved, &saved);
    for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "ROSTER_SYSFS_ROOT",
                          "ROSTER_BIND_CPUS"})
      unsetenv(v);
    set_adapters<0>({});
    std::filesystem::remove_all(root);
    roster::rescan();
  }
  void write(const char* pci, const char* cpus, const char* numa) {
    auto dir = root / "bus/pci/devices" / pci;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "local_cpulist") << cpus << "\n";
    std::ofstream(dir / "numa_node") << numa << "\n";
  }
};

TEST_F(sysfs_binding, reports_the_cpus_local_to_the_bound_gpu) {
  if (CPU_COUNT(&saved) < 2 || !CPU_ISSET(0, &saved) || !CPU_ISSET(1, &saved))
    GTEST_SKIP() << "needs CPUs 0 and 1 in this process's affinity";
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  auto b = roster::bind_rank();
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(b->circuit->adapter.pci_address, "0000:00:07.0");
  EXPECT_EQ(b->cpuset(), "1");
  EXPECT_EQ(b->numa_node, 1);
  EXPECT_FALSE(b->pinned);  // opt-in: not pinned by default
  cpu_set_t now;
  ASSERT_EQ(::sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_TRUE(CPU_EQUAL(&now, &saved));
}

TEST_F(sysfs_binding, pins_when_asked) {
  if (CPU_COUNT(&saved) < 2 || !CPU_ISSET(0, &saved) || !CPU_ISSET(1, &saved))
    GTEST_SKIP() << "needs CPUs 0 and 1 in this process's affinity";
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  setenv("ROSTER_BIND_CPUS", "1", 1);
  auto b = roster::bind_rank();
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_TRUE(b->pinned) << b->cpu_reason;
  EXPECT_EQ(b->cpuset(), "0");
  cpu_set_t now;
  ASSERT_EQ(::sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_EQ(CPU_COUNT(&now), 1);
  EXPECT_TRUE(CPU_ISSET(0, &now));
  unsetenv("ROSTER_BIND_CPUS");
  ::sched_setaffinity(0, sizeof saved, &saved);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  auto c = roster::bind_rank(roster::bind_options{.pin_cpus = true});
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->pinned);
  ASSERT_EQ(::sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_TRUE(CPU_ISSET(1, &now));
  EXPECT_FALSE(CPU_ISSET(0, &now));
}

// Case 32 (docs/hostile.md): ROSTER_BIND_CPUS=false pinned (any set value
// but "0" did). Every no word leaves the process unpinned; a word that is
// no boolean is an error naming the variable, and nothing is pinned.
TEST_F(sysfs_binding, bind_cpus_takes_the_boolean_words_and_refuses_others) {
  if (CPU_COUNT(&saved) < 2 || !CPU_ISSET(0, &saved) || !CPU_ISSET(1, &saved))
    GTEST_SKIP() << "needs CPUs 0 and 1 in this process's affinity";
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  cpu_set_t now;
  for (const char* no : {"false", "off", "no", "0", "FALSE", " "}) {
    setenv("ROSTER_BIND_CPUS", no, 1);
    auto b = roster::bind_rank();
    ASSERT_TRUE(b) << no << ": " << b.error().message();
    EXPECT_FALSE(b->pinned) << "ROSTER_BIND_CPUS='" << no << "' pinned";
    ASSERT_EQ(::sched_getaffinity(0, sizeof now, &now), 0);
    EXPECT_TRUE(CPU_EQUAL(&now, &saved)) << no;
  }
  for (const char* yes : {"true", "on", "YES"}) {
    setenv("ROSTER_BIND_CPUS", yes, 1);
    auto b = roster::bind_rank();
    ASSERT_TRUE(b) << yes << ": " << b.error().message();
    EXPECT_TRUE(b->pinned) << yes;
    ::sched_setaffinity(0, sizeof saved, &saved);
  }
  setenv("ROSTER_BIND_CPUS", "pin", 1);
  auto bad = roster::bind_rank();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), roster::errc::invalid_argument);
  EXPECT_NE(bad.error().what().find("bind_rank: ROSTER_BIND_CPUS='pin' is not one of 1, true, yes, on or 0, false"),
            std::string::npos)
      << bad.error().message();
  EXPECT_FALSE(bad.error().fix().empty());
  ASSERT_EQ(::sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_TRUE(CPU_EQUAL(&now, &saved));
}

}  // namespace
