// Circuits over the registry test backends: merging, ordering, roles, the
// fallback chain, the selector applied before merging, the trace and rank
// binding.

#include "test_backends.hpp"

#include <roster/detail/circuits/occupancy_reader.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <unistd.h>
#include <cstdlib>

namespace {
using namespace devices_test;
using roster::device_type;

constexpr const char* rank_variables[] = {
    "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_RANK",
    "MV2_COMM_WORLD_LOCAL_SIZE",  "MPI_LOCALRANKID",            "MPI_LOCALNRANKS",
    "SLURM_LOCALID",              "SLURM_NTASKS_PER_NODE",      "PMI_LOCAL_RANK",
    "PMI_LOCAL_SIZE",             "PMIX_LOCAL_RANK",            "PMIX_LOCAL_SIZE",
    "PALS_LOCAL_RANKID",          "PALS_LOCAL_SIZE"};
constexpr const char* mask_variables[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "ROCR_VISIBLE_DEVICES",
                                          "HIP_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"};

class circuits : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_backends();
    for (const char* v : rank_variables) unsetenv(v);
    for (const char* v : mask_variables) unsetenv(v);
    unsetenv("ROSTER_DEVICE_SELECTOR");
    unsetenv("ROSTER_DEVICE");
    unsetenv("ROSTER_TRACE");
    unsetenv("ROSTER_REQUIRE");
    // Recorded answers only: the test adapters share PCI addresses with real GPUs.
    roster::detail::set_occupancy_source_for_testing(
        [](const roster::adapter_info&) { return std::optional<roster::device_occupancy>{}; });
    set_adapters<0>({});
    set_adapters<1>({});
    set_adapters<2>({});
  }
  void TearDown() override { SetUp(); }

  // Rescans and returns the circuits, failing the test on an error.
  static std::vector<roster::circuit> scan() {
    roster::rescan();
    auto list = roster::circuits();
    EXPECT_TRUE(list) << list.error().message();
    if (!list) return {};
    return {list->begin(), list->end()};
  }
  static bool traced(std::string_view needle) {
    for (const auto& l : roster::trace_lines())
      if (l.find(needle) != std::string::npos) return true;
    return false;
  }
};

TEST_F(circuits, the_same_uuid_through_two_backends_is_one_circuit) {
  auto a = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto b = make_adapter(backend_b, device_type::discrete_gpu, 1, "");
  set_adapters<0>({a});
  set_adapters<1>({b});
  auto cs = scan();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].adapter.spec(), a.spec());  // the lower-rank backend is preferred
  ASSERT_EQ(cs[0].alternates.size(), 1u);
  EXPECT_EQ(cs[0].alternates[0].spec(), b.spec());
  EXPECT_TRUE(traced("merged " + b.spec() + " into the device of " + a.spec() + ": same UUID"));
}

TEST_F(circuits, two_identical_gpus_with_different_uuids_are_two_circuits) {
  // Two H200s: the same vendor and device id through both backends.
  auto a0 = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0", "NVIDIA H200");
  auto a1 = make_adapter(backend_a, device_type::discrete_gpu, 2, "0000:00:07.0", "NVIDIA H200");
  auto b0 = make_adapter(backend_b, device_type::discrete_gpu, 2, "0000:00:07.0", "NVIDIA H200");
  auto b1 = make_adapter(backend_b, device_type::discrete_gpu, 1, "0000:00:06.0", "NVIDIA H200");
  set_adapters<0>({a0, a1});
  set_adapters<1>({b0, b1});
  auto cs = scan();
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].adapter.spec(), a0.spec());
  ASSERT_EQ(cs[0].alternates.size(), 1u);
  EXPECT_EQ(cs[0].alternates[0].spec(), b1.spec());
  EXPECT_EQ(cs[1].adapter.spec(), a1.spec());
  ASSERT_EQ(cs[1].alternates.size(), 1u);
  EXPECT_EQ(cs[1].alternates[0].spec(), b0.spec());
  EXPECT_NE(cs[0].identity(), cs[1].identity());
}

TEST_F(circuits, different_uuids_never_merge_even_on_one_pci_address) {
  auto a = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto b = make_adapter(backend_b, device_type::discrete_gpu, 2, "0000:00:06.0");
  set_adapters<0>({a});
  set_adapters<1>({b});
  EXPECT_EQ(scan().size(), 2u);
}

TEST_F(circuits, a_missing_uuid_falls_back_to_the_pci_address) {
  auto a = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto b = make_adapter(backend_b, device_type::discrete_gpu, 0, "00:06");  // no domain, no function
  auto other = make_adapter(backend_b, device_type::discrete_gpu, 0, "0000:00:07.0");
  set_adapters<0>({a});
  set_adapters<1>({b, other});
  auto cs = scan();
  ASSERT_EQ(cs.size(), 2u);
  ASSERT_EQ(cs[0].alternates.size(), 1u);
  EXPECT_EQ(cs[0].alternates[0].spec(), b.spec());
  EXPECT_TRUE(cs[1].alternates.empty());
  EXPECT_TRUE(traced("same PCI address 0000:00:06.0 (UUID unknown)"));
}

TEST_F(circuits, adapters_with_neither_uuid_nor_pci_never_merge) {
  auto a = make_adapter(backend_a, device_type::discrete_gpu, 0, "", "Same");
  auto b = make_adapter(backend_b, device_type::discrete_gpu, 0, "", "Same");
  set_adapters<0>({a});
  set_adapters<1>({b});
  auto cs = scan();
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_TRUE(cs[0].alternates.empty());
  EXPECT_TRUE(cs[1].alternates.empty());
}

TEST_F(circuits, the_cpu_backend_and_a_software_vulkan_device_are_the_host_cpu) {
  auto cpu = make_adapter(backend_host, device_type::cpu, 0, "", "Host CPU");
  auto lavapipe = make_adapter(backend_b, device_type::cpu, 9, "", "llvmpipe (LLVM 15.0.6, 256 bits)");
  auto gpu = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  set_adapters<0>({gpu});
  set_adapters<1>({lavapipe});
  set_adapters<2>({cpu});
  auto cs = scan();
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[1].type(), device_type::cpu);
  EXPECT_EQ(cs[1].adapter.spec(), lavapipe.spec());  // backend b ranks before host
  ASSERT_EQ(cs[1].alternates.size(), 1u);
  EXPECT_EQ(cs[1].alternates[0].spec(), cpu.spec());
  EXPECT_TRUE(traced("both are the host CPU"));
}

TEST_F(circuits, order_is_type_then_pci_address) {
  auto cpu = make_adapter(backend_a, device_type::cpu, 0, "");
  auto other = make_adapter(backend_a, device_type::other, 3, "0000:00:01.0");
  auto virt = make_adapter(backend_a, device_type::virtual_gpu, 4, "0000:00:02.0");
  auto integrated = make_adapter(backend_a, device_type::integrated_gpu, 5, "0000:00:03.0");
  auto d_nopci = make_adapter(backend_a, device_type::discrete_gpu, 6, "");
  auto d7 = make_adapter(backend_a, device_type::discrete_gpu, 7, "0000:00:07.0");
  auto d6 = make_adapter(backend_a, device_type::discrete_gpu, 8, "0000:00:06.0");
  set_adapters<0>({cpu, other, virt, integrated, d_nopci, d7, d6});
  auto cs = scan();
  ASSERT_EQ(cs.size(), 7u);
  const std::vector<std::string> want = {d6.spec(),    d7.spec(),    d_nopci.spec(), integrated.spec(),
                                         virt.spec(),  other.spec(), cpu.spec()};
  for (std::size_t i = 0; i < cs.size(); ++i) {
    EXPECT_EQ(cs[i].adapter.spec(), want[i]) << i;
    EXPECT_EQ(cs[i].index, i);
  }
  // A measured figure ranks circuits of one type before the PCI address does
  // (decide_test.cpp: records_reverse_the_rank_order_of_two_gpus_only_beyond_the_noise).
}

TEST_F(circuits, indices_are_stable_until_rescan) {
  set_adapters<0>({make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0"),
                   make_adapter(backend_a, device_type::discrete_gpu, 2, "0000:00:07.0")});
  roster::rescan();
  auto first = roster::circuits();
  ASSERT_TRUE(first);
  set_adapters<0>({});  // the backend changes, but nobody rescans
  auto second = roster::circuits();
  ASSERT_TRUE(second);
  EXPECT_EQ(first->data(), second->data());
  EXPECT_EQ(second->size(), 2u);
  roster::rescan();
  auto third = roster::circuits();
  ASSERT_TRUE(third);
  EXPECT_TRUE(third->empty());
  EXPECT_EQ((*first)[1].index, 1u);  // the old span stays readable
}

TEST_F(circuits, roles_prefer_an_integrated_gpu_for_auxiliary) {
  auto d6 = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto d7 = make_adapter(backend_a, device_type::discrete_gpu, 2, "0000:00:07.0");
  auto igpu = make_adapter(backend_a, device_type::integrated_gpu, 3, "0000:00:02.0");
  set_adapters<0>({d7, igpu, d6});
  roster::rescan();
  ASSERT_NE(roster::primary(), nullptr);
  EXPECT_EQ(roster::primary()->adapter.spec(), d6.spec());
  ASSERT_NE(roster::auxiliary(), nullptr);
  EXPECT_EQ(roster::auxiliary()->adapter.spec(), igpu.spec());

  set_adapters<0>({d7, d6});
  roster::rescan();
  ASSERT_NE(roster::auxiliary(), nullptr);
  EXPECT_EQ(roster::auxiliary()->adapter.spec(), d7.spec());

  set_adapters<0>({d6});
  roster::rescan();
  EXPECT_NE(roster::primary(), nullptr);
  EXPECT_EQ(roster::auxiliary(), nullptr);

  set_adapters<0>({});
  roster::rescan();
  EXPECT_EQ(roster::primary(), nullptr);
  EXPECT_EQ(roster::auxiliary(), nullptr);
}

TEST_F(circuits, auxiliary_falls_back_to_primary_then_to_the_host_cpu) {
  auto gpu = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto igpu = make_adapter(backend_a, device_type::integrated_gpu, 2, "0000:00:02.0");
  auto cpu = make_adapter(backend_host, device_type::cpu, 0, "");
  set_adapters<0>({gpu, igpu});
  set_adapters<2>({cpu});
  roster::rescan();
  // Everything opens: the auxiliary is the integrated GPU.
  roster::device* d = roster::try_auxiliary_device();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->adapter().spec(), igpu.spec());
  EXPECT_TRUE(traced("auxiliary: chose " + igpu.spec()));

  // The auxiliary fails to open: the next circuit other than the primary's
  // (the auxiliary never takes the primary's device while another exists).
  gpu = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  igpu = make_adapter(backend_a, device_type::integrated_gpu, 2, "0000:00:02.0");
  cpu = make_adapter(backend_host, device_type::cpu, 0, "");
  set_adapters<0>({gpu, igpu});
  set_adapters<2>({cpu});
  set_failing<0>({igpu.ordinal});
  roster::rescan();
  d = roster::try_auxiliary_device();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->adapter().spec(), cpu.spec());
  EXPECT_TRUE(traced("auxiliary: " + igpu.spec() + " does not open"));
  EXPECT_TRUE(traced("auxiliary: chose " + cpu.spec()));

  // Every other circuit fails too: the primary's device.
  gpu = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  igpu = make_adapter(backend_a, device_type::integrated_gpu, 2, "0000:00:02.0");
  cpu = make_adapter(backend_host, device_type::cpu, 0, "");
  set_adapters<0>({gpu, igpu});
  set_adapters<2>({cpu});
  set_failing<0>({igpu.ordinal});
  set_failing<2>({cpu.ordinal});
  roster::rescan();
  d = roster::try_auxiliary_device();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->adapter().spec(), gpu.spec());
  EXPECT_TRUE(traced("auxiliary, falling back to the primary: chose " + gpu.spec()));

  // Then the primary fails too: the host CPU, last.
  gpu = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  igpu = make_adapter(backend_a, device_type::integrated_gpu, 2, "0000:00:02.0");
  cpu = make_adapter(backend_host, device_type::cpu, 0, "");
  set_adapters<0>({gpu, igpu});
  set_adapters<2>({cpu});
  set_failing<0>({igpu.ordinal, gpu.ordinal});
  roster::rescan();
  d = roster::try_auxiliary_device();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->adapter().spec(), cpu.spec());

  // Nothing opens (this binary links no "cpu" backend): null, no crash.
  set_failing<2>({cpu.ordinal});
  cpu = make_adapter(backend_host, device_type::cpu, 0, "");
  set_adapters<2>({cpu});
  set_failing<2>({cpu.ordinal});
  roster::rescan();
  EXPECT_EQ(roster::try_auxiliary_device(), nullptr);
  EXPECT_EQ(roster::try_primary_device(), nullptr);
  EXPECT_TRUE(traced("nothing opens"));
}

TEST_F(circuits, a_circuit_opens_an_alternate_when_its_preferred_adapter_fails) {
  auto a = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto b = make_adapter(backend_b, device_type::discrete_gpu, 1, "0000:00:06.0");
  set_adapters<0>({a});
  set_adapters<1>({b});
  set_failing<0>({a.ordinal});
  roster::rescan();
  roster::device* d = roster::try_primary_device();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->adapter().spec(), b.spec());
}

TEST_F(circuits, a_failing_enumerator_is_recorded_and_skipped) {
  set_adapters<0>({make_adapter(backend_a, device_type::discrete_gpu, 1, "")});
  {
    auto& s = state<1>();
    std::lock_guard lock(s.mutex);
    s.enumerate_fails = true;
  }
  auto cs = scan();
  EXPECT_EQ(cs.size(), 1u);
  auto failures = roster::enumeration_failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].backend, backend_b);
  EXPECT_FALSE(failures[0].error.fix().empty());
  EXPECT_TRUE(traced("backend test_registry_backend_b: dropped, its enumerator failed"));
}

TEST_F(circuits, the_selector_filters_before_merging) {
  auto a = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto b = make_adapter(backend_b, device_type::discrete_gpu, 1, "0000:00:06.0");
  set_adapters<0>({a});
  set_adapters<1>({b});
  setenv("ROSTER_DEVICE_SELECTOR", "!test_registry_backend_a:*", 1);
  auto cs = scan();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].adapter.spec(), b.spec());
  EXPECT_TRUE(cs[0].alternates.empty());
  // The whole backend is excluded: it is not even asked for its adapters.
  EXPECT_TRUE(traced("backend test_registry_backend_a: not asked: excluded by selector term "
                     "'!test_registry_backend_a:*'"));

  // Include terms order the adapters: b's term first makes it preferred.
  setenv("ROSTER_DEVICE_SELECTOR", "test_registry_backend_b:*;test_registry_backend_a:*", 1);
  cs = scan();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].adapter.spec(), b.spec());
  ASSERT_EQ(cs[0].alternates.size(), 1u);
}

TEST_F(circuits, the_selector_orders_circuits) {
  auto d = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto i = make_adapter(backend_a, device_type::integrated_gpu, 2, "0000:00:02.0");
  auto c = make_adapter(backend_host, device_type::cpu, 0, "");
  set_adapters<0>({d, i});
  set_adapters<2>({c});
  setenv("ROSTER_DEVICE_SELECTOR", "*:integrated;*:gpu", 1);
  auto cs = scan();
  ASSERT_EQ(cs.size(), 2u);  // the CPU matches no term
  EXPECT_EQ(cs[0].adapter.spec(), i.spec());
  EXPECT_EQ(cs[1].adapter.spec(), d.spec());
  EXPECT_TRUE(traced("dropped " + c.spec() + " (Test GPU, cpu): matches no selector term"));

  setenv("ROSTER_DEVICE_SELECTOR", ("*:GPU-" + d.uuid_string().substr(4, 8)).c_str(), 1);
  cs = scan();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].adapter.spec(), d.spec());

  setenv("ROSTER_DEVICE_SELECTOR", "pci=00:02", 1);
  cs = scan();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].adapter.spec(), i.spec());
}

TEST_F(circuits, a_malformed_selector_is_an_error_naming_the_term) {
  set_adapters<0>({make_adapter(backend_a, device_type::discrete_gpu, 1, "")});
  setenv("ROSTER_DEVICE_SELECTOR", "test_registry_backend_a:*;cuda:banana", 1);
  roster::rescan();
  auto cs = roster::circuits();
  ASSERT_FALSE(cs);
  EXPECT_EQ(cs.error().code(), roster::errc::invalid_argument);
  EXPECT_NE(cs.error().message().find("ROSTER_DEVICE_SELECTOR"), std::string::npos);
  EXPECT_NE(cs.error().message().find("'cuda:banana'"), std::string::npos) << cs.error().message();
  EXPECT_FALSE(cs.error().fix().empty());
  EXPECT_EQ(roster::primary(), nullptr);
  EXPECT_FALSE(roster::bind_rank());
  EXPECT_FALSE(roster::default_device());
}

TEST_F(circuits, roster_trace_prints_each_decision) {
  auto a = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto b = make_adapter(backend_b, device_type::discrete_gpu, 1, "");
  auto x = make_adapter(backend_b, device_type::other, 5, "");
  set_adapters<0>({a});
  set_adapters<1>({b, x});
  setenv("ROSTER_DEVICE_SELECTOR", "!*:other", 1);
  setenv("ROSTER_TRACE", "1", 1);
  testing::internal::CaptureStderr();
  roster::rescan();
  (void)roster::circuits();
  (void)roster::try_primary_device();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("roster: kept " + a.spec()), std::string::npos) << err;
  EXPECT_NE(err.find("roster: dropped " + x.spec()), std::string::npos) << err;
  EXPECT_NE(err.find("roster: merged " + b.spec()), std::string::npos) << err;
  EXPECT_NE(err.find("roster: primary: chose " + a.spec()), std::string::npos) << err;

  unsetenv("ROSTER_TRACE");
  testing::internal::CaptureStderr();
  roster::rescan();
  (void)roster::circuits();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(traced("kept " + a.spec()));  // still available as text
}

TEST_F(circuits, roster_device_sets_the_default_device) {
  auto a = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto b = make_adapter(backend_b, device_type::discrete_gpu, 2, "0000:00:07.0");
  set_adapters<0>({a});
  set_adapters<1>({b});
  roster::rescan();
  auto d = roster::default_device();
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ((*d)->adapter().spec(), a.spec());
  setenv("ROSTER_DEVICE", (" " + b.spec() + " ").c_str(), 1);
  d = roster::default_device();
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ((*d)->adapter().spec(), b.spec());
  setenv("ROSTER_DEVICE", "nosuch:0", 1);
  d = roster::default_device();
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message().find("ROSTER_DEVICE"), std::string::npos);
}

class rank_binding : public circuits {};

TEST_F(rank_binding, binds_local_rank_modulo_circuits_after_the_selector) {
  auto g0 = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto g1 = make_adapter(backend_a, device_type::discrete_gpu, 2, "0000:00:07.0");
  auto cpu = make_adapter(backend_host, device_type::cpu, 0, "");
  set_adapters<0>({g0, g1});
  set_adapters<2>({cpu});
  setenv("ROSTER_DEVICE_SELECTOR", "*:gpu", 1);
  roster::rescan();

  auto b = roster::bind_rank();  // outside a launcher: the primary
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_FALSE(b->launcher);
  EXPECT_EQ(b->circuit->adapter.spec(), g0.spec());

  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  b = roster::bind_rank();
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->launcher);
  EXPECT_EQ(b->launcher->rank_variable, "OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_EQ(b->circuit->adapter.spec(), g1.spec());
  EXPECT_TRUE(b->warning.empty());

  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "3", 1);
  b = roster::bind_rank();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->circuit->adapter.spec(), g0.spec());  // 2 % 2 circuits: the CPU is not one of them
  EXPECT_NE(b->warning.find("3 local ranks on 2 GPU circuits: 2 share one GPU"), std::string::npos) << b->warning;
  EXPECT_NE(b->warning.find("local ranks 0, 2"), std::string::npos) << b->warning;
  EXPECT_TRUE(traced("rank binding: warning"));
}

TEST_F(rank_binding, reads_each_launcher_variable) {
  struct launcher {
    const char* rank;
    const char* size;
  };
  for (auto [rank, size] : {launcher{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
                            launcher{"MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"},
                            launcher{"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
                            launcher{"SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
                            launcher{"PMI_LOCAL_RANK", "PMI_LOCAL_SIZE"},
                            launcher{"PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE"},
                            launcher{"PALS_LOCAL_RANKID", "PALS_LOCAL_SIZE"}}) {
    for (const char* v : rank_variables) unsetenv(v);
    setenv(rank, "3", 1);
    setenv(size, "4", 1);
    auto info = roster::local_rank();
    ASSERT_TRUE(info) << rank;
    ASSERT_TRUE(*info) << rank;
    EXPECT_EQ((*info)->rank, 3) << rank;
    EXPECT_EQ((*info)->size, 4) << rank;
    EXPECT_EQ((*info)->rank_variable, rank);
    EXPECT_EQ((*info)->size_variable, size);
  }
  for (const char* v : rank_variables) unsetenv(v);
  auto none = roster::local_rank();
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);

  // Open MPI's variable wins over Slurm's under srun + mpirun.
  setenv("SLURM_LOCALID", "5", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  EXPECT_EQ((*roster::local_rank())->rank, 1);
  EXPECT_EQ((*roster::local_rank())->size, 0);  // unknown size

  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "one", 1);
  auto bad = roster::local_rank();
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("OMPI_COMM_WORLD_LOCAL_RANK='one'"), std::string::npos);
  EXPECT_FALSE(bad.error().fix().empty());
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "-1", 1);
  EXPECT_FALSE(roster::local_rank());
  // A number too large is not called "not a whole number"; a size's Fix asks
  // for a count, not an index; a size of 0 is no launcher's.
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "99999999999999999999", 1);
  bad = roster::local_rank();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message().find("not a whole number"), std::string::npos) << bad.error().message();
  EXPECT_NE(bad.error().message().find("local ranks"), std::string::npos) << bad.error().message();
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "abc", 1);
  bad = roster::local_rank();
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().fix().find("local rank count"), std::string::npos) << bad.error().message();
  EXPECT_EQ(bad.error().fix().find("local index"), std::string::npos) << bad.error().message();
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "0", 1);
  bad = roster::local_rank();
  ASSERT_FALSE(bad) << "a local size of 0";
  EXPECT_NE(bad.error().message().find("OMPI_COMM_WORLD_LOCAL_SIZE='0'"), std::string::npos) << bad.error().message();
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
}

TEST_F(rank_binding, no_circuit_is_an_error) {
  roster::rescan();
  auto b = roster::bind_rank();
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code(), roster::errc::not_found);
  EXPECT_FALSE(b.error().fix().empty());
}


// More ranks than GPUs, no selector: ranks go round-robin over the GPUs and
// none goes to the CPU (the CPU circuit used to count as one of them).
TEST_F(rank_binding, more_ranks_than_gpus_never_binds_the_cpu) {
  auto g0 = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto g1 = make_adapter(backend_a, device_type::discrete_gpu, 2, "0000:00:07.0");
  auto cpu = make_adapter(backend_host, device_type::cpu, 0, "");
  set_adapters<0>({g0, g1});
  set_adapters<2>({cpu});
  roster::rescan();
  ASSERT_EQ(roster::circuits()->size(), 3u);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
  const std::string expected[] = {g0.spec(), g1.spec(), g0.spec(), g1.spec()};
  for (int r = 0; r < 4; ++r) {
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(r).c_str(), 1);
    auto b = roster::bind_rank();
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ(b->circuit->adapter.spec(), expected[r]) << "local rank " << r;
    EXPECT_NE(b->warning.find("4 local ranks on 2 GPU circuits: 2 share one GPU"), std::string::npos) << b->warning;
  }
}

TEST_F(rank_binding, the_cpu_takes_ranks_when_no_gpu_is_visible_or_the_selector_names_it) {
  auto g0 = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto cpu = make_adapter(backend_host, device_type::cpu, 0, "");
  set_adapters<2>({cpu});
  roster::rescan();
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  auto b = roster::bind_rank();
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(b->circuit->type(), device_type::cpu);

  set_adapters<0>({g0});
  setenv("ROSTER_DEVICE_SELECTOR", (std::string(backend_a) + ":*;" + backend_host + ":*").c_str(), 1);
  roster::rescan();
  b = roster::bind_rank();
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(b->circuit->type(), device_type::cpu);  // asked for by name: rank 1 of [gpu, cpu]

  setenv("ROSTER_DEVICE_SELECTOR", "*:*", 1);  // a wildcard does not ask for the CPU
  roster::rescan();
  b = roster::bind_rank();
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(b->circuit->adapter.spec(), g0.spec());
}

// A launcher environment claiming 100,000,000 ranks once took 12 s and 3 GB to
// build a warning line; now it is an error, and the largest accepted size
// gives a warning of bounded length.
TEST_F(rank_binding, local_size_is_bounded_and_the_warning_is_short) {
  auto g0 = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto g1 = make_adapter(backend_a, device_type::discrete_gpu, 2, "0000:00:07.0");
  set_adapters<0>({g0, g1});
  roster::rescan();
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  for (const char* huge : {"100000000", "999999999", "65537"}) {
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", huge, 1);
    auto b = roster::bind_rank();
    ASSERT_FALSE(b) << huge;
    EXPECT_EQ(b.error().code(), roster::errc::invalid_argument);
    EXPECT_NE(b.error().message().find("more than 65536 local ranks"), std::string::npos) << b.error().message();
    EXPECT_FALSE(b.error().fix().empty());
  }
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "65536", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "65535", 1);
  auto b = roster::bind_rank();
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(b->circuit->adapter.spec(), g1.spec());
  EXPECT_LT(b->warning.size(), 400u) << b->warning;
  EXPECT_NE(b->warning.find("32768 share one GPU"), std::string::npos) << b->warning;
  EXPECT_NE(b->warning.find("(32764 more)"), std::string::npos) << b->warning;

  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
  auto past = roster::bind_rank();
  ASSERT_FALSE(past);
  EXPECT_NE(past.error().message().find("is not below OMPI_COMM_WORLD_LOCAL_SIZE=2"), std::string::npos)
      << past.error().message();
}

// The scheduler gave the job GPU 1: the API that applies the mask (backend a,
// like CUDA) lists only it, while backend b (like Vulkan) lists both GPUs.
// GPU 0 must not become a circuit through backend b, nor take a rank.
TEST_F(circuits, a_vendor_mask_hides_a_gpu_from_every_backend) {
  auto a1 = make_adapter(backend_a, device_type::discrete_gpu, 2, "0000:00:07.0");
  a1.applied_mask = "CUDA_VISIBLE_DEVICES";
  auto b0 = make_adapter(backend_b, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto b1 = make_adapter(backend_b, device_type::discrete_gpu, 2, "0000:00:07.0");
  auto cpu = make_adapter(backend_host, device_type::cpu, 0, "");
  set_adapters<0>({a1});
  set_adapters<1>({b0, b1});
  set_adapters<2>({cpu});
  setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  auto cs = scan();
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].adapter.spec(), a1.spec());
  ASSERT_EQ(cs[0].alternates.size(), 1u);
  EXPECT_EQ(cs[0].alternates[0].spec(), b1.spec());
  EXPECT_EQ(cs[1].type(), device_type::cpu);
  EXPECT_TRUE(traced("dropped " + b0.spec())) << "trace lacks the masked adapter";
  EXPECT_TRUE(traced("hidden by CUDA_VISIBLE_DEVICES='1'"));
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  auto b = roster::bind_rank();
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(b->circuit->adapter.spec(), a1.spec());  // both ranks share the one GPU given

  // A UUID prefix needs no machine list: only GPU 0 is left.
  set_adapters<0>({});
  setenv("CUDA_VISIBLE_DEVICES", roster::adapter_info{b0}.uuid_string().substr(0, 12).c_str(), 1);
  cs = scan();
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].adapter.spec(), b0.spec());

  // -1 hides every GPU; the CPU stays.
  setenv("CUDA_VISIBLE_DEVICES", "-1", 1);
  cs = scan();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].type(), device_type::cpu);
}


TEST_F(circuits, a_requirement_keeps_only_devices_that_satisfy_it) {
  auto g0 = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto i0 = make_adapter(backend_b, device_type::integrated_gpu, 3, "0000:00:02.0");
  auto cpu = make_adapter(backend_host, device_type::cpu, 0, "");
  set_adapters<0>({g0});
  set_adapters<1>({i0});
  set_adapters<2>({cpu});
  setenv("ROSTER_REQUIRE", "gpu", 1);
  auto cs = scan();
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_NE(cs[0].type(), device_type::cpu);
  EXPECT_NE(cs[1].type(), device_type::cpu);
  setenv("ROSTER_REQUIRE", "discrete", 1);
  cs = scan();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].adapter.spec(), g0.spec());
  setenv("ROSTER_REQUIRE", (std::string(backend_b) + ",gpu").c_str(), 1);
  cs = scan();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].adapter.spec(), i0.spec());
  EXPECT_TRUE(traced("requirement: ROSTER_REQUIRE="));
}


// Occupancy from recorded NVML answers: what a second process on GPU 0, a
// prohibited GPU, an exclusive GPU held by another process and MIG look like.
TEST_F(circuits, occupancy_leaves_out_unusable_gpus_and_ranks_idle_before_busy) {
  using mode = roster::device_occupancy::compute_mode;
  auto g0 = make_adapter(backend_a, device_type::discrete_gpu, 1, "0000:00:06.0");
  auto g1 = make_adapter(backend_a, device_type::discrete_gpu, 2, "0000:00:07.0");
  set_adapters<0>({g0, g1});
  // The recorded answers, by PCI address (a static: the source is a plain function).
  static std::map<std::string, roster::device_occupancy> answers;
  answers.clear();
  roster::detail::set_occupancy_source_for_testing([](const roster::adapter_info& a) {
    auto it = answers.find(a.pci_address);
    return it == answers.end() ? std::optional<roster::device_occupancy>{} : std::optional(it->second);
  });
  roster::device_occupancy idle;
  idle.source = "recorded";
  idle.memory_total = 150ull << 30;
  idle.memory_free = 149ull << 30;
  roster::device_occupancy busy = idle;
  busy.memory_free = 140ull << 30;
  busy.pids = {4242};

  // A second process holds a context on GPU 0: GPU 1 ranks first.
  answers = {{"0000:00:06.0", busy}, {"0000:00:07.0", idle}};
  auto cs = scan();
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].adapter.spec(), g1.spec());
  ASSERT_TRUE(cs[1].occupancy);
  EXPECT_EQ(cs[1].occupancy->pids, std::vector<unsigned>{4242});
  EXPECT_TRUE(traced("1 other processes"));
  auto b = roster::bind_rank();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->circuit->adapter.spec(), g1.spec());

  // Only this process on GPU 0: idle by that rule, PCI order again.
  busy.pids = {static_cast<unsigned>(::getpid())};
  answers = {{"0000:00:06.0", busy}, {"0000:00:07.0", idle}};
  cs = scan();
  EXPECT_EQ(cs[0].adapter.spec(), g0.spec());

  // Prohibited: left out.
  auto prohibited = idle;
  prohibited.mode = mode::prohibited;
  answers = {{"0000:00:06.0", prohibited}, {"0000:00:07.0", idle}};
  cs = scan();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].adapter.spec(), g1.spec());
  EXPECT_TRUE(traced("compute mode prohibited"));

  // Exclusive-process and held by another process: skipped with the reason; held by us: kept.
  auto exclusive = idle;
  exclusive.mode = mode::exclusive_process;
  exclusive.pids = {4242};
  answers = {{"0000:00:06.0", exclusive}, {"0000:00:07.0", idle}};
  cs = scan();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_TRUE(traced("exclusive-process and held by process 4242"));
  exclusive.pids = {static_cast<unsigned>(::getpid())};
  answers = {{"0000:00:06.0", exclusive}, {"0000:00:07.0", idle}};
  EXPECT_EQ(scan().size(), 2u);

  // MIG on: its instances are reported with their UUIDs.
  auto mig = idle;
  mig.mig_enabled = true;
  mig.mig_uuids = {"MIG-4b5c8e2a-1234-5678-9abc-def012345678", "MIG-0a1b2c3d-1234-5678-9abc-def012345678"};
  answers = {{"0000:00:06.0", mig}};
  cs = scan();
  ASSERT_EQ(cs.size(), 2u);
  ASSERT_TRUE(cs[0].occupancy);
  EXPECT_EQ(cs[0].occupancy->mig_uuids.size(), 2u);
  EXPECT_TRUE(traced("MIG on (2 instances)"));
}

}  // namespace
