#pragma once
// Private: the router.

#include <roster/decide.hpp>
#include <roster/kernels.hpp>
#include <roster/plugins.hpp>

#include <string>

namespace roster {

namespace detail {
// Why backend `b` cannot run what is asked, naming what to add; empty when it
// can. Built-in ops (steps, and calls of them that name no variant) are its
// registration's op set, the one source of what it runs; a user kernel, or a
// named variant, needs its kernel entry.
inline std::string cannot_run(const backend_registration& b, op_set needed, const program* p) {
  std::string lacks, no_kernel;
  auto note = [](std::string& list, std::string_view name) {
    const std::string quoted = "'" + std::string(name) + "'";
    if (list.find(quoted) == std::string::npos) list += (list.empty() ? "" : ", ") + quoted;
  };
  for (std::size_t o = 0; o < op_count; ++o)
    if (needed.contains(static_cast<op>(o)) && !b.ops.contains(static_cast<op>(o))) note(lacks, to_string(static_cast<op>(o)));
  if (p != nullptr)
    for (const auto& s : p->steps()) {
      if (s.op != op::call) continue;
      const op o = builtin_op(s.call->op);
      if (o != op::call && s.call->variant.empty()) {
        if (!b.ops.contains(o)) note(lacks, s.call->op);
      } else if (!find_kernel(s.call->op, b.id, s.call->buffers.front().type, s.call->variant)) {
        note(no_kernel, s.call->op);
      }
    }
  std::string why;
  if (!lacks.empty())
    why = "does not run " + lacks + ": its op set lacks " + (lacks.find(',') == std::string::npos ? "it" : "them") +
          " (add them to the backend type's ops)";
  if (!no_kernel.empty())
    why += (why.empty() ? "" : "; ") + std::string("has no kernel for ") + no_kernel +
           " (register one for backend '" + std::string(b.id) + "' with ROSTER_KERNEL)";
  return why;
}
ROSTER_INLINE expected<routed_device> acquire_preferred_for(op_set needed, element_type type, const program* p);
}  // namespace detail

ROSTER_INLINE expected<routed_device> acquire_preferred(const program& p) {
  if (auto ok = validate(p); !ok) return std::move(ok).error();
  return detail::acquire_preferred_for(p.ops(), p.type(), &p);
}

ROSTER_INLINE expected<routed_device> acquire_preferred(op_set needed, element_type type) {
  return detail::acquire_preferred_for(needed, type, nullptr);
}

ROSTER_INLINE expected<routed_device> detail::acquire_preferred_for(op_set needed, element_type type,
                                                                    const program* p) {
  routed_device out;
  backends_in_use pin;
  for (const auto& b : registered_backends()) {
    const std::string id(b.id());
    if (!b.dispatches) {
      out.passed.push_back({id, "emits code only; it does not dispatch on this host"});
      continue;
    }
    if (auto why = cannot_run(*b.registration, needed, p); !why.empty()) {
      out.passed.push_back({id, std::move(why)});
      continue;
    }
    auto d = detail::open(*b.registration, device_spec{id, 0}, {});
    if (!d) {
      out.passed.push_back({id, d.error().message()});
      continue;
    }
    if (type == element_type::f64 && !(*d)->caps().f64) {
      out.passed.push_back({id, "its device has no double support"});
      continue;
    }
    out.device = std::move(*d);
    out.backend = id;
    return out;
  }
  std::string why;
  for (const auto& x : out.passed) why += "\n  " + x.backend + ": " + x.reason;
  return make_error(errc::unavailable, "no backend can run this program" + (why.empty() ? std::string(" (none registered)") : why),
                    "link a backend that runs every op of the program (a backend's built-in ops are the op set of "
                    "its registration; a user op needs a kernel for the backend, e.g. roster::cpu::kernel with "
                    "ROSTER_KERNEL), or relax the selector");
}

}  // namespace roster
