#pragma once
// Private: the one decision, the roles, the router and the default device.

#include <roster/decide.hpp>
#include <roster/device_cache.hpp>
#include <roster/kernels.hpp>
#include <roster/plugins.hpp>
#include <roster/tuning/store.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/decision/capability.hpp>
#include <roster/detail/decision/measure.hpp>
#include <roster/detail/decision/placement.hpp>
#include <roster/detail/open/requirement.hpp>

#include <algorithm>
#include <mutex>
#include <string>

namespace roster {

namespace detail {
inline work_needs needs_of(const decision_request& r) {
  if (r.program != nullptr) return {r.program->ops(), r.program->type(), r.program};
  return {r.ops, r.type, nullptr};
}

// The primary circuit without a launcher: the one ROSTER_DEVICE names (the
// device in use; `named` is set to its spec), else the first. Says which in
// `why`. A ROSTER_DEVICE that does not parse, or names no adapter of the
// circuits, is an error: default_device() would open another device than
// the decision names.
inline expected<const circuit*> primary_circuit(std::span<const circuit> list, std::string& why,
                                                std::optional<device_spec>& named) {
  if (const auto v = env_nonblank(env_device)) {
    auto spec = parse_spec(*v);
    if (!spec) return std::move(spec).error().prepend("ROSTER_DEVICE");
    for (const auto& c : list)
      if (contains_spec(c, *spec)) {
        why = "ROSTER_DEVICE='" + detail::printable(*v) + "' is in use: " + spec->str() + " of " + describe(c);
        named = *spec;
        return &c;
      }
    std::string kept;
    for (const auto& c : list) {
      kept += (kept.empty() ? "" : ", ") + c.adapter.spec();
      for (const auto& a : c.alternates) kept += ", " + a.spec();
    }
    return make_error(errc::not_found,
                      "ROSTER_DEVICE='" + detail::printable(*v) + "' names " + spec->str() +
                          ", which is not among the adapters kept (" + kept + ")",
                      "set ROSTER_DEVICE to one of those adapters or unset it; the selector, the vendor masks and "
                      "ROSTER_REQUIRE drop adapters, and ROSTER_TRACE=1 shows why each was dropped");
  }
  why = "the first circuit in order: " + describe(list.front()) + " (" + list.front().placed_because + ")";
  return &list.front();
}

// Places the launcher's rank on the pool by the policy; returns its circuit.
inline const circuit* place_launcher_rank(std::span<const circuit> list, const local_rank_info& rank,
                                          bind_policy policy, decision& d, std::string& why) {
  const auto pool = rank_pool(list);
  placement_input in;
  in.rank = static_cast<std::size_t>(rank.rank);
  in.size = rank.size > 0 ? static_cast<std::size_t>(rank.size) : 0;
  for (const circuit* c : pool) {
    cpu_locality local = read_cpu_locality(normalize_pci(c->adapter.pci_address));
    for (const auto& alt : c->alternates)
      if (local.cpus.empty()) local = read_cpu_locality(normalize_pci(alt.pci_address));
    in.pool_cpus.push_back(std::move(local.cpus));
  }
  in.allowed = allowed_cpus();
  in.online = online_cpus();
  if (auto handed = handed_node_ranks()) in.peers = handed->cpus;
  const placement p = place_rank(policy, in);
  d.launcher = launcher_binding{rank, pool.size(), p.slot, std::move(policy), p.why, std::move(in.pool_cpus)};
  why = "local rank " + std::to_string(rank.rank) + " (" + rank.rank_variable + ") -> " + describe(*pool[p.slot]) +
        " by " + d.launcher->policy.str() + " (" + d.launcher->policy.source + "): " + p.why;
  return pool[p.slot];
}

// The circuits to try, in order, for a role; fills the launcher binding.
inline expected<std::vector<const circuit*>> circuits_for(std::span<const circuit> list, const decision_request& r,
                                                          decision& d, std::optional<device_spec>& named) {
  std::vector<const circuit*> order;
  auto rank = local_rank();
  if (!rank) return std::move(rank).error();
  auto policy = r.bind ? expected<bind_policy>(*r.bind) : bind_policy_from_env();
  if (!policy) return std::move(policy).error();
  std::string why;
  const circuit* first = nullptr;
  if (r.follow_launcher && *rank && policy->kind != gpu_bind::none) {
    first = place_launcher_rank(list, **rank, std::move(*policy), d, why);
    d.reasons.push_back("launcher: " + why);
  } else {
    d.reasons.push_back(std::string("launcher: ") +
                        (!*rank              ? "none"
                         : !r.follow_launcher ? "not followed (asked so)"
                                              : "not followed: " + policy->str() + " (" + policy->source + ")"));
    auto p = primary_circuit(list, why, named);
    if (!p) return std::move(p).error();
    first = *p;
  }
  if (r.role == role::primary) {
    d.reasons.push_back("role: primary: " + why);
    order.push_back(first);
  } else {
    // The best circuit other than the primary's: an integrated GPU first.
    for (const auto& c : list)
      if (&c != first && c.type() == device_type::integrated_gpu) order.push_back(&c);
    for (const auto& c : list)
      if (&c != first && c.type() != device_type::integrated_gpu) order.push_back(&c);
    if (order.empty())
      return make_error(errc::not_found,
                        "auxiliary: only one circuit, the primary's (" + describe(*first) + ")",
                        "use the primary device for the auxiliary work (try_auxiliary_device does), or make another "
                        "device visible");
    d.reasons.push_back("role: auxiliary: the best circuit other than the primary's (" + why + "): " +
                        describe(*order.front()));
    return order;
  }
  // When the first cannot run the work: the rest, in order.
  for (const auto& c : list)
    if (&c != first) order.push_back(&c);
  return order;
}

// The adapters of the circuits that can run the work, in the order to try them.
// The adapter ROSTER_DEVICE names (`named`) leads its circuit.
inline void choose_adapter(std::span<const circuit* const> order, const work_needs& n,
                           std::span<const tuning_record> records, const std::optional<device_spec>& named,
                           decision& d) {
  const bool weighed = n.p != nullptr || n.ops.bits != 0 || n.type.has_value();
  auto sel = selector_from_env();
  for (const circuit* c : order) {
    std::vector<adapter_info> adapters{c->adapter};
    adapters.insert(adapters.end(), c->alternates.begin(), c->alternates.end());
    std::string because = c->preferred_because;
    if (weighed) order_adapters(adapters, records, n.ops, n.type, &because, sel ? &*sel : nullptr);
    if (named && c == order.front())
      for (std::size_t i = 0; i < adapters.size(); ++i)
        if (adapters[i].backend == named->backend && adapters[i].ordinal == named->ordinal) {
          std::rotate(adapters.begin(), adapters.begin() + static_cast<std::ptrdiff_t>(i),
                      adapters.begin() + static_cast<std::ptrdiff_t>(i) + 1);
          because = adapters.front().spec() + " named by ROSTER_DEVICE";
          break;
        }
    bool any = false;
    for (const auto& a : adapters) {
      if (auto why = cannot_run_on(a, n); !why.empty()) {
        d.passed.push_back({a.spec(), std::move(why)});
        continue;
      }
      if (d.circuit == nullptr) {
        d.circuit = c;
        d.adapter = a;
        d.spec = {a.backend, a.ordinal};
        d.reasons.push_back("measurements: " + because);
      } else {
        d.fallbacks.push_back(a);
      }
      any = true;
    }
    if (!any && d.circuit == nullptr)
      d.reasons.push_back("capability: " + describe(*c) + " cannot run the work; the next circuit is tried");
  }
  if (d.circuit != nullptr && weighed) d.reasons.push_back("capability: " + d.spec.str() + " runs the work");
}

inline void trace_decision(const decision_request& r, const decision& d) {
  if (!trace_on()) {
    add_trace_line("decision (" + std::string(to_string(r.role)) + "): " + d.spec.str());
    return;
  }
  add_trace_line("decision (" + std::string(to_string(r.role)) + "): " + d.spec.str());
  for (const auto& why : d.reasons) add_trace_line("  " + why);
  for (const auto& p : d.passed) add_trace_line("  passed over " + p.spec + ": " + p.reason);
}

// The inputs' part of the reasons.
inline void input_reasons(const std::optional<requirement>& req, const circuits_snapshot& snap, decision& d) {
  if (auto sel = env_nonblank(env_device_selector))
    d.reasons.push_back("selector: ROSTER_DEVICE_SELECTOR='" + detail::printable(*sel) + "'");
  else
    d.reasons.push_back("selector: none");
  d.reasons.push_back(vendor_masks::any_set([](const char* v) { return env_text(v).has_value(); })
                          ? "masks: set (roster-info or ROSTER_TRACE=1 shows what they hid)"
                          : "masks: none set");
  d.reasons.push_back(req ? "require: ROSTER_REQUIRE='" + detail::printable(req->text) + "' (no host CPU fallback)"
                          : std::string("require: none"));
  // A backend missing from the circuits because its enumerator failed (a bad
  // ROSTER_CPU_THREADS, say) is said, or the choice would look deliberate.
  for (const auto& f : snap.failures)
    d.reasons.push_back("backend " + detail::printable(f.backend) + ": left out, its enumerator failed: " +
                        detail::printable(f.error.what(), 512) + " (Fix: " + detail::printable(f.error.fix(), 512) +
                        ")");
  if (!snap.not_asked.empty()) {
    std::string names;
    for (const auto& b : snap.not_asked) names += (names.empty() ? "" : ", ") + b;
    d.reasons.push_back("started: only what the decision needs; not asked: " + names +
                        " (every GPU on the machine's list is seen by a backend asked, and no record puts them "
                        "ahead)");
    d.not_asked = snap.not_asked;
  }
}

// No adapter was kept: the Fix names the selector only where one is set
// (ROSTER_DEVICE cannot help: it names an adapter, and none is kept).
inline error no_circuit() {
  const auto sel = env_nonblank(env_device_selector);
  std::string fix = "link a backend (the CPU backend opens everywhere)";
  if (sel) fix += ", or relax ROSTER_DEVICE_SELECTOR='" + detail::printable(*sel) + "'";
  return error(errc::not_found, "decision: no circuit (no adapter was kept)",
               fix + "; ROSTER_TRACE=1 shows why each adapter was dropped");
}

// Decides on the decision's scan (decision_circuits: only the APIs the
// decision needs), or on the whole one with `whole`: in measure mode, which
// compares every API of a circuit, and when the lazy scan's circuits cannot
// run the work or pass an adapter over for it (one left out might run it).
inline expected<decision> decide_scanned(const decision_request& r, bool whole = false) {
  auto mode = tuning_mode_from_env();
  if (!mode) return std::move(mode).error();
  auto req = parsed_requirement_env();
  if (!req) return std::move(req).error();
  if (*mode == tuning_mode::measure) whole = true;
  const work_needs needs = needs_of(r);
  const bool weighed = needs.p != nullptr || needs.ops.bits != 0 || needs.type.has_value();
  std::string measured;
  for (int pass = 0;; ++pass) {
    decision d;
    const circuits_snapshot* snap = whole ? current_circuits() : decision_circuits();
    if (snap->failure) return *snap->failure;
    const std::span<const circuit> list(snap->circuits);
    if (list.empty()) {
      if (!snap->not_asked.empty()) {
        whole = true;
        continue;
      }
      if (*req) return requirement_unmet(**req, "decision");
      return unexpected{no_circuit()};
    }
    input_reasons(*req, *snap, d);
    std::optional<device_spec> named;
    auto order = circuits_for(list, r, d, named);
    if (!order) return std::move(order).error();
    if (*mode == tuning_mode::measure && pass == 0) {
      // Measure what no record covers, once; then decide on the new records.
      const bool waiting = d.launcher.has_value() && d.launcher->rank.rank != 0;
      measured = measure_missing(*order, waiting);
      rescan();
      continue;
    }
    if (!measured.empty()) d.reasons.push_back("measure: " + measured);
    choose_adapter(*order, needs, *mode == tuning_mode::off ? std::span<const tuning_record>{} : tuning_in_use(),
                   named, d);
    if (!snap->not_asked.empty() && (d.circuit == nullptr || (weighed && !d.passed.empty()))) {
      whole = true;
      continue;
    }
    if (d.circuit == nullptr) {
      std::string why;
      for (const auto& p : d.passed) why += "\n  " + p.spec + ": " + p.reason;
      return make_error(errc::unavailable, "decision: no adapter can run the work" + why,
                        "link a backend that runs every op of the work (a backend's built-in ops are the op set of its "
                        "registration; a user op needs a kernel for the backend, e.g. roster::cpu::kernel with "
                        "ROSTER_KERNEL), or relax ROSTER_DEVICE_SELECTOR and ROSTER_REQUIRE");
    }
    return d;
  }
}

}  // namespace detail

ROSTER_INLINE std::string bind_policy::str() const {
  switch (kind) {
    case gpu_bind::closest: return "closest";
    case gpu_bind::none: return "none";
    case gpu_bind::single: return "single:" + std::to_string(ranks_per_device);
    case gpu_bind::map: break;
  }
  std::string out = "map_gpu:";
  for (std::size_t i = 0; i < map.size(); ++i) out += (i ? "," : "") + std::to_string(map[i]);
  return out;
}

ROSTER_INLINE expected<bind_policy> parse_bind_policy(std::string_view text) {
  const std::string_view t = detail::trim(text);
  bind_policy p;
  auto bad = [&](std::string_view what) {
    return make_error(errc::invalid_argument, "binding policy '" + detail::printable(text) + "': " + std::string(what),
                      "write closest, map_gpu:I[,I...] (pool indices, one per local rank), single:N (N ranks per "
                      "device) or none, as Slurm's --gpu-bind names them");
  };
  if (detail::iequal(t, "closest")) return p;
  if (detail::iequal(t, "none")) {
    p.kind = gpu_bind::none;
    return p;
  }
  const auto colon = t.find(':');
  const std::string_view word = t.substr(0, colon), rest = colon == std::string_view::npos ? "" : t.substr(colon + 1);
  if (detail::iequal(word, "single")) {
    const auto n = detail::parse_uint(detail::trim(rest), local_rank_limit);
    if (!n || *n == 0) return bad("single takes a whole number of ranks per device, 1 to 65536");
    p.kind = gpu_bind::single;
    p.ranks_per_device = static_cast<std::size_t>(*n);
    return p;
  }
  if (detail::iequal(word, "map_gpu")) {
    p.kind = gpu_bind::map;
    std::string_view list = rest;
    while (p.map.size() <= static_cast<std::size_t>(local_rank_limit)) {
      const auto comma = list.find(',');
      const auto n = detail::parse_uint(detail::trim(list.substr(0, comma)), local_rank_limit);
      if (!n) return bad("map_gpu takes a comma-separated list of pool indices");
      p.map.push_back(static_cast<std::size_t>(*n));
      if (comma == std::string_view::npos) return p;
      list.remove_prefix(comma + 1);
    }
    return bad("map_gpu lists more entries than a node has ranks");
  }
  return bad("not a policy");
}

ROSTER_INLINE expected<bind_policy> bind_policy_from_env() {
  const auto v = detail::env_nonblank(detail::env_gpu_bind);
  if (!v) return bind_policy{};
  auto p = parse_bind_policy(*v);
  if (!p) return std::move(p).error().prepend(detail::env_gpu_bind);
  p->source = std::string(detail::env_gpu_bind) + "='" + detail::printable(*v) + "'";
  return p;
}

ROSTER_INLINE std::vector<const circuit*> detail::rank_pool(std::span<const circuit> list) {
  std::vector<const circuit*> pool;
  auto sel = selector_from_env();
  // Named: an include term for its backend, or for its type (a wildcard like `*:*` does not name it).
  auto named = [&](const circuit& c) {
    if (!sel) return false;
    for (const auto& t : sel->terms)
      if (!t.exclude && t.matches(c.adapter) && (t.backend != "*" || t.what == selector_what::type)) return true;
    return false;
  };
  auto gpu = [](const circuit& c) {
    return c.type() == device_type::discrete_gpu || c.type() == device_type::integrated_gpu ||
           c.type() == device_type::virtual_gpu;
  };
  for (const auto& c : list)
    if ((gpu(c) && c.identified()) || named(c)) pool.push_back(&c);
  if (pool.empty())
    for (const auto& c : list)
      if (c.identified() || c.type() == device_type::cpu || named(c)) pool.push_back(&c);
  if (pool.empty())
    for (const auto& c : list) pool.push_back(&c);
  // The same order on every rank: the selector term that keeps a circuit,
  // its type, its PCI address, its UUID; never occupancy or records, which
  // change as sibling ranks open their contexts and measure.
  auto term = [&](const circuit* c) {
    std::size_t i = 0;
    if (sel)
      for (; i < sel->terms.size(); ++i) {
        const auto& t = sel->terms[i];
        if (t.exclude) continue;
        if (t.matches(c->adapter) ||
            std::any_of(c->alternates.begin(), c->alternates.end(), [&](const adapter_info& a) { return t.matches(a); }))
          break;
      }
    return i;
  };
  std::stable_sort(pool.begin(), pool.end(), [&](const circuit* x, const circuit* y) {
    if (term(x) != term(y)) return term(x) < term(y);
    if (x->type() != y->type()) return x->type() < y->type();
    const std::string px = normalize_pci(x->adapter.pci_address), py = normalize_pci(y->adapter.pci_address);
    if (px.empty() != py.empty()) return !px.empty();
    if (px != py) return px < py;
    return x->identity() < y->identity();
  });
  return pool;
}

namespace detail {
// decide(), on the whole scan with `whole` (every API started).
inline expected<decision> decide_with(const decision_request& r, bool whole) {
  try {
    if (r.program != nullptr)
      if (auto ok = validate(*r.program); !ok) return std::move(ok).error();
    backends_in_use pin;
    auto d = detail::decide_scanned(r, whole);
    if (d) detail::trace_decision(r, *d);
    return d;
  } catch (...) {
    return make_error(errc::out_of_memory, "decision: out of memory", "check the memory available to the process");
  }
}
}  // namespace detail

ROSTER_INLINE expected<decision> decide(const decision_request& r) { return detail::decide_with(r, false); }

ROSTER_INLINE const circuit* primary() noexcept {
  auto d = decide({});
  return d ? d->circuit : nullptr;
}

ROSTER_INLINE const circuit* auxiliary() noexcept {
  decision_request r;
  r.role = role::auxiliary;
  auto d = decide(r);
  return d ? d->circuit : nullptr;
}

namespace detail {
// Opens the decision's adapter, else its fallbacks, through the cache.
inline device* open_decided(const decision& d, std::string_view role) {
  std::vector<device_spec> specs{d.spec};
  for (const auto& a : d.fallbacks) specs.push_back({a.backend, a.ordinal});
  for (const auto& s : specs) {
    auto dev = cached_device(s);
    if (dev) {
      add_trace_line(std::string(role) + ": chose " + s.str());
      return *dev;
    }
    add_trace_line(std::string(role) + ": " + s.str() + " does not open: " + std::string(dev.error().what()));
  }
  return nullptr;
}

// The last link of the fallback chain: the host CPU's circuit, then the spec "cpu".
inline device* open_host_cpu(std::string_view role) {
  if (auto req = parsed_requirement_env(); !req || *req) {
    add_trace_line(std::string(role) + ": no fallback to the host CPU (ROSTER_REQUIRE is set)");
    return nullptr;
  }
  if (auto list = circuits())
    for (const auto& c : *list)
      if (c.type() == device_type::cpu)
        if (auto d = c.open()) {
          add_trace_line(std::string(role) + ": chose " + (*d)->adapter().spec() + " of " + describe(c));
          return *d;
        }
  if (find_backend("cpu") != nullptr) {
    auto d = get_device("cpu");
    if (d) {
      add_trace_line(std::string(role) + ": chose cpu:0 (the host CPU, by spec)");
      return *d;
    }
    add_trace_line(std::string(role) + ": cpu:0 does not open: " + std::string(d.error().what()));
  }
  add_trace_line(std::string(role) + ": nothing opens");
  return nullptr;
}
}  // namespace detail

namespace detail {
// Opens what a decision chose, else its fallbacks; when none opens and the
// decision left backends unasked, decides again with every backend asked
// (an alternate after a failure starts the APIs it needs) and opens that.
inline device* open_decided_or_whole(const decision_request& r, const decision& d, std::string_view role) {
  if (device* dev = open_decided(d, role)) return dev;
  if (d.not_asked.empty()) return nullptr;
  add_trace_line(std::string(role) + ": nothing the decision chose opens; asking the backends it left out");
  if (auto whole = decide_with(r, true)) return open_decided(*whole, role);
  return nullptr;
}
}  // namespace detail

ROSTER_INLINE device* try_primary_device() noexcept {
  try {
    if (auto d = decide({})) {
      if (device* dev = detail::open_decided_or_whole({}, *d, "primary")) return dev;
    } else {
      detail::add_trace_line("primary: " + std::string(d.error().what()));
    }
    return detail::open_host_cpu("primary, falling back to the host CPU");
  } catch (...) {
    return nullptr;
  }
}

ROSTER_INLINE device* try_auxiliary_device() noexcept {
  try {
    decision_request r;
    r.role = role::auxiliary;
    if (auto d = decide(r)) {
      if (device* dev = detail::open_decided_or_whole(r, *d, "auxiliary")) return dev;
    } else {
      detail::add_trace_line("auxiliary: " + std::string(d.error().what()));
    }
    if (auto d = decide({}))
      if (device* dev = detail::open_decided_or_whole({}, *d, "auxiliary, falling back to the primary")) return dev;
    return detail::open_host_cpu("auxiliary, falling back to the host CPU");
  } catch (...) {
    return nullptr;
  }
}

ROSTER_INLINE expected<device*> default_device() noexcept {
  try {
    if (const auto v = detail::env_nonblank(detail::env_device)) {
      // ROSTER_DEVICE names the device: no other backend is asked.
      auto spec = parse_spec(*v);
      if (!spec) return std::move(spec).error().prepend("ROSTER_DEVICE");
      auto d = detail::cached_device(*spec, *v);
      if (!d) return std::move(d).error().prepend("ROSTER_DEVICE");
      detail::add_trace_line("default device: ROSTER_DEVICE='" + detail::printable(*v) + "' names " + spec->str());
      return d;
    }
    auto d = decide({});
    if (!d) return std::move(d).error().prepend("default device");
    if (device* dev = detail::open_decided_or_whole({}, *d, "default device")) return dev;
    return make_error(errc::unavailable, "default device: " + d->spec.str() + " and its fallbacks do not open",
                      "ROSTER_TRACE=1 shows why each did not open; set ROSTER_DEVICE to a device that opens");
  } catch (...) {
    return make_error(errc::out_of_memory, "default device: out of memory",
                      "check the memory available to the process");
  }
}

namespace detail {
inline expected<routed_device> route(const decision_request& r, bool whole = false) {
  auto d = decide_with(r, whole);
  if (!d) return std::move(d).error();
  routed_device out;
  std::vector<adapter_info> tries{d->adapter};
  tries.insert(tries.end(), d->fallbacks.begin(), d->fallbacks.end());
  for (const auto& a : tries) {
    const backend_registration* b = find_backend(a.backend);
    if (b == nullptr) continue;
    acquire_options options;
    options.tuning = tuning_in_use();
    auto dev = open(*b, device_spec{a.backend, a.ordinal}, options);
    if (!dev) {
      d->passed.push_back({a.spec(), std::string(dev.error().what())});
      continue;
    }
    out.device = std::move(*dev);
    out.backend = a.backend;
    out.decision = std::move(*d);
    return out;
  }
  if (!d->not_asked.empty()) return route(r, true);  // ask the backends it left out
  std::string why;
  for (const auto& x : d->passed) why += "\n  " + x.spec + ": " + x.reason;
  return make_error(errc::unavailable, "no adapter can run this program" + why,
                    "link a backend that runs every op of the program, or relax ROSTER_DEVICE_SELECTOR and "
                    "ROSTER_REQUIRE; ROSTER_TRACE=1 shows the decision");
}
}  // namespace detail

ROSTER_INLINE expected<routed_device> acquire_preferred(const program& p) {
  decision_request r;
  r.program = &p;
  return detail::route(r);
}

ROSTER_INLINE expected<routed_device> acquire_preferred(op_set ops, element_type type) {
  decision_request r;
  r.ops = ops;
  r.type = type;
  return detail::route(r);
}

ROSTER_INLINE std::optional<error> contended_triad(const adapter_info& adapter, double triad_gbps,
                                                  std::uint64_t elements) {
  if (elements < detail::baseline_elements) return std::nullopt;  // dispatch-bound: not judged
  if (auto why = detail::contention_problem(adapter, triad_gbps); !why.empty())
    return error(errc::unavailable, why, std::string(detail::contention_fix));
  return std::nullopt;
}

ROSTER_INLINE expected<std::shared_ptr<const void>> hold_measure_lock(const std::string& tuning_file,
                                                                     std::uint32_t wait_ms) {
  auto held = std::make_shared<detail::measure_lock>(tuning_file, std::chrono::milliseconds(wait_ms));
  if (held->failure())  // unavailable: another process measures; io: the folder or the lock file
    return error(held->busy() ? errc::unavailable : errc::io, std::string(held->failure()->what()),
                 std::string(held->failure()->fix()));
  return std::shared_ptr<const void>(std::move(held));
}

}  // namespace roster
