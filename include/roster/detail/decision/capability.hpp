#pragma once
// Private: what the work needs and whether an adapter can run it, naming what
// to add when it cannot (the decision's capability step, decide-inl.hpp).

#include <roster/backend.hpp>
#include <roster/circuits.hpp>
#include <roster/kernels.hpp>
#include <roster/program.hpp>
#include <roster/spec.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

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

// What the work needs, from the request.
struct work_needs {
  op_set ops;
  std::optional<element_type> type;
  const program* p = nullptr;
};

// Why adapter `a` cannot run the work, naming what to add; empty when it can.
inline std::string cannot_run_on(const adapter_info& a, const work_needs& n) {
  for (const auto& b : registered_backends()) {
    if (b.id() != a.backend) continue;
    if (!b.dispatches) return "its backend emits code only; it does not dispatch on this host";
    if (n.type == element_type::f64 && !a.f64) return "it has no double support";
    std::string lacks;
    for (std::size_t o = 0; o < op_count; ++o)
      if (n.ops.contains(static_cast<op>(o)) && b.registration->ops.contains(static_cast<op>(o)) &&
          !a.ops.contains(static_cast<op>(o)))
        lacks += (lacks.empty() ? "'" : ", '") + std::string(to_string(static_cast<op>(o))) + "'";
    if (!lacks.empty()) return "the adapter does not run " + lacks;
    return cannot_run(*b.registration, n.ops, n.p);
  }
  return "its backend is not registered";
}

inline bool contains_spec(const circuit& c, const device_spec& s) {
  if (c.adapter.backend == s.backend && c.adapter.ordinal == s.ordinal) return true;
  return std::any_of(c.alternates.begin(), c.alternates.end(),
                     [&](const adapter_info& a) { return a.backend == s.backend && a.ordinal == s.ordinal; });
}

}  // namespace detail
}  // namespace roster
