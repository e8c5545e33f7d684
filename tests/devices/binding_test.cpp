// Placement at job scale: the pool every rank of a node builds alike
// (occupancy and records never reorder it under a launcher), the binding
// policies over fake nodes of two and eight GPUs on one and two NUMA nodes,
// the launchers' variables, and the job check over every rank's record.
#include "test_backends.hpp"

#include <roster/binding.hpp>
#include <roster/detail/circuits/occupancy_reader.hpp>
#include <roster/detail/decision/placement.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {
using namespace devices_test;
using roster::bind_policy;
using roster::gpu_bind;
using roster::detail::placement_input;
using roster::detail::place_rank;

constexpr const char* cleared[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_LOCALID",
                                   "FLUX_TASK_LOCAL_ID", "JSM_NAMESPACE_LOCAL_RANK", "JSM_NAMESPACE_LOCAL_SIZE",
                                   "ROSTER_DEVICE_SELECTOR", "ROSTER_DEVICE", "ROSTER_REQUIRE", "ROSTER_GPU_BIND",
                                   "ROSTER_TUNING", "ROSTER_TUNING_PATH", "CUDA_VISIBLE_DEVICES", "ROSTER_BIND_CPUS"};

std::vector<int> range(int lo, int hi) {  // [lo, hi]
  std::vector<int> out;
  for (int c = lo; c <= hi; ++c) out.push_back(c);
  return out;
}

// A node: `gpus` devices spread evenly over `numa` nodes of `cpus` CPUs in all.
placement_input node(std::size_t gpus, int numa, int cpus, std::size_t ranks) {
  placement_input in;
  in.size = ranks;
  in.online = range(0, cpus - 1);
  const int per = cpus / numa;
  for (std::size_t g = 0; g < gpus; ++g) {
    const int n = static_cast<int>(g * static_cast<std::size_t>(numa) / gpus);
    in.pool_cpus.push_back(range(n * per, n * per + per - 1));
  }
  return in;
}

// Places every rank, given each rank's CPUs; returns the slot of each.
std::vector<std::size_t> place_all(const bind_policy& p, placement_input in,
                                   const std::vector<std::vector<int>>& cpus_of_rank, bool peers = false) {
  std::vector<std::size_t> out;
  if (peers) in.peers = cpus_of_rank;
  for (std::size_t r = 0; r < in.size; ++r) {
    in.rank = r;
    in.allowed = cpus_of_rank[r];
    out.push_back(place_rank(p, in).slot);
  }
  return out;
}

// No two ranks on one device while a device idles; every rank local to its device.
void expect_spread_and_local(const placement_input& in, const std::vector<std::size_t>& slots,
                             const std::vector<std::vector<int>>& cpus_of_rank, const std::string& what) {
  std::map<std::size_t, int> count;
  for (auto s : slots) ++count[s];
  const bool idle = count.size() < in.pool_cpus.size();
  for (const auto& [slot, n] : count) EXPECT_FALSE(n > 1 && idle) << what << ": slot " << slot << " holds " << n;
  for (std::size_t r = 0; r < slots.size(); ++r) {
    const auto& local = in.pool_cpus[slots[r]];
    for (int c : cpus_of_rank[r])
      EXPECT_TRUE(std::find(local.begin(), local.end(), c) != local.end())
          << what << ": rank " << r << " on CPU " << c << " is far from device " << slots[r];
  }
}

TEST(placement, closest_spreads_ranks_bound_to_cores_over_the_devices_of_their_socket) {
  const bind_policy closest;
  auto in = node(8, 2, 32, 8);
  // Blocked: rank r on cores 4r..4r+3 (ranks 0-3 on socket 0).
  std::vector<std::vector<int>> blocked, cyclic, socket;
  for (int r = 0; r < 8; ++r) {
    blocked.push_back(range(4 * r, 4 * r + 3));
    cyclic.push_back({16 * (r % 2) + r / 2});        // dealt over sockets, one core each
    socket.push_back(range(16 * (r % 2), 16 * (r % 2) + 15));  // dealt over sockets, bound to the socket
  }
  auto b = place_all(closest, in, blocked);
  expect_spread_and_local(in, b, blocked, "blocked");
  EXPECT_EQ(std::set<std::size_t>(b.begin(), b.end()).size(), 8u);
  auto c = place_all(closest, in, cyclic);
  expect_spread_and_local(in, c, cyclic, "cyclic");
  EXPECT_EQ(std::set<std::size_t>(c.begin(), c.end()).size(), 8u);
  auto s = place_all(closest, in, socket);
  expect_spread_and_local(in, s, socket, "socket");
  EXPECT_EQ(std::set<std::size_t>(s.begin(), s.end()).size(), 8u);
}

TEST(placement, closest_with_the_communicators_cpu_sets_is_exact_where_cpus_alone_cannot_tell) {
  // Four ranks all bound to socket 0, dealt in no pattern: only the peers tell them apart.
  auto in = node(4, 2, 32, 4);
  std::vector<std::vector<int>> cpus = {range(0, 15), range(16, 31), range(0, 15), range(16, 31)};
  auto guessed = place_all(bind_policy{}, in, cpus);
  expect_spread_and_local(in, guessed, cpus, "by rank");
  std::vector<std::vector<int>> same = {range(0, 15), range(0, 15), range(16, 31), range(16, 31)};
  auto exact = place_all(bind_policy{}, in, same, true);
  expect_spread_and_local(in, exact, same, "with peers");
  EXPECT_EQ(std::set<std::size_t>(exact.begin(), exact.end()).size(), 4u);
}

TEST(placement, unrestricted_ranks_go_round_robin_and_share_only_when_the_pool_is_short) {
  auto in = node(2, 1, 16, 3);
  std::vector<std::vector<int>> all(3, range(0, 15));
  auto slots = place_all(bind_policy{}, in, all);
  EXPECT_EQ(slots, (std::vector<std::size_t>{0, 1, 0}));
  in.rank = 2;
  in.allowed = all[2];
  auto on = roster::detail::ranks_on(bind_policy{}, in, 0);
  ASSERT_TRUE(on);
  EXPECT_EQ(*on, (std::vector<std::size_t>{0, 2}));
  EXPECT_NE(place_rank(bind_policy{}, in).why.find("did not restrict"), std::string::npos);
}

TEST(placement, map_gpu_and_single_place_as_slurm_names_them) {
  auto in = node(4, 1, 16, 6);
  std::vector<std::vector<int>> all(6, range(0, 15));
  auto map = roster::parse_bind_policy("map_gpu:3,2,1");
  ASSERT_TRUE(map) << map.error().message();
  EXPECT_EQ(place_all(*map, in, all), (std::vector<std::size_t>{3, 2, 1, 3, 2, 1}));
  auto single = roster::parse_bind_policy("SINGLE:2");
  ASSERT_TRUE(single);
  EXPECT_EQ(single->str(), "single:2");
  EXPECT_EQ(place_all(*single, in, all), (std::vector<std::size_t>{0, 0, 1, 1, 2, 2}));
  auto wraps = roster::parse_bind_policy("map_gpu:9");
  ASSERT_TRUE(wraps);
  in.rank = 0;
  EXPECT_NE(place_rank(*wraps, in).why.find("wrapped"), std::string::npos);
}

TEST(placement, a_bad_policy_is_an_error_that_quotes_it) {
  for (const char* bad : {"closer", "single:0", "single:x", "map_gpu:", "map_gpu:1,,2", "map_gpu:-1"}) {
    auto p = roster::parse_bind_policy(bad);
    ASSERT_FALSE(p) << bad;
    EXPECT_EQ(p.error().code(), roster::errc::invalid_argument);
    EXPECT_NE(p.error().message().find(std::string("'") + bad + "'"), std::string::npos) << p.error().message();
    EXPECT_NE(p.error().message().find("Fix: "), std::string::npos);
  }
  // A newline in the value cannot forge a Fix line of its own.
  auto forged = roster::parse_bind_policy("x\nFix: rm -rf ~");
  ASSERT_FALSE(forged);
  EXPECT_EQ(forged.error().message().find("\nFix: rm"), std::string::npos) << forged.error().message();
}

class binding : public ::testing::Test {
 protected:
  std::filesystem::path root = std::filesystem::path(::testing::TempDir()) / "roster-binding-sysfs";
  void SetUp() override {
    register_test_backends();
    for (const char* v : cleared) ::unsetenv(v);
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root);
    ::setenv("ROSTER_SYSFS_ROOT", root.c_str(), 1);  // no locality known: the pool order decides
    ::setenv("ROSTER_TUNING", "off", 1);
    ASSERT_TRUE(roster::set_node_ranks(std::nullopt));
    set_adapters<0>({});
    set_adapters<1>({});
    set_adapters<2>({});
    busy_pci().clear();
    roster::detail::set_occupancy_source_for_testing([](const roster::adapter_info& a) {
      roster::device_occupancy o;
      o.source = "recorded";
      o.memory_total = 150ull << 30;
      o.memory_free = 140ull << 30;
      if (busy_pci().count(a.pci_address) != 0) o.pids = {4242};  // a sibling rank's context
      return std::optional<roster::device_occupancy>(o);
    });
  }
  void TearDown() override {
    for (const char* v : cleared) ::unsetenv(v);
    ::unsetenv("ROSTER_SYSFS_ROOT");
    ASSERT_TRUE(roster::set_node_ranks(std::nullopt));
    set_adapters<0>({});
    set_adapters<1>({});
    roster::rescan();
    std::filesystem::remove_all(root);
  }
  static std::set<std::string>& busy_pci() {
    static std::set<std::string> s;
    return s;
  }
  static std::string bound_pci(int rank, int size) {
    ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank).c_str(), 1);
    ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(size).c_str(), 1);
    roster::rescan();
    auto b = roster::bind_rank();
    EXPECT_TRUE(b) << b.error().message();
    return b ? b->circuit->adapter.pci_address : std::string{};
  }
};

// The case of issue 38: rank 0 took GPU 0 and opened its context; rank 1
// looks a moment later. Its GPU must not depend on when it looked.
TEST_F(binding, rank_one_takes_gpu_one_whether_gpu_zero_is_busy_or_idle) {
  set_adapters<0>({make_adapter(backend_a, roster::device_type::discrete_gpu, 1, "0000:00:06.0", "Test H200"),
                   make_adapter(backend_a, roster::device_type::discrete_gpu, 2, "0000:00:07.0", "Test H200")});
  EXPECT_EQ(bound_pci(1, 2), "0000:00:07.0");
  busy_pci().insert("0000:00:06.0");
  EXPECT_EQ(bound_pci(1, 2), "0000:00:07.0");
  EXPECT_EQ(bound_pci(0, 2), "0000:00:06.0");
  // A lone process still goes to the idle GPU first.
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  roster::rescan();
  auto alone = roster::bind_rank();
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->circuit->adapter.pci_address, "0000:00:07.0");
}

TEST_F(binding, the_same_pool_whatever_the_occupancy_on_eight_gpus_and_mig_like_uuids) {
  std::vector<roster::adapter_info> gpus;
  for (int g = 0; g < 8; ++g)
    gpus.push_back(make_adapter(backend_a, roster::device_type::discrete_gpu, static_cast<std::uint8_t>(8 - g),
                                g < 6 ? "0000:0" + std::to_string(g) + ":00.0" : std::string{}, "Test GPU"));
  set_adapters<0>(gpus);
  std::vector<std::string> idle_order, busy_order;
  for (int r = 0; r < 8; ++r) idle_order.push_back(bound_pci(r, 8) + "/" + std::to_string(r));
  for (int g = 0; g < 8; g += 2) busy_pci().insert(gpus[static_cast<std::size_t>(g)].pci_address);
  std::set<std::string> seen;
  for (int r = 0; r < 8; ++r) {
    ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(r).c_str(), 1);
    ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "8", 1);
    roster::rescan();
    auto b = roster::bind_rank();
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_TRUE(seen.insert(b->circuit->identity()).second) << "two ranks on " << b->circuit->identity();
    busy_order.push_back(b->circuit->adapter.pci_address + "/" + std::to_string(r));
    EXPECT_TRUE(b->warning.empty()) << b->warning;
  }
  EXPECT_EQ(idle_order, busy_order);
}

TEST_F(binding, records_never_reorder_the_pool_under_a_launcher) {
  auto g0 = make_adapter(backend_a, roster::device_type::discrete_gpu, 1, "0000:00:06.0");
  auto g1 = make_adapter(backend_a, roster::device_type::discrete_gpu, 2, "0000:00:07.0");
  set_adapters<0>({g0, g1});
  std::vector<roster::circuit> list{roster::circuit{}, roster::circuit{}};
  list[0].adapter = g1;  // the order a record would give: GPU 1 first
  list[1].adapter = g0;
  auto pool = roster::detail::rank_pool(list);
  ASSERT_EQ(pool.size(), 2u);
  EXPECT_EQ(pool[0]->adapter.pci_address, "0000:00:06.0");
  EXPECT_EQ(pool[1]->adapter.pci_address, "0000:00:07.0");
}

TEST_F(binding, policies_from_the_variable_and_the_api_and_none_follows_the_lone_decision) {
  set_adapters<0>({make_adapter(backend_a, roster::device_type::discrete_gpu, 1, "0000:00:06.0"),
                   make_adapter(backend_a, roster::device_type::discrete_gpu, 2, "0000:00:07.0")});
  ::setenv("ROSTER_GPU_BIND", "map_gpu:1,0", 1);
  EXPECT_EQ(bound_pci(0, 2), "0000:00:07.0");
  auto b = roster::bind_rank();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->policy, "map_gpu:1,0 (ROSTER_GPU_BIND='map_gpu:1,0')");
  EXPECT_NE(roster::binding_record(*b).find("\"policy\":\"map_gpu:1,0"), std::string::npos);
  ::setenv("ROSTER_GPU_BIND", "single:2", 1);
  EXPECT_EQ(bound_pci(1, 2), "0000:00:06.0");
  auto shared = roster::bind_rank();
  ASSERT_TRUE(shared);
  EXPECT_NE(shared->warning.find("while 1 of the pool stand idle"), std::string::npos) << shared->warning;
  ::setenv("ROSTER_GPU_BIND", "none", 1);
  EXPECT_EQ(bound_pci(1, 2), "0000:00:06.0");  // the lone decision: the first circuit
  auto by_api = roster::bind_rank(roster::parse_bind_policy("map_gpu:1").value(), roster::bind_options{});
  ASSERT_TRUE(by_api);
  EXPECT_EQ(by_api->circuit->adapter.pci_address, "0000:00:07.0");
  EXPECT_EQ(by_api->policy, "map_gpu:1 (the caller's)");
  ::setenv("ROSTER_GPU_BIND", "nearest", 1);
  auto bad = roster::bind_rank();
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("ROSTER_GPU_BIND"), std::string::npos) << bad.error().message();
}

TEST_F(binding, the_cuda_ordinal_of_the_bound_device_is_the_users_next_line) {
  auto a = make_adapter(backend_a, roster::device_type::discrete_gpu, 1, "0000:00:06.0");
  auto b = make_adapter(backend_b, roster::device_type::discrete_gpu, 1, "0000:00:06.0");
  set_adapters<0>({a});
  set_adapters<1>({b});
  ::setenv("ROSTER_DEVICE_SELECTOR", std::string(backend_b).append(":*;*:*").c_str(), 1);
  roster::rescan();
  auto bound = roster::bind_rank();
  ASSERT_TRUE(bound) << bound.error().message();
  EXPECT_EQ(bound->adapter.backend, backend_b);
  EXPECT_EQ(bound->ordinal_for(backend_a), a.ordinal);
  EXPECT_EQ(bound->ordinal_for(backend_b), b.ordinal);
  EXPECT_FALSE(bound->ordinal_for("nosuch"));
  set_adapters<1>({});
}

TEST_F(binding, flux_and_jsrun_give_the_local_rank) {
  ::setenv("FLUX_TASK_LOCAL_ID", "3", 1);
  auto flux = roster::local_rank();
  ASSERT_TRUE(flux && *flux);
  EXPECT_EQ((*flux)->rank, 3);
  EXPECT_EQ((*flux)->size, 0);
  EXPECT_EQ((*flux)->rank_variable, "FLUX_TASK_LOCAL_ID");
  ::unsetenv("FLUX_TASK_LOCAL_ID");
  ::setenv("JSM_NAMESPACE_LOCAL_RANK", "1", 1);
  ::setenv("JSM_NAMESPACE_LOCAL_SIZE", "4", 1);
  auto jsm = roster::local_rank();
  ASSERT_TRUE(jsm && *jsm);
  EXPECT_EQ((*jsm)->rank, 1);
  EXPECT_EQ((*jsm)->size, 4);
  ::setenv("JSM_NAMESPACE_LOCAL_RANK", "4", 1);
  auto past = roster::local_rank();
  ASSERT_FALSE(past);
  EXPECT_NE(past.error().message().find("JSM_NAMESPACE_LOCAL_SIZE=4"), std::string::npos) << past.error().message();
}

TEST_F(binding, a_communicators_ranks_replace_the_launchers_and_a_disagreement_is_said) {
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  auto note = roster::set_node_ranks(roster::node_ranks{0, 2, {}});
  ASSERT_TRUE(note);
  EXPECT_NE(note->find("OMPI_COMM_WORLD_LOCAL_RANK=1"), std::string::npos) << *note;
  auto r = roster::local_rank();
  ASSERT_TRUE(r && *r);
  EXPECT_EQ((*r)->rank, 0);
  EXPECT_EQ((*r)->rank_variable, "MPI_Comm_split_type");
  auto agree = roster::set_node_ranks(roster::node_ranks{1, 2, {}});
  ASSERT_TRUE(agree);
  EXPECT_TRUE(agree->empty()) << *agree;
  EXPECT_FALSE(roster::set_node_ranks(roster::node_ranks{2, 2, {}}));
  EXPECT_FALSE(roster::set_node_ranks(roster::node_ranks{0, 2, {{0}}}));
}

std::string record(const char* host, int rank, const char* device, const char* cpus, const char* local,
                   const char* pool = "[\"GPU-a\",\"GPU-b\"]") {
  return std::string("{\"host\":\"") + host + "\",\"rank\":" + std::to_string(rank) + ",\"local_rank\":" +
         std::to_string(rank) + ",\"uuid\":\"" + device + "\",\"adapter\":\"cuda:0\",\"cpuset\":\"" + cpus +
         "\",\"device_cpus\":\"" + local + "\",\"sharing\":1,\"pool\":" + pool + "}";
}

TEST(job_check, reports_ranks_sharing_while_a_device_idles_far_ranks_and_pools_that_differ) {
  std::vector<std::string> clean = {record("n1", 0, "GPU-a", "0-3", "0-15"), record("n1", 1, "GPU-b", "16-19", "16-31")};
  auto ok = roster::check_placement(clean);
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->ok()) << ok->table();
  EXPECT_NE(ok->json().find("\"ok\":true"), std::string::npos);

  std::vector<std::string> planted = {record("n1", 0, "GPU-a", "0-3", "0-15"), record("n1", 1, "GPU-a", "4-7", "0-15"),
                                      record("n2", 2, "GPU-a", "20", "0-15"),
                                      record("n3", 3, "GPU-c", "0", "", "[\"GPU-c\"]"), "not json\nFix: rm -rf ~"};
  auto bad = roster::check_placement(planted);
  ASSERT_TRUE(bad);
  EXPECT_FALSE(bad->ok());
  std::multiset<std::string> kinds;
  for (const auto& p : bad->problems) kinds.insert(p.kind);
  EXPECT_EQ(kinds.count("shared while idle"), 1u) << bad->table();
  EXPECT_EQ(kinds.count("far from its device"), 1u) << bad->table();
  EXPECT_EQ(kinds.count("pools differ"), 1u) << bad->table();
  EXPECT_EQ(kinds.count("unreadable record"), 1u) << bad->table();
  EXPECT_NE(bad->table().find("rank 0, rank 1 share GPU-a while GPU-b stands idle"), std::string::npos) << bad->table();
  EXPECT_EQ(bad->table().find("\nFix: rm"), std::string::npos);
  EXPECT_NE(bad->json().find("\"ok\":false"), std::string::npos);
  EXPECT_FALSE(roster::check_placement({}));
}

}  // namespace

namespace {
// Hostile round four, item 12: a newline in a variable roster echoes printed
// a line of its own ("Fix: rm -rf ~"). Every echo escapes it.
TEST_F(binding, a_newline_in_an_echoed_variable_cannot_forge_a_line) {
  const std::string forged = "cpu:0\nFix: rm -rf ~";
  set_adapters<0>({make_adapter(backend_a, roster::device_type::discrete_gpu, 1, "0000:00:06.0")});
  for (const char* name : {"ROSTER_DEVICE_SELECTOR", "ROSTER_REQUIRE", "ROSTER_DEVICE", "ROSTER_TUNING",
                           "ROSTER_GPU_BIND", "OMPI_COMM_WORLD_LOCAL_RANK"}) {
    ::setenv(name, forged.c_str(), 1);
    roster::rescan();
    auto d = roster::decide();
    ASSERT_FALSE(d) << name << " was taken";
    const std::string m = d.error().message();
    EXPECT_EQ(m.find("\nFix: rm"), std::string::npos) << name << ": " << m;
    EXPECT_NE(m.find("\\nFix: rm"), std::string::npos) << name << " is not quoted escaped: " << m;
    ::unsetenv(name);
  }
}
}  // namespace
