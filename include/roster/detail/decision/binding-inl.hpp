#pragma once
// Private: rank binding. Local ranks go round-robin over the GPU circuits,
// with the CPUs local to the device, and one JSON line per binding.

#include <roster/binding.hpp>
#include <roster/env.hpp>
#include <roster/detail/devices/cpu_affinity.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/json.hpp>
#include <roster/detail/circuits/occupancy_reader.hpp>
#include <roster/detail/decision/placement.hpp>
#include <roster/detail/open/requirement.hpp>

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

namespace detail {

// The local ranks that share this rank's circuit, and the warning when they
// do while another circuit of the pool stands idle or the pool is short.
inline void sharing_of(const launcher_binding& l, rank_binding& b) {
  const std::size_t n = l.pool, r = static_cast<std::size_t>(l.rank.rank);
  placement_input in;
  in.rank = r;
  in.size = l.rank.size > 0 ? static_cast<std::size_t>(l.rank.size) : 0;
  in.pool_cpus = l.pool_cpus;
  in.allowed = allowed_cpus();
  in.online = online_cpus();
  if (auto handed = handed_node_ranks()) in.peers = handed->cpus;
  const auto ranks = ranks_on(l.policy, in, l.slot);
  const bool gpu = b.circuit->type() != device_type::cpu;
  const std::string what = describe(*b.circuit) + " [" + b.circuit->identity() + "]";
  if (!ranks) {
    // Only the job check can tell (closest over CPU sets the launcher gave each rank).
    b.sharing = in.size > n ? (in.size + n - 1) / n : 1;
    if (in.size > n)
      b.warning = std::to_string(in.size) + " local ranks on " + std::to_string(n) + (gpu ? " GPU circuits" : " circuits") +
                  ": about " + std::to_string(b.sharing) + " share each; the job check (roster::mpi::check_job, "
                  "roster-info bind --check) tells which";
    return;
  }
  b.sharing = std::max<std::size_t>(1, ranks->size());
  for (std::size_t i = 0; i < ranks->size(); ++i)
    if ((*ranks)[i] == r) b.sharer = i;
  if (ranks->size() < 2) return;
  std::vector<bool> used(n, false);
  for (std::size_t other = 0; other < in.size; ++other) {
    placement_input o = in;
    o.rank = other;
    if (!in.peers.empty() && other < in.peers.size()) o.allowed = in.peers[other];
    used[place_rank(l.policy, o).slot] = true;
  }
  const auto idle = static_cast<std::size_t>(std::count(used.begin(), used.end(), false));
  constexpr std::size_t shown = 4;  // bounded whatever the launcher says
  std::string list;
  for (std::size_t i = 0; i < ranks->size() && i < shown; ++i) list += (i ? ", " : "") + std::to_string((*ranks)[i]);
  if (ranks->size() > shown) list += ", ... (" + std::to_string(ranks->size() - shown) + " more)";
  b.warning = std::to_string(in.size) + " local ranks on " + std::to_string(n) + (gpu ? " GPU circuits: " : " circuits: ") +
              std::to_string(ranks->size()) + " share " + (gpu ? "one GPU, " : "one device, ") + what +
              ": local ranks " + list +
              (idle > 0 ? " while " + std::to_string(idle) + " of the pool stand idle (" + l.policy.str() + ")" : "");
}

// bind_rank, with the caller's policy or (nullopt) ROSTER_GPU_BIND's.
ROSTER_INLINE expected<rank_binding> bind_with(const std::optional<bind_policy>& policy,
                                               const bind_options& options) noexcept;

}  // namespace detail

ROSTER_INLINE expected<rank_binding> bind_rank(const bind_options& options) noexcept {
  return detail::bind_with(std::nullopt, options);
}

ROSTER_INLINE expected<rank_binding> bind_rank(const bind_policy& policy, const bind_options& options) noexcept {
  bind_policy p = policy;
  if (p.source == bind_policy{}.source) p.source = "the caller's";
  return detail::bind_with(p, options);
}

ROSTER_INLINE expected<rank_binding> detail::bind_with(const std::optional<bind_policy>& policy_option,
                                                       const bind_options& options) noexcept {
  try {
    // ROSTER_BIND_CPUS is read first: a word that is not a boolean is an
    // error, never a guess ("false" pinned once: any set value did).
    auto pin_env = env::flag(detail::env_bind_cpus);
    if (!pin_env) return std::move(pin_env).error().prepend("bind_rank");
    decision_request request;
    request.bind = policy_option;
    auto d = decide(request);
    if (!d) return std::move(d).error().prepend("bind_rank");
    rank_binding b;
    b.circuit = d->circuit;
    b.adapter = d->adapter;
    // The job's rank, for reading the lines of many nodes together.
    for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK",
                          "PALS_RANKID", "FLUX_TASK_RANK", "JSM_NAMESPACE_RANK"})
      if (auto t = detail::env_text(v); t && b.world_rank < 0)
        if (auto n = detail::parse_uint(detail::trim(*t), 1u << 30)) b.world_rank = static_cast<int>(*n);
    // The pool of the scan the decision stood on (its lazy one: no API it left out is started).
    if (const auto* snap = detail::decision_circuits(); !snap->failure)
      for (const circuit* c : detail::rank_pool(snap->circuits)) b.pool.push_back(c->identity());
    if (d->launcher) {
      b.launcher = d->launcher->rank;
      b.policy = d->launcher->policy.str() + " (" + d->launcher->policy.source + ")";
    } else {
      auto policy = policy_option ? expected<bind_policy>(*policy_option) : bind_policy_from_env();
      b.policy = policy ? policy->str() + " (" + policy->source + ")" : std::string("none");
    }
    std::string line = "rank binding: ";
    if (d->launcher) {
      const auto& l = *d->launcher;
      line += "local rank " + std::to_string(l.rank.rank) + " (" + l.rank.rank_variable + ") of " +
              (l.rank.size > 0 ? std::to_string(l.rank.size) : std::string("an unknown number")) + " -> " +
              detail::describe(*b.circuit) + " (" + std::to_string(l.slot + 1) + " of " + std::to_string(l.pool) +
              " in the pool), " + l.placed;
      detail::sharing_of(l, b);
    } else {
      const auto lr = local_rank();
      line += std::string(lr && *lr ? "not bound (" + b.policy + ") -> " : "no MPI launcher -> ") +
              detail::describe(*b.circuit) + " (the primary)";
    }
    b.circuit_reason = line.substr(std::string_view("rank binding: ").size());
    detail::add_trace_line(line);
    if (!b.warning.empty()) detail::add_trace_line("rank binding: warning: " + b.warning);
    if (b.circuit->occupancy && detail::other_processes(*b.circuit->occupancy) > 0)
      b.circuit_reason += "; " + std::to_string(detail::other_processes(*b.circuit->occupancy)) +
                          " other processes on it (sibling ranks or another job; occupancy never moves a rank)";
    // The CPUs: local to the device (its preferred adapter's PCI function, else an alternate's).
    detail::cpu_locality local = detail::read_cpu_locality(normalize_pci(b.circuit->adapter.pci_address));
    for (const auto& alt : b.circuit->alternates)
      if (local.cpus.empty()) local = detail::read_cpu_locality(normalize_pci(alt.pci_address));
    auto choice = detail::choose_cpus(local, detail::allowed_cpus(), b.sharer, b.sharing);
    b.cpus = std::move(choice.cpus);
    b.device_cpus = std::move(local.cpus);
    b.numa_node = local.numa_node;
    b.cpu_reason = std::move(choice.reason);
    const bool pin = options.pin_cpus || pin_env->value_or(false);
    if (pin) {
      b.pinned = detail::pin_to(b.cpus);
      if (!b.pinned) b.cpu_reason += "; pinning failed (sched_setaffinity refused these CPUs)";
    }
    detail::add_trace_line("rank binding: cpus " + b.cpuset() + (b.pinned ? " (pinned)" : " (not pinned)") + ": " +
                           b.cpu_reason);
    return b;
  } catch (...) {
    return make_error(errc::out_of_memory, "bind_rank: out of memory", "check the memory available to the process");
  }
}

ROSTER_INLINE std::optional<std::uint32_t> rank_binding::ordinal_for(std::string_view backend) const {
  if (circuit == nullptr) return std::nullopt;
  if (adapter.backend == backend) return adapter.ordinal;
  if (circuit->adapter.backend == backend) return circuit->adapter.ordinal;
  for (const auto& a : circuit->alternates)
    if (a.backend == backend) return a.ordinal;
  return std::nullopt;
}

ROSTER_INLINE std::string rank_binding::cpuset() const { return detail::format_cpu_list(cpus); }

ROSTER_INLINE std::string binding_record(const rank_binding& b) {
  using detail::json_number;
  using detail::json_quote;
  std::string out = "{";
  auto key = [&out](std::string_view k) {
    if (out.size() > 1) out += ',';
    json_quote(out, k);
    out += ':';
  };
  auto text = [&](std::string_view k, std::string_view v) {
    key(k);
    json_quote(out, v);
  };
  auto number = [&](std::string_view k, std::optional<double> v) {
    key(k);
    if (v) json_number(out, *v);
    else out += "null";
  };
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  text("host", host);
  number("rank", b.world_rank >= 0 ? std::optional<double>(b.world_rank) : std::nullopt);
  number("local_rank", b.launcher ? std::optional<double>(b.launcher->rank) : std::nullopt);
  number("local_size", b.launcher && b.launcher->size > 0 ? std::optional<double>(b.launcher->size) : std::nullopt);
  text("rank_variable", b.launcher ? std::string_view(b.launcher->rank_variable) : std::string_view{});
  const circuit* c = b.circuit;
  number("circuit", c ? std::optional<double>(static_cast<double>(c->index)) : std::nullopt);
  text("type", c ? to_string(c->type()) : std::string_view{});
  // The identity is a UUID when an adapter of the circuit has one (in its
  // source's form: "GPU-..." only for an NVIDIA GPU), else a PCI address or a name.
  const bool by_uuid = c != nullptr && (c->adapter.has_uuid() ||
                                        std::any_of(c->alternates.begin(), c->alternates.end(),
                                                    [](const adapter_info& a) { return a.has_uuid(); }));
  text("uuid", by_uuid ? c->identity() : std::string{});
  text("pci_address", c ? c->adapter.pci_address : std::string{});
  text("adapter", c ? b.adapter.spec() : std::string{});
  text("name", c ? b.adapter.name : std::string{});
  text("cpuset", b.cpuset());
  number("numa_node", b.numa_node >= 0 ? std::optional<double>(b.numa_node) : std::nullopt);
  key("pinned");
  out += b.pinned ? "true" : "false";
  number("sharing", static_cast<double>(b.sharing));
  text("warning", b.warning);
  text("policy", b.policy);
  text("device_cpus", detail::format_cpu_list(b.device_cpus));
  key("pool");
  out += '[';
  for (std::size_t i = 0; i < b.pool.size(); ++i) {
    if (i) out += ',';
    json_quote(out, b.pool[i]);
  }
  out += ']';
  key("reasons");
  out += '[';
  json_quote(out, b.circuit_reason);
  out += ',';
  json_quote(out, b.cpu_reason);
  out += "]}";
  return out;
}

ROSTER_INLINE expected<rank_binding> bind_rank() noexcept { return bind_rank(bind_options{}); }

}  // namespace roster

namespace roster {
namespace detail {

// One rank's binding as the job check reads it back.
struct bound_rank {
  std::string host, device, adapter, cpus, device_cpus, pool;
  double rank = -1, local_rank = -1, sharing = 1;
  std::vector<std::string> pool_list;
};

inline std::optional<bound_rank> read_bound_rank(const std::string& line) {
  json_value v;
  json_reader r(line);
  if (!r.parse(v) || v.k != json_value::kind::object) return std::nullopt;
  auto text = [&](const char* k) {
    const auto* x = v.get(k);
    return x && x->k == json_value::kind::string ? x->s : std::string{};
  };
  auto number = [&](const char* k, double fallback) {
    const auto* x = v.get(k);
    return x && x->k == json_value::kind::number ? x->n : fallback;
  };
  bound_rank b;
  b.host = text("host");
  b.device = text("uuid").empty() ? text("pci_address") : text("uuid");
  b.adapter = text("adapter");
  b.cpus = text("cpuset");
  b.device_cpus = text("device_cpus");
  b.rank = number("rank", -1);
  b.local_rank = number("local_rank", -1);
  b.sharing = number("sharing", 1);
  if (const auto* p = v.get("pool"); p && p->k == json_value::kind::array)
    for (const auto& item : p->items)
      if (item.k == json_value::kind::string) b.pool_list.push_back(item.s);
  for (const auto& id : b.pool_list) b.pool += (b.pool.empty() ? "" : ", ") + id;
  if (b.device.empty()) b.device = b.adapter;
  return b;
}

inline std::string rank_name(const bound_rank& b, std::size_t index) {
  return "rank " + (b.rank >= 0 ? std::to_string(static_cast<long>(b.rank)) : "#" + std::to_string(index));
}

// Whether a CPU list lies within another (unknown: true, nothing to say).
inline bool cpus_within(const std::string& cpus, const std::string& local) {
  const auto a = parse_cpu_list(cpus), l = parse_cpu_list(local);
  if (!a || !l || a->empty() || l->empty()) return true;
  return std::includes(l->begin(), l->end(), a->begin(), a->end());
}

// The problems of one node's ranks.
inline void check_node(const std::string& host, const std::vector<std::pair<std::size_t, bound_rank>>& ranks,
                       std::vector<placement_problem>& out) {
  const auto& pool = ranks.front().second.pool_list;
  std::vector<std::string> idle;
  for (const auto& id : pool)
    if (std::none_of(ranks.begin(), ranks.end(), [&](const auto& r) { return r.second.device == id; }))
      idle.push_back(id);
  std::vector<std::string> seen;
  for (const auto& [i, b] : ranks) {
    if (std::find(seen.begin(), seen.end(), b.device) != seen.end()) continue;
    seen.push_back(b.device);
    std::string names;
    std::size_t count = 0;
    for (const auto& [j, o] : ranks)
      if (o.device == b.device) names += (count++ ? ", " : "") + rank_name(o, j);
    if (count > 1 && !idle.empty()) {
      std::string idle_list;
      for (const auto& id : idle) idle_list += (idle_list.empty() ? "" : ", ") + id;
      out.push_back({"shared while idle", host,
                     names + " share " + b.device + " while " + idle_list + " stand" + (idle.size() == 1 ? "s" : "") +
                         " idle"});
    }
  }
  for (const auto& [i, b] : ranks)
    if (!cpus_within(b.cpus, b.device_cpus))
      out.push_back({"far from its device", host,
                     rank_name(b, i) + " runs on CPUs " + b.cpus + ", not all local to " + b.device + " (local: " +
                         b.device_cpus + ")"});
}

}  // namespace detail

ROSTER_INLINE expected<job_check> check_placement(std::span<const std::string> records) {
  try {
    if (records.empty())
      return make_error(errc::invalid_argument, "job check: no binding records",
                        "hand in every rank's roster::binding_record (roster::mpi::check_job gathers them; "
                        "`roster-info bind` prints one per rank)");
    job_check out;
    out.records.assign(records.begin(), records.end());
    std::vector<std::pair<std::string, std::vector<std::pair<std::size_t, detail::bound_rank>>>> nodes;
    for (std::size_t i = 0; i < records.size(); ++i) {
      auto b = detail::read_bound_rank(records[i]);
      if (!b) {
        out.problems.push_back({"unreadable record", {},
                                "record #" + std::to_string(i) + " is not a binding record: '" +
                                    detail::printable(records[i], 80) + "'"});
        continue;
      }
      auto it = std::find_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.first == b->host; });
      if (it == nodes.end()) it = nodes.insert(nodes.end(), {b->host, {}});
      it->second.emplace_back(i, std::move(*b));
    }
    for (const auto& [host, ranks] : nodes) {
      detail::check_node(host, ranks, out.problems);
      if (ranks.front().second.pool != nodes.front().second.front().second.pool)
        out.problems.push_back({"pools differ", host,
                                "node " + detail::printable(host) + " sees [" + ranks.front().second.pool +
                                    "], node " + detail::printable(nodes.front().first) + " sees [" +
                                    nodes.front().second.front().second.pool + "]"});
    }
    return out;
  } catch (...) {
    return make_error(errc::out_of_memory, "job check: out of memory", "check the memory available to the process");
  }
}

ROSTER_INLINE std::string job_check::table() const {
  std::vector<std::vector<std::string>> rows{{"host", "rank", "local", "device", "adapter", "cpus", "local", "sharing"}};
  for (const auto& r : records)
    if (auto b = detail::read_bound_rank(r))
      rows.push_back({env::printable(b->host, 64), b->rank >= 0 ? std::to_string(static_cast<long>(b->rank)) : "-",
                      b->local_rank >= 0 ? std::to_string(static_cast<long>(b->local_rank)) : "-",
                      env::printable(b->device, 64), env::printable(b->adapter, 64), env::printable(b->cpus, 64),
                      detail::cpus_within(b->cpus, b->device_cpus) ? "yes" : "NO",
                      std::to_string(static_cast<long>(b->sharing))});
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) line += row[i] + std::string(width[i] - row[i].size() + 2, ' ');
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  if (problems.empty()) out += "job check: no problem found (" + std::to_string(records.size()) + " ranks)\n";
  for (const auto& p : problems)
    out += "job check: " + p.kind + (p.host.empty() ? "" : " on " + detail::printable(p.host)) + ": " + p.text + "\n";
  return out;
}

ROSTER_INLINE std::string job_check::json() const {
  std::string out = "{\"ok\":";
  out += ok() ? "true" : "false";
  out += ",\"ranks\":[";
  bool first = true;
  for (const auto& r : records) {
    if (!detail::read_bound_rank(r)) continue;  // said among the problems
    if (!first) out += ',';
    first = false;
    out += r;
  }
  out += "],\"problems\":[";
  for (std::size_t i = 0; i < problems.size(); ++i) {
    if (i) out += ',';
    out += "{\"kind\":";
    detail::json_quote(out, problems[i].kind);
    out += ",\"host\":";
    detail::json_quote(out, problems[i].host);
    out += ",\"text\":";
    detail::json_quote(out, problems[i].text);
    out += '}';
  }
  return out + "]}";
}

}  // namespace roster
