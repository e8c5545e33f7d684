#pragma once
// Private: where a launcher's local rank goes in the pool of bindable
// circuits, by a binding policy named as Slurm's --gpu-bind names it. Pure
// functions over facts that are the same for every rank of a node (the pool,
// each device's local CPUs, the online CPUs) and this rank's own CPU set, so
// every rank computes the same answer whenever it looks.
//
// The topology comes from sysfs (local_cpulist of each PCI function), not
// hwloc: hwloc reads the same files, and linking it would add a library to
// every program that compiles roster, header-only ones included.

#include <roster/detail/decision/bind_policy.hpp>
#include <roster/detail/devices/cpu_affinity.hpp>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

namespace roster::detail {

// What placement knows: the rank, the pool's localities and the CPUs.
struct placement_input {
  std::size_t rank = 0;
  std::size_t size = 0;                        // local ranks; 0 when the launcher does not say
  std::vector<std::vector<int>> pool_cpus;     // each pool circuit's local CPUs (empty: unknown)
  std::vector<int> allowed;                    // this rank's CPUs (sched_getaffinity)
  std::vector<int> online;                     // the node's online CPUs
  std::vector<std::vector<int>> peers;         // every local rank's CPUs, by local rank (an MPI communicator's); may be empty
};

// Where the rank goes, and why.
struct placement {
  std::size_t slot = 0;  // index in the pool
  std::string why;
};

inline std::vector<int> cpu_intersection(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// The pool circuits closest to a CPU set: those sharing the most CPUs with it (none: empty).
inline std::vector<std::size_t> closest_circuits(const std::vector<std::vector<int>>& pool_cpus,
                                                 const std::vector<int>& cpus) {
  std::vector<std::size_t> out;
  std::size_t best = 0;
  for (std::size_t i = 0; i < pool_cpus.size(); ++i) {
    const std::size_t shared = cpu_intersection(pool_cpus[i], cpus).size();
    if (shared == 0 || shared < best) continue;
    if (shared > best) out.clear();
    best = shared;
    out.push_back(i);
  }
  return out;
}

// The rank's place among the ranks of its locality, with nothing but its own
// CPUs: the chunk its CPUs start in (a rank bound to cores), else its rank over
// the number of localities (a rank bound to a whole socket, ranks dealt over
// sockets in turn, as Open MPI past two ranks and Slurm's default do).
inline std::size_t place_in_locality(const placement_input& in, const std::vector<std::size_t>& near,
                                     std::string& how) {
  std::vector<int> locality;
  for (std::size_t i : near) {
    std::vector<int> merged;
    std::set_union(locality.begin(), locality.end(), in.pool_cpus[i].begin(), in.pool_cpus[i].end(),
                   std::back_inserter(merged));
    locality = std::move(merged);
  }
  const auto mine = cpu_intersection(locality, in.allowed);
  if (mine.size() < locality.size()) {
    const auto pos = static_cast<std::size_t>(
        std::lower_bound(locality.begin(), locality.end(), mine.front()) - locality.begin());
    std::size_t run = 1;
    while (run < mine.size() && mine[run] == mine[0] + static_cast<int>(run)) ++run;
    how = "its CPUs start at " + std::to_string(mine.front()) + ", chunk " + std::to_string(pos / run) +
          " of the locality's " + std::to_string(locality.size()) + " CPUs";
    return pos / run;
  }
  std::vector<std::vector<int>> localities;
  for (const auto& c : in.pool_cpus)
    if (!c.empty() && std::find(localities.begin(), localities.end(), c) == localities.end()) localities.push_back(c);
  const std::size_t n = std::max<std::size_t>(1, localities.size());
  how = "it holds the whole locality: rank " + std::to_string(in.rank) + " over " + std::to_string(n) +
        " localities";
  return in.rank / n;
}

// closest: a rank whose CPUs the launcher restricted takes a device local to
// them, spread over those devices; an unrestricted one goes round-robin.
inline placement place_closest(const placement_input& in) {
  const std::size_t n = in.pool_cpus.size();
  const bool restricted = !in.allowed.empty() && cpu_intersection(in.online, in.allowed).size() < in.online.size();
  const auto near = restricted ? closest_circuits(in.pool_cpus, in.allowed) : std::vector<std::size_t>{};
  if (near.empty()) {
    const std::size_t slot = in.rank % n;
    return {slot, std::string("closest: ") +
                      (restricted ? "no device is local to this rank's CPUs (" + format_cpu_list(in.allowed) + ")"
                                  : std::string("the launcher did not restrict this rank's CPUs")) +
                      ": round-robin, rank " + std::to_string(in.rank) + " -> " + std::to_string(slot + 1) + " of " +
                      std::to_string(n)};
  }
  std::size_t index = 0;
  std::string how;
  if (!in.peers.empty()) {
    // Exact: this rank's place among the ranks whose closest devices are the same.
    for (std::size_t r = 0; r < in.rank && r < in.peers.size(); ++r)
      if (closest_circuits(in.pool_cpus, in.peers[r]) == near) ++index;
    how = std::to_string(index) + " lower local ranks share this locality (from the communicator)";
  } else {
    index = place_in_locality(in, near, how);
  }
  const std::size_t slot = near[index % near.size()];
  return {slot, "closest: " + std::to_string(near.size()) + " of " + std::to_string(n) +
                    " devices are local to this rank's CPUs (" + format_cpu_list(in.allowed) + "); " + how + " -> " +
                    std::to_string(slot + 1) + " of " + std::to_string(n)};
}

// Places the rank by the policy (never `none`: the caller does not bind then).
inline placement place_rank(const bind_policy& policy, const placement_input& in) {
  const std::size_t n = in.pool_cpus.size();
  switch (policy.kind) {
    case gpu_bind::map: {
      const std::size_t entry = policy.map[in.rank % policy.map.size()];
      const std::size_t slot = entry % n;
      return {slot, "map_gpu: entry " + std::to_string(in.rank % policy.map.size()) + " says " +
                        std::to_string(entry) + (entry < n ? "" : " (past the pool of " + std::to_string(n) + ", wrapped)") +
                        " -> " + std::to_string(slot + 1) + " of " + std::to_string(n)};
    }
    case gpu_bind::single: {
      const std::size_t slot = (in.rank / policy.ranks_per_device) % n;
      return {slot, "single:" + std::to_string(policy.ranks_per_device) + ": rank " + std::to_string(in.rank) +
                        " -> " + std::to_string(slot + 1) + " of " + std::to_string(n)};
    }
    case gpu_bind::closest:
    case gpu_bind::none: break;
  }
  return place_closest(in);
}

// The local ranks placed on `slot` where the policy tells without their CPUs
// (map, single, and closest for unrestricted ranks); nullopt when only the
// job check can say (closest over restricted CPU sets without peers).
inline std::optional<std::vector<std::size_t>> ranks_on(const bind_policy& policy, const placement_input& in,
                                                        std::size_t slot) {
  if (in.size == 0) return std::nullopt;
  std::vector<std::size_t> out;
  for (std::size_t r = 0; r < in.size; ++r) {
    placement_input other = in;
    other.rank = r;
    if (policy.kind == gpu_bind::closest) {
      if (!in.peers.empty() && r < in.peers.size()) other.allowed = in.peers[r];
      else if (place_closest(in).why.find("round-robin") == std::string::npos) return std::nullopt;
    }
    if (place_rank(policy, other).slot == slot) out.push_back(r);
  }
  return out;
}

}  // namespace roster::detail
