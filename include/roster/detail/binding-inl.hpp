#pragma once
// Private: rank binding. Local ranks go round-robin over the GPU circuits,
// with the CPUs local to the device, and one JSON line per binding.

#include <roster/binding.hpp>
#include <roster/env.hpp>
#include <roster/detail/cpu_affinity.hpp>
#include <roster/detail/env.hpp>
#include <roster/detail/json.hpp>
#include <roster/detail/requirement.hpp>

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

ROSTER_INLINE expected<rank_binding> bind_rank(const bind_options& options) noexcept {
  try {
    // ROSTER_BIND_CPUS is read first: a word that is not a boolean is an
    // error, never a guess ("false" pinned once: any set value did).
    auto pin_env = env::flag(detail::env_bind_cpus);
    if (!pin_env) return std::move(pin_env).error().prepend("bind_rank");
    auto d = decide({});
    if (!d) return std::move(d).error().prepend("bind_rank");
    rank_binding b;
    b.circuit = d->circuit;
    b.adapter = d->adapter;
    std::size_t n = 1, r = 0;
    if (d->launcher) {
      b.launcher = d->launcher->rank;
      n = d->launcher->pool;
      r = static_cast<std::size_t>(d->launcher->rank.rank);
    }
    std::string line = "rank binding: ";
    if (b.launcher)
      line += "local rank " + std::to_string(r) + " (" + b.launcher->rank_variable + ") of " +
              (b.launcher->size > 0 ? std::to_string(b.launcher->size) : std::string("an unknown number")) + " -> ";
    else
      line += "no MPI launcher -> ";
    line += detail::describe(*b.circuit) +
            (d->launcher ? " (" + std::to_string(r % n + 1) + " of " + std::to_string(n) + " circuits ranks share)"
                         : std::string(" (the primary)"));
    b.circuit_reason = line.substr(std::string_view("rank binding: ").size());
    detail::add_trace_line(line);
    const std::size_t size = b.launcher ? static_cast<std::size_t>(b.launcher->size) : 0;
    if (size > n) {
      // Bounded whatever the launcher says: counts, and at most a few ranks.
      constexpr std::size_t shown = 4;
      const std::size_t first = r % n;
      const std::size_t sharing = (size - first + n - 1) / n;
      std::string ranks;
      std::size_t listed = 0;
      for (std::size_t other = first; other < size && listed < shown; other += n, ++listed)
        ranks += (ranks.empty() ? "" : ", ") + std::to_string(other);
      if (sharing > listed) ranks += ", ... (" + std::to_string(sharing - listed) + " more)";
      const bool gpu = b.circuit->type() != device_type::cpu;
      b.warning = std::to_string(size) + " local ranks on " + std::to_string(n) +
                  (gpu ? " GPU circuits: " : " circuits: ") + std::to_string(sharing) + " share " +
                  (gpu ? "one GPU, " : "one device, ") + detail::describe(*b.circuit) + " [" +
                  b.circuit->identity() + "]: local ranks " + ranks;
      detail::add_trace_line("rank binding: warning: " + b.warning);
    }
    b.sharing = size > n ? (size - r % n + n - 1) / n : 1;
    // The CPUs: local to the device (its preferred adapter's PCI function, else an alternate's).
    detail::cpu_locality local = detail::read_cpu_locality(normalize_pci(b.circuit->adapter.pci_address));
    for (const auto& alt : b.circuit->alternates)
      if (local.cpus.empty()) local = detail::read_cpu_locality(normalize_pci(alt.pci_address));
    auto choice = detail::choose_cpus(local, detail::allowed_cpus(), r / n, b.sharing);
    b.cpus = std::move(choice.cpus);
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
  // The launcher's world rank, for reading the lines of many nodes together.
  std::optional<double> world;
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK",
                        "PALS_RANKID"})
    if (auto t = detail::env_text(v); t && !world)
      if (auto n = detail::parse_uint(detail::trim(*t), 1u << 30)) world = static_cast<double>(*n);
  number("rank", world);
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
