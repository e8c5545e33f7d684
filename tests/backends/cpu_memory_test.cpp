// The CPU backend's memory: an allocation larger than the memory available
// (MemAvailable, the cgroup v2 or v1 limit) is refused before it is touched,
// and buffer slots are reused without a released handle ever matching again,
// so allocate/release churn does not grow the process.
#include <roster/backends/cpu.hpp>
#include <roster/backends/cpu/detail/memory.hpp>
#include <roster/backends/cpu/detail/slots.hpp>
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include "../support/cpu_device.hpp"
#include "../support/held_bytes.hpp"

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// A fake /proc and /sys under a fresh temporary folder, removed at the end.
struct fake_root {
  fs::path root;
  fake_root() {
    root = fs::temp_directory_path() / ("roster-cpu-memory-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "proc" / "self");
    fs::create_directories(root / "sys");
  }
  ~fake_root() { fs::remove_all(root); }
  void write(const std::string& rel, const std::string& text) const {
    const fs::path p = root / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string proc() const { return (root / "proc").string(); }
  std::string sys() const { return (root / "sys").string(); }
};

constexpr std::uint64_t mib = std::uint64_t{1} << 20;

TEST(cpu_memory, mem_available_from_meminfo) {
  fake_root r;
  r.write("proc/meminfo", "MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    2048 kB\n");
  const auto m = roster::cpu::detail::available_memory(r.proc(), r.sys());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->bytes, 2048u * 1024u);
  EXPECT_NE(m->source.find("MemAvailable"), std::string::npos) << m->source;
}

TEST(cpu_memory, a_cgroup_v2_limit_lowers_it_less_the_use_beyond_droppable_cache) {
  fake_root r;
  r.write("proc/meminfo", "MemAvailable: 8388608 kB\n");  // 8 GiB
  r.write("proc/self/cgroup", "0::/job.slice/step\n");
  r.write("sys/fs/cgroup/job.slice/step/memory.max", "max\n");
  r.write("sys/fs/cgroup/job.slice/memory.max", std::to_string(512 * mib) + "\n");
  r.write("sys/fs/cgroup/job.slice/memory.current", std::to_string(200 * mib) + "\n");
  // 200 MiB used, 60 MiB of it page cache of which 10 MiB shared memory: 150 MiB count.
  r.write("sys/fs/cgroup/job.slice/memory.stat", "anon 1\nfile " + std::to_string(60 * mib) + "\nfile_mapped 7\nshmem " +
                                                     std::to_string(10 * mib) + "\n");
  const auto m = roster::cpu::detail::available_memory(r.proc(), r.sys());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->bytes, (512 - 150) * mib) << m->source;
  EXPECT_NE(m->source.find("cgroup v2"), std::string::npos) << m->source;
  EXPECT_NE(m->source.find("/job.slice"), std::string::npos) << m->source;
}

TEST(cpu_memory, a_cgroup_v1_memory_limit_lowers_it) {
  fake_root r;
  r.write("proc/meminfo", "MemAvailable: 8388608 kB\n");
  r.write("proc/self/cgroup", "5:cpu,cpuacct:/batch\n4:blkio,memory:/batch/job7\n");
  r.write("sys/fs/cgroup/memory/batch/job7/memory.limit_in_bytes", std::to_string(64 * mib) + "\n");
  r.write("sys/fs/cgroup/memory/batch/job7/memory.usage_in_bytes", std::to_string(6 * mib) + "\n");
  r.write("sys/fs/cgroup/memory/batch/job7/memory.stat", "cache 1\ntotal_cache " + std::to_string(2 * mib) + "\n");
  r.write("sys/fs/cgroup/memory/batch/memory.limit_in_bytes", "9223372036854771712\n");  // v1's "no limit"
  const auto m = roster::cpu::detail::available_memory(r.proc(), r.sys());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->bytes, 60 * mib) << m->source;
  EXPECT_NE(m->source.find("cgroup v1"), std::string::npos) << m->source;
}

TEST(cpu_memory, no_limit_and_unreadable_files_leave_mem_available) {
  fake_root r;
  r.write("proc/meminfo", "MemAvailable: 1024 kB\n");
  r.write("proc/self/cgroup", "0::/a\n");
  r.write("sys/fs/cgroup/a/memory.current", "5\n");  // no memory.max
  // A FIFO where a limit would be: skipped, not waited on.
  ASSERT_EQ(::mkfifo((r.root / "sys/fs/cgroup/memory.max").c_str(), 0600), 0);
  const auto m = roster::cpu::detail::available_memory(r.proc(), r.sys());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->bytes, 1024u * 1024u);
  fake_root empty;
  EXPECT_FALSE(roster::cpu::detail::available_memory(empty.proc(), empty.sys()));
}

// The process's own cgroup line, as the allocation check reads it.
std::optional<std::string> own_cgroup(bool& v2) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c2 == std::string::npos) continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
    if (line.compare(0, c1, "0") == 0 && controllers.empty()) {
      v2 = true;
      return path;
    }
    if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      v2 = false;
      return path;
    }
  }
  return std::nullopt;
}

struct scoped_sysfs {
  std::optional<std::string> saved;
  explicit scoped_sysfs(const std::string& root) {
    if (const char* v = std::getenv("ROSTER_SYSFS_ROOT")) saved = v;
    ::setenv("ROSTER_SYSFS_ROOT", root.c_str(), 1);
  }
  ~scoped_sysfs() {
    if (saved) ::setenv("ROSTER_SYSFS_ROOT", saved->c_str(), 1);
    else ::unsetenv("ROSTER_SYSFS_ROOT");
  }
};

TEST(cpu_memory, an_allocation_beyond_the_cgroup_limit_is_refused_before_it_is_made) {
  bool v2 = false;
  const auto path = own_cgroup(v2);
  ASSERT_TRUE(path) << "this process has no cgroup line for memory in /proc/self/cgroup";
  fake_root r;  // a 64 MiB limit on this process's own cgroup, under a fake /sys
  const std::string dir = v2 ? "sys/fs/cgroup" + *path : "sys/fs/cgroup/memory" + *path;
  r.write(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"), std::to_string(64 * mib) + "\n");
  r.write(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"), "0\n");
  scoped_sysfs sysfs(r.sys());
  auto d = roster::acquire("cpu");
  ASSERT_TRUE(d) << d.error().message();
  auto big = (*d)->allocate<double>(16 * mib);  // 128 MiB
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code(), roster::errc::out_of_memory);
  EXPECT_NE(big.error().what().find("cpu:0: allocate: 16777216 double elements need 128.0 MiB, more than the 64.0 MiB "
                                    "available"),
            std::string_view::npos)
      << big.error().message();
  EXPECT_NE(big.error().what().find(v2 ? "cgroup v2" : "cgroup v1"), std::string_view::npos) << big.error().message();
  EXPECT_NE(big.error().message().find("\nFix: "), std::string::npos);
  auto fits = (*d)->allocate<double>(mib);  // 8 MiB
  ASSERT_TRUE(fits) << fits.error().message();
  EXPECT_TRUE((*d)->release(*fits));
}

TEST(cpu_memory, an_allocation_beyond_the_host_is_refused_with_its_figures) {
  auto d = roster::acquire("cpu");
  ASSERT_TRUE(d) << d.error().message();
  // 2^40 doubles (8 TiB): refused by the check, never handed to the allocator.
  auto huge = (*d)->allocate<double>(std::size_t{1} << 40);
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code(), roster::errc::out_of_memory);
  EXPECT_NE(huge.error().what().find("need 8192.0 GiB, more than the "), std::string_view::npos)
      << huge.error().message();
  EXPECT_NE(huge.error().what().find(" available ("), std::string_view::npos) << huge.error().message();
  EXPECT_NE(huge.error().fix().find("release buffers"), std::string_view::npos) << huge.error().message();
}

TEST(cpu_slots, a_released_slot_is_reused_and_its_old_handle_refused) {
  auto d = roster_test::open_cpu_device();
  ASSERT_TRUE(d) << d.error().message();
  auto a = (*d)->allocate<double>(16);
  ASSERT_TRUE(a);
  ASSERT_TRUE((*d)->release(*a));
  auto b = (*d)->allocate<double>(16);
  ASSERT_TRUE(b);
  EXPECT_EQ(a->slot & roster::cpu::detail::slot_index_mask, b->slot & roster::cpu::detail::slot_index_mask)
      << "the released index is reused";
  EXPECT_NE(a->slot, b->slot) << "with a new generation";
  EXPECT_EQ((*d)->address(*a), nullptr);
  EXPECT_NE((*d)->address(*b), nullptr);
  auto stale = (*d)->release(*a);
  ASSERT_FALSE(stale);
  EXPECT_NE(stale.error().what().find("not live on this device"), std::string_view::npos) << stale.error().message();
  std::vector<double> host(16);
  EXPECT_FALSE((*d)->download(*a, std::span<double>(host)));
  EXPECT_TRUE((*d)->download(*b, std::span<double>(host)));
}

TEST(cpu_slots, a_handle_never_matches_again_across_every_generation) {
  roster::cpu::detail::cpu_slots slots;
  int dummy = 0;
  std::uint32_t first = 0;
  ASSERT_TRUE(slots.insert({&dummy, roster::element_type::f64, 1}, first));
  slots.erase(first);
  std::set<std::uint32_t> seen{first};
  // Past the generations of one index: it is retired, never handed out again.
  for (std::uint32_t i = 0; i < roster::cpu::detail::slot_generations + 10; ++i) {
    std::uint32_t h = 0;
    ASSERT_TRUE(slots.insert({&dummy, roster::element_type::f64, 1}, h));
    EXPECT_TRUE(seen.insert(h).second) << "handle " << h << " came back at round " << i;
    EXPECT_EQ(slots.find(first), nullptr);
    EXPECT_NE(slots.find(h), nullptr);
    slots.erase(h);
    EXPECT_EQ(slots.find(h), nullptr);
  }
  EXPECT_EQ(slots.capacity(), 2u) << "one index retired after " << roster::cpu::detail::slot_generations << " uses";
}

// What this process holds in bytes (tests/support/held_bytes.hpp: the resident
// set, or under a sanitizer its allocator's bytes).
std::uint64_t resident_bytes() { return roster_test::held_bytes(); }

TEST(cpu_slots, allocate_release_churn_does_not_grow_the_process) {
  auto d = roster_test::open_cpu_device();
  ASSERT_TRUE(d) << d.error().message();
  auto churn = [&](int pairs) {
    for (int i = 0; i < pairs; ++i) {
      auto b = (*d)->allocate<float>(8);
      ASSERT_TRUE(b) << b.error().message();
      ASSERT_TRUE((*d)->release(*b));
    }
  };
  churn(2000);  // warm the allocator
  const std::uint64_t before = resident_bytes();
  ASSERT_GT(before, 0u);
  churn(400000);
  const std::uint64_t after = resident_bytes();
  // A table that never reused a slot grew 24 bytes per pair here: 9.6 MB.
  EXPECT_LT(after, before + 1 * mib) << "the process grew from " << before << " to " << after << " bytes";
}

}  // namespace
