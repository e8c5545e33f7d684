#pragma once
// Private: the one guard around a backend's code. A backend that throws is
// caught here and turned into an error, so nothing leaves roster's API as an
// exception: the factory, the enumerator and every device call go through it.

#include <roster/error.hpp>

#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>

namespace roster::detail {

/// The error for a backend call `what` on `where` that threw `thrown`.
inline roster::error backend_threw(std::string_view where, std::string_view backend, std::string_view what,
                                   std::string_view thrown) {
  return roster::error(errc::internal,
                       std::string(where) + ": " + std::string(what) + ": the backend threw " + std::string(thrown),
                       "fix the backend to return an error instead of throwing, or exclude it with "
                       "ROSTER_DEVICE_SELECTOR='!" + std::string(backend) + ":*'");
}

// The text of `where`: a string, or a callable that makes it (built only on an error).
template <class Where>
std::string where_text(const Where& where) {
  if constexpr (std::is_invocable_v<const Where&>) return std::string(where());
  else return std::string(where);
}

/// Runs f (a backend's code, returning an expected) and turns anything it
/// throws into an error naming `where` (a spec or a backend id, or a callable
/// that returns one, so the hot path builds no string) and `what`.
template <class Where, class F>
auto guarded(const Where& where, std::string_view backend, std::string_view what, F&& f) noexcept
    -> std::invoke_result_t<F&> {
  try {
    try {
      return f();
    } catch (const std::bad_alloc&) {
      return roster::error(errc::out_of_memory, where_text(where) + ": " + std::string(what) + ": out of host memory",
                           "free memory or use smaller buffers");
    } catch (const std::exception& e) {
      return backend_threw(where_text(where), backend, what, std::string("an exception: ") + e.what());
    } catch (...) {
      return backend_threw(where_text(where), backend, what, "a non-standard exception");
    }
  } catch (...) {  // no memory even for the message: short strings, which need no allocation
    return roster::error(errc::out_of_memory, "out of memory", "free memory");
  }
}

}  // namespace roster::detail
