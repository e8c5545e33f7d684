#pragma once
// Private: a non-owning reference to a callable (C++26's std::function_ref),
// for callbacks that do not outlive the call: cheaper to compile than
// <functional>'s std::function, and it never allocates.

#include <type_traits>
#include <utility>

namespace roster::detail {

template <class Signature>
class function_ref;

/// Refers to a callable of signature R(Args...) for the duration of a call.
template <class R, class... Args>
class function_ref<R(Args...)> {
 public:
  /// Refers to `f`, which must outlive every call through this reference.
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> && std::is_invocable_r_v<R, F&, Args...>)
  function_ref(F&& f) noexcept  // NOLINT: implicit on purpose, as std::function_ref
      : object_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* o, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(args)...);
        }) {}
  /// Refers to a plain function.
  function_ref(R (*fn)(Args...)) noexcept  // NOLINT: implicit on purpose
      : object_(reinterpret_cast<void*>(fn)), call_([](void* o, Args... args) -> R {
          return reinterpret_cast<R (*)(Args...)>(o)(std::forward<Args>(args)...);
        }) {}
  /// Calls the callable.
  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace roster::detail
