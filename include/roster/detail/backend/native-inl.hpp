#pragma once
// Private: the checks and messages behind roster::native and roster::native_buffer.

#include <roster/native.hpp>
#include <roster/detail/base/text.hpp>

#include <string>

namespace roster {

namespace detail {
inline std::string describe_native(const buffer& b) {
  return std::string(to_string(b.type)) + " buffer of " + std::to_string(b.size) + " elements";
}

// A device asked for another backend's handles: name both backends and the
// types on either side.
inline error wrong_native_backend(const device& d, std::string_view call, std::string_view backend,
                                  std::string_view type) {
  const std::string mine = d.adapter().backend;
  const std::string spec = d.adapter().spec();
  return error(errc::invalid_argument,
               spec + ": " + std::string(call) + "<" + std::string(type) + ">: asked for " + std::string(backend) +
                   " handles, but this is a " + mine + " device",
               "ask for the handles of this device's backend (roster::" + mine + "::native), or open a " +
                   std::string(backend) + " device (roster::acquire(\"" + std::string(backend) +
                   ":0\")) and use its buffers");
}

// Runs a backend's do_native call, turning a throw into an error and a
// refused kind into the message above.
template <class F>
expected<void> run_native(device& d, std::string_view call, std::string_view backend, std::string_view type,
                          F&& f) noexcept {
  try {
    auto got = f();
    if (!got) {
      // A backend's own message may already name the adapter (CUDA's do).
      const std::string spec = d.adapter().spec();
      if (got.error().what().compare(0, spec.size(), spec) == 0) return std::move(got).error();
      return std::move(got).error().prepend(spec + ": " + std::string(call));
    }
    if (*got) return {};
    if (!iequal(backend, d.adapter().backend)) return wrong_native_backend(d, call, backend, type);
    return make_error(errc::unsupported,
                      d.adapter().spec() + ": " + std::string(call) + "<" + std::string(type) +
                          ">: this device gives no handles of this kind (a backend built against another "
                          "layout of the type, or one that offers no native handles)",
                      "build the backend and this program against the same roster headers, or run the work "
                      "through roster's programs");
  } catch (const std::exception& e) {
    return make_error(errc::internal,
                      d.adapter().spec() + ": " + std::string(call) + ": the backend threw: " + e.what(),
                      "fix the backend to return an error instead of throwing");
  } catch (...) {
    return make_error(errc::internal, d.adapter().spec() + ": " + std::string(call) + ": the backend threw",
                      "fix the backend to return an error instead of throwing");
  }
}
}  // namespace detail

ROSTER_INLINE expected<void> detail::native_access::handles(device& d, std::uint64_t kind, std::string_view backend,
                                                            std::string_view type, void* out) {
  return run_native(d, "native", backend, type, [&] { return d.do_native(kind, out); });
}

ROSTER_INLINE expected<void> detail::native_access::buffer_handles(device& d, const buffer& b, std::uint64_t kind,
                                                                   std::string_view backend, std::string_view type,
                                                                   void* out) {
  // The backend first: a CPU buffer handed to native_buffer<cuda::native> on
  // a CPU device says "wrong backend", the mistake to fix first.
  if (!iequal(backend, d.adapter().backend)) return wrong_native_backend(d, "native_buffer", backend, type);
  if (b.owner != d.id())
    return make_error(errc::invalid_argument,
                      d.adapter().spec() + ": native_buffer<" + std::string(type) + ">: the " + describe_native(b) +
                          " belongs to " + (b.owner == 0 ? std::string("no device") : std::string("another device")) +
                          ", not this " + d.adapter().backend + " device",
                      "ask the device that allocated the buffer for its handles, or allocate it on this one "
                      "with allocate<T>(n)");
  if (!d.owns(b))
    return make_error(errc::invalid_argument,
                      d.adapter().spec() + ": native_buffer<" + std::string(type) + ">: the " + describe_native(b) +
                          " is not live on this " + d.adapter().backend + " device (released, or its handle was altered)",
                      "allocate a new buffer; a released buffer has no native handles");
  return run_native(d, "native_buffer", backend, type, [&] { return d.do_native_buffer(b, kind, out); });
}

ROSTER_INLINE expected<std::optional<code_load>> kernels_loaded(device& d) {
  code_load out;
  auto got = detail::native_access::native(d, code_load::native_id, &out);
  if (!got) return std::move(got).error();
  if (!*got) return std::optional<code_load>{};
  return std::optional<code_load>{std::move(out)};
}

}  // namespace roster
