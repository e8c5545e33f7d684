#pragma once
// Private: selector grammar and matching; the launcher's local rank.

#include <roster/select.hpp>

#include <algorithm>
#include <mutex>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/text.hpp>

namespace roster {
namespace detail {

inline bool type_word_matches(std::string_view word, device_type t) noexcept {
  if (word == "gpu")
    return t == device_type::discrete_gpu || t == device_type::integrated_gpu || t == device_type::virtual_gpu;
  return word == to_string(t);
}

inline std::string uuid_hex(const adapter_info& a) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (auto b : a.uuid) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

inline constexpr std::string_view selector_fix =
    "write ';'-separated terms BACKEND:WHAT, where BACKEND is a type such as cuda or * and WHAT is an "
    "ordinal, *, a type (gpu, cpu, discrete, integrated, virtual, other), a UUID prefix (GPU-0b8a5f29) or "
    "pci=[DOMAIN:]BUS:DEVICE[.FUNCTION]; prefix a term with ! to exclude, e.g. 'cuda:0;cuda:1;vulkan:*' or '!cpu:*'";

}  // namespace detail

ROSTER_INLINE std::string normalize_pci(std::string_view address) {
  std::string a = detail::lower(detail::trim(address));
  if (a.empty()) return a;
  const auto colons = std::count(a.begin(), a.end(), ':');
  if (colons == 1) a.insert(0, "0000:");
  if (a.find('.') == std::string::npos && std::count(a.begin(), a.end(), ':') == 2) a += ".0";
  return a;
}

ROSTER_INLINE bool selector_term::matches(const adapter_info& a) const {
  if (backend != "*" && !detail::iequal(backend, a.backend)) return false;
  switch (what) {
    case selector_what::any: return true;
    case selector_what::ordinal: return a.ordinal == ordinal;
    case selector_what::type: return detail::type_word_matches(type, a.type);
    case selector_what::uuid_prefix: return a.has_uuid() && detail::uuid_hex(a).starts_with(uuid_hex);
    case selector_what::pci: {
      if (a.pci_address.empty()) return false;
      return normalize_pci(a.pci_address).starts_with(pci);
    }
  }
  return false;
}

ROSTER_INLINE selector_verdict selector::judge(const adapter_info& a) const {
  selector_verdict v;
  bool has_include = false;
  bool included = false;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto& t = terms[i];
    if (t.exclude) {
      if (t.matches(a)) {
        v.kept = false;
        v.reason = "excluded by selector term '" + t.text + "'";
        return v;
      }
      continue;
    }
    if (!included && t.matches(a)) {
      included = true;
      v.order = i;
      v.reason = "matches selector term '" + t.text + "'";
    }
    has_include = true;
  }
  if (has_include && !included) {
    v.kept = false;
    v.reason = "matches no selector term";
  } else if (!has_include) {
    v.reason = terms.empty() ? "no selector" : "not excluded by the selector";
  }
  return v;
}

ROSTER_INLINE std::string selector::rules_out(std::string_view id) const {
  bool has_include = false;
  for (const auto& t : terms) {
    const bool mine = t.backend == "*" || detail::iequal(t.backend, id);
    if (t.exclude) {
      if (mine && t.backend != "*" && t.what == selector_what::any)
        return "excluded by selector term '" + t.text + "'";
      continue;
    }
    has_include = true;
    if (mine) return {};
  }
  return has_include ? "the selector's terms name other backends" : std::string{};
}

namespace detail {

// Reads the PCI address prefix of `pci=ADDRESS` into its normalized form,
// or says what is wrong with it. The grammar: [DOMAIN:]BUS:DEVICE[.FUNCTION],
// DOMAIN 1 to 8 hex digits (0000 when left out), BUS 1 or 2, DEVICE 1 or 2
// (at most 1f), FUNCTION one digit from 0 to 7; each is padded to its width.
inline std::string parse_pci_prefix(std::string_view addr, std::string& out) {
  if (addr.empty()) return "has an empty PCI address after 'pci='";
  for (char c : addr)
    if (!is_hex(c) && c != ':' && c != '.') return "has a PCI address with a character other than hex digits, ':' and '.'";
  std::string_view function;
  if (const auto dot = addr.find('.'); dot != std::string_view::npos) {
    function = addr.substr(dot + 1);
    addr = addr.substr(0, dot);
    if (function.size() != 1 || function[0] < '0' || function[0] > '7')
      return "has a PCI function other than one digit from 0 to 7 after '.' (an address is "
             "[DOMAIN:]BUS:DEVICE[.FUNCTION], e.g. 0000:00:07.0)";
  }
  std::string_view parts[3];
  std::size_t n = 0;
  for (std::string_view rest = addr;;) {
    if (n == 3) return "has more than three ':'-separated parts (an address is [DOMAIN:]BUS:DEVICE[.FUNCTION])";
    const auto colon = rest.find(':');
    parts[n++] = rest.substr(0, colon);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  if (n < 2) return "has no BUS:DEVICE (an address is [DOMAIN:]BUS:DEVICE[.FUNCTION], e.g. 0000:00:07)";
  const std::string_view domain = n == 3 ? parts[0] : std::string_view("0000");
  const std::string_view bus = parts[n - 2], device = parts[n - 1];
  if (domain.empty() || bus.empty() || device.empty())
    return "has an empty part between ':' (an address is [DOMAIN:]BUS:DEVICE[.FUNCTION], e.g. 0000:00:07)";
  if (domain.size() > 8 || bus.size() > 2 || device.size() > 2)
    return "has a PCI domain of more than 8 hex digits, or a bus or device of more than 2";
  const auto pad = [](std::string_view x, std::size_t width) { return std::string(width - std::min(width, x.size()), '0') + std::string(x); };
  const std::string dev = pad(device, 2);
  if (dev > "1f") return "has a PCI device past 1f";
  out = pad(domain, 4) + ":" + pad(bus, 2) + ":" + dev;
  if (!function.empty()) out += "." + std::string(function);
  return {};
}

// Reads a UUID prefix (GPU-0b8a5f29, or bare hex) into its hex digits, or
// says what is wrong with it. A dash stands only where a UUID has one
// (8-4-4-4-12), so nothing the user wrote is dropped: "12-15" is no UUID.
inline std::string parse_uuid_prefix(std::string_view w, std::string& digits) {
  if (w.starts_with("gpu-")) w.remove_prefix(4);
  for (std::size_t i = 0; i < w.size(); ++i) {
    const char c = w[i];
    if (c == '-') {
      const std::size_t k = digits.size();
      if ((k != 8 && k != 12 && k != 16 && k != 20) || (i > 0 && w[i - 1] == '-') || i + 1 == w.size())
        return "has a '-' where a UUID has none (a UUID is 8-4-4-4-12 hex digits, e.g. GPU-0b8a5f29-3c1d-...)";
      continue;
    }
    if (!is_hex(c))
      return "is not an ordinal, '*', a type (gpu, cpu, discrete, integrated, virtual, other), a UUID prefix or "
             "pci=ADDRESS";
    digits.push_back(c);
  }
  if (digits.size() > 32) return "has a UUID longer than 32 hex digits";
  if (digits.size() < 4) return "has a UUID prefix shorter than 4 hex digits";
  return {};
}

// Returns the terms a range A-B stands for, "'cuda:12;cuda:13;cuda:14'", cut
// short after eight.
inline std::string ordinal_list(const std::string& backend, std::string_view from, std::string_view to) {
  const auto a = parse_uint(from, 0x7fffffffu), b = parse_uint(to, 0x7fffffffu);
  if (!a || !b || *b < *a) return "e.g. '" + backend + ":" + std::string(from) + "'";
  std::string out = "'";
  for (std::uint64_t i = *a; i <= *b; ++i) {
    if (i - *a == 8) return out + ";...'";
    out += (i == *a ? "" : ";") + backend + ":" + std::to_string(i);
  }
  return out + "'";
}

// Reads the WHAT of a term (lower case) into t, or says what is wrong with it.
inline std::string parse_what(const std::string& w, selector_term& t) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (w == "*") {
    t.what = selector_what::any;
  } else if (w.starts_with("pci=")) {
    t.what = selector_what::pci;
    return parse_pci_prefix(trim(std::string_view(w).substr(4)), t.pci);
  } else if (std::all_of(w.begin(), w.end(), digit)) {
    // Bare digits are an ordinal however many there are: a UUID prefix of
    // digits only would empty the machine silently ("cpu:99999999999").
    if (w.size() > 10) return "has an ordinal of more than 10 digits (a UUID prefix is written GPU-...)";
    std::uint64_t v = 0;
    for (char c : w) v = v * 10 + static_cast<std::uint64_t>(c - '0');
    if (v > 0x7fffffffu) return "has an ordinal larger than 2^31 - 1";
    t.what = selector_what::ordinal;
    t.ordinal = static_cast<std::uint32_t>(v);
  } else if (w == "gpu" || w == "cpu" || w == "discrete" || w == "integrated" || w == "virtual" || w == "other") {
    t.what = selector_what::type;
    t.type = w;
  } else if (const auto dash = w.find('-'); dash != std::string::npos && dash > 0 && dash + 1 < w.size() &&
                                             std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(dash), digit) &&
                                             std::all_of(w.begin() + static_cast<std::ptrdiff_t>(dash) + 1, w.end(), digit)) {
    std::string why = "is an ordinal range, which the selector grammar has not: list each ordinal as a term of its own (" +
                      ordinal_list(t.backend, w.substr(0, dash), w.substr(dash + 1)) + ")";
    // Eight digits, a dash, four: the start of a UUID of decimal digits only.
    if (dash == 8 && w.size() - dash - 1 == 4)
      why += "; for a UUID prefix of decimal digits, write it with GPU- (" + t.backend + ":GPU-" + w + ")";
    return why;
  } else {
    t.what = selector_what::uuid_prefix;
    return parse_uuid_prefix(w, t.uuid_hex);
  }
  return {};
}

}  // namespace detail

ROSTER_INLINE expected<selector> parse_selector(std::string_view text) {
  selector out;
  if (detail::trim(text).empty()) return out;
  auto bad = [&](std::string_view term, std::string_view why) {
    return make_error(errc::invalid_argument,
                      "device selector '" + detail::printable(text) + "': term '" + detail::printable(term) + "' " +
                          std::string(why),
                      detail::selector_fix);
  };
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(';', start);
    const std::string_view raw = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    std::string_view term = detail::trim(raw);
    selector_term t;
    t.text = std::string(term);
    if (term.empty()) return bad(term, "is empty (two ';' in a row, or one at an end)");
    if (term.front() == '!') {
      t.exclude = true;
      term = detail::trim(term.substr(1));
    }
    std::string_view what;
    if (detail::lower(term.substr(0, 4)) == "pci=") {
      t.backend = "*";
      what = term;
    } else {
      const std::size_t colon = term.find(':');
      if (colon == std::string_view::npos) return bad(t.text, "has no ':' between backend and what, e.g. 'cuda:*'");
      const std::string_view backend = detail::trim(term.substr(0, colon));
      what = detail::trim(term.substr(colon + 1));
      if (backend.empty()) return bad(t.text, "names no backend before ':' (use '*' for every backend)");
      if (backend != "*")
        for (char c : backend)
          if (!detail::is_name_char(c))
            return bad(t.text, "has a backend name with a character other than letters, digits, '_' and '-'");
      t.backend = detail::lower(backend);
    }
    if (what.empty()) return bad(t.text, "says nothing after ':' (use '*' for every adapter)");
    if (const std::string why = detail::parse_what(detail::lower(what), t); !why.empty()) return bad(t.text, why);
    out.terms.push_back(std::move(t));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

ROSTER_INLINE expected<selector> selector_from_env() {
  const auto v = detail::env_text(detail::env_device_selector);
  if (!v) return selector{};
  auto s = parse_selector(*v);
  if (!s) return std::move(s).error().prepend("ROSTER_DEVICE_SELECTOR");
  return s;
}

namespace detail {
struct handed_ranks {
  std::mutex mutex;
  std::optional<node_ranks> ranks;
};
inline handed_ranks& node_ranks_store() {
  static handed_ranks store;
  return store;
}
// The launcher variables' local rank, ignoring what was handed in.
ROSTER_INLINE expected<std::optional<local_rank_info>> launcher_local_rank();
}  // namespace detail

ROSTER_INLINE std::optional<node_ranks> detail::handed_node_ranks() {
  auto& s = node_ranks_store();
  std::lock_guard lock(s.mutex);
  return s.ranks;
}

ROSTER_INLINE expected<std::string> set_node_ranks(std::optional<node_ranks> ranks) {
  try {
    if (ranks && (ranks->size < 1 || ranks->size > local_rank_limit || ranks->rank < 0 || ranks->rank >= ranks->size ||
                  (!ranks->cpus.empty() && ranks->cpus.size() != static_cast<std::size_t>(ranks->size))))
      return make_error(errc::invalid_argument,
                        "set_node_ranks: rank " + std::to_string(ranks->rank) + " of " + std::to_string(ranks->size) +
                            " local ranks (with " + std::to_string(ranks->cpus.size()) + " CPU sets) is not a node's",
                        "hand in the rank and size of MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) (roster::mpi::bind "
                        "does), with one CPU set per local rank or none");
    std::string note;
    if (ranks) {
      auto env = detail::launcher_local_rank();
      if (env && *env && ((*env)->rank != ranks->rank || ((*env)->size > 0 && (*env)->size != ranks->size)))
        note = (*env)->rank_variable + "=" + std::to_string((*env)->rank) +
               ((*env)->size > 0 ? ", " + (*env)->size_variable + "=" + std::to_string((*env)->size) : std::string{}) +
               " disagree with the communicator (local rank " + std::to_string(ranks->rank) + " of " +
               std::to_string(ranks->size) + "): the communicator's are used";
    }
    auto& s = detail::node_ranks_store();
    std::lock_guard lock(s.mutex);
    s.ranks = std::move(ranks);
    return note;
  } catch (...) {
    return make_error(errc::out_of_memory, "set_node_ranks: out of memory", "check the memory available to the process");
  }
}

ROSTER_INLINE expected<std::optional<local_rank_info>> local_rank() {
  if (auto handed = detail::handed_node_ranks()) {
    local_rank_info info;
    info.rank = handed->rank;
    info.size = handed->size;
    info.rank_variable = "MPI_Comm_split_type";
    info.size_variable = "MPI_Comm_size";
    return std::optional<local_rank_info>(std::move(info));
  }
  return detail::launcher_local_rank();
}

ROSTER_INLINE expected<std::optional<local_rank_info>> detail::launcher_local_rank() {
  struct pair {
    const char* rank;
    const char* size;
  };
  static constexpr pair vars[] = {
      {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"},
      {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
      {"SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
      {"PMI_LOCAL_RANK", "PMI_LOCAL_SIZE"},
      {"PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE"},
      {"PALS_LOCAL_RANKID", "PALS_LOCAL_SIZE"},
      {"FLUX_TASK_LOCAL_ID", nullptr},  // Flux sets no local size
      {"JSM_NAMESPACE_LOCAL_RANK", "JSM_NAMESPACE_LOCAL_SIZE"},
  };
  // `what` is what the variable holds, for the Fix: "local index" or "local rank count".
  auto parse = [](const char* name, std::string_view text, const char* what) -> expected<int> {
    const std::string_view s = detail::trim(text);
    const auto v = s.size() <= 9 ? detail::parse_uint(s, 999'999'999) : std::nullopt;
    if (v) return static_cast<int>(*v);
    const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
    return make_error(errc::invalid_argument,
                      std::string(name) + "='" + detail::printable(text) + "' is " +
                          (digits ? "past " + std::to_string(local_rank_limit) + " local ranks"
                                  : std::string("not a whole number")),
                      "set " + std::string(name) + " to this rank's " + what +
                          " (the MPI launcher does), or unset it");
  };
  for (const auto& p : vars) {
    const auto r = detail::env_text(p.rank);
    if (!r) continue;
    auto rank = parse(p.rank, *r, "local index");
    if (!rank) return std::move(rank).error();
    local_rank_info info;
    info.rank = *rank;
    info.rank_variable = p.rank;
    if (const auto s = p.size != nullptr ? detail::env_text(p.size) : std::nullopt) {
      auto size = parse(p.size, *s, "local rank count");
      if (!size) return std::move(size).error();
      if (*size == 0)
        return make_error(errc::invalid_argument, std::string(p.size) + "='" + detail::printable(*s) + "': no local ranks",
                          "set " + std::string(p.size) + " to the number of ranks on this node (at least 1; the "
                          "MPI launcher does), or unset it");
      info.size = *size;
      info.size_variable = p.size;
    }
    // A node runs at most local_rank_limit ranks: a larger figure is a broken
    // launcher environment, and would cost memory and time to act on.
    if (info.rank >= local_rank_limit || info.size > local_rank_limit)
      return make_error(errc::invalid_argument,
                        std::string(p.rank) + "='" + detail::printable(*r) + "'" +
                            (info.size_variable.empty() ? std::string{} : ", " + info.size_variable + "=" + std::to_string(info.size)) +
                            ": more than " + std::to_string(local_rank_limit) + " local ranks",
                        "check the launcher's environment: " + std::string(p.rank) +
                            (p.size != nullptr ? std::string(" and ") + p.size : std::string{}) +
                            " come from mpirun or srun, and a node runs at most " + std::to_string(local_rank_limit) +
                            " ranks");
    if (info.size > 0 && info.rank >= info.size)
      return make_error(errc::invalid_argument,
                        std::string(p.rank) + "=" + std::to_string(info.rank) + " is not below " + info.size_variable + "=" +
                            std::to_string(info.size),
                        "check the launcher's environment: a local rank counts from 0 to the local size - 1");
    return std::optional<local_rank_info>(std::move(info));
  }
  return std::optional<local_rank_info>{};
}

}  // namespace roster
