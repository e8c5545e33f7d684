#pragma once
/// The error type and roster::expected, the return type of every fallible call.

#include <roster/config.hpp>

#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <optional>

namespace roster {

/// Closed set of error categories; the message says the rest.
enum class errc : std::uint8_t {
  invalid_argument,  ///< malformed spec, selector, program or value
  not_found,         ///< unknown backend, adapter or ordinal
  unavailable,       ///< backend present but cannot run here (no driver, no device)
  unsupported,       ///< the device cannot do what was asked (op, element type)
  device_fault,      ///< the API reported a failure while working
  out_of_memory,     ///< an allocation failed
  conflict,          ///< two registrations claim the same key
  io,                ///< a file could not be read or written
  internal,          ///< a factory threw or returned nothing
};

/// Returns the name of an error code, e.g. "invalid_argument".
constexpr std::string_view to_string(errc c) noexcept {
  switch (c) {
    case errc::invalid_argument: return "invalid_argument";
    case errc::not_found: return "not_found";
    case errc::unavailable: return "unavailable";
    case errc::unsupported: return "unsupported";
    case errc::device_fault: return "device_fault";
    case errc::out_of_memory: return "out_of_memory";
    case errc::conflict: return "conflict";
    case errc::io: return "io";
    case errc::internal: return "internal";
  }
  return "unknown";
}

/// A failure: a code, what went wrong and what to do about it, held apart
/// (as Abseil's Status holds its code and message); message() joins them.
class error {
 public:
  /// Builds an error from a code, what went wrong, and what to do about it.
  error(errc code, std::string_view what, std::string_view fix) : code_(code), what_(what), fix_(fix) {}
  /// Returns the error's category.
  [[nodiscard]] errc code() const noexcept { return code_; }
  /// Returns the whole message: what went wrong, then "\nFix: " and what to do.
  [[nodiscard]] std::string message() const {
    std::string m;
    m.reserve(what_.size() + fix_.size() + 6);
    m.append(what_).append("\nFix: ").append(fix_);
    return m;
  }
  /// Returns what went wrong (the message before its Fix: part).
  [[nodiscard]] std::string_view what() const noexcept { return what_; }
  /// Returns what to do about it (the text after "Fix: ").
  [[nodiscard]] std::string_view fix() const noexcept { return fix_; }
  friend bool operator==(const error&, const error&) = default;
  /// Prefixes what went wrong with context ("CONTEXT: what"); the fix stays.
  /// Each layer adds its context once: when what went wrong already starts
  /// with the context's first part ("cuda:0" of "cuda:0: dispatch"), or with
  /// the backend id of a spec ("cuda: " under "cuda:0"), that part gives way
  /// to the context instead of standing twice.
  error& prepend(std::string_view context) {
    const std::string_view head = context.substr(0, context.find(": "));
    std::string_view lead = head;
    if (!starts_with_context(lead)) {
      const std::size_t colon = head.find(':');
      lead = colon == std::string_view::npos ? std::string_view{} : head.substr(0, colon);
      bool spec = colon != std::string_view::npos && colon + 1 < head.size();
      for (std::size_t i = colon + 1; spec && i < head.size(); ++i) spec = head[i] >= '0' && head[i] <= '9';
      if (!spec || lead.empty() || !starts_with_context(lead)) lead = {};
    }
    if (!lead.empty()) {
      if (lead == context) return *this;
      what_.erase(0, lead.size() + 2);
    }
    what_.insert(0, std::string(context) + ": ");
    return *this;
  }

 private:
  bool starts_with_context(std::string_view lead) const noexcept {
    return !lead.empty() && what_.size() > lead.size() + 1 && std::string_view(what_).substr(0, lead.size()) == lead &&
           what_[lead.size()] == ':' && what_[lead.size() + 1] == ' ';
  }

  errc code_;
  std::string what_;
  std::string fix_;
};

/// Wraps an error to construct an expected holding it.
struct unexpected {
  roster::error value;
};

/// Returns an unexpected holding a new error.
inline unexpected make_error(errc code, std::string_view what, std::string_view fix) {
  return unexpected{error(code, what, fix)};
}

/// A value or an error: a small C++20 stand-in for std::expected. Its storage
/// is a plain tagged union, not std::variant: every fallible call of roster
/// returns one, and a variant's visitation machinery is the largest part of
/// what a file that includes roster's headers costs to compile.
template <class T>
class [[nodiscard]] expected {
 public:
  using value_type = T;
  template <class U = T>
    requires std::is_constructible_v<T, U&&> && (!std::is_same_v<std::remove_cvref_t<U>, expected>) &&
             (!std::is_same_v<std::remove_cvref_t<U>, unexpected>)
  expected(U&& v) : has_(true) {
    ::new (static_cast<void*>(&value_)) T(std::forward<U>(v));
  }
  expected(unexpected e) : has_(false) { ::new (static_cast<void*>(&error_)) roster::error(std::move(e.value)); }
  expected(roster::error e) : has_(false) { ::new (static_cast<void*>(&error_)) roster::error(std::move(e)); }
  expected(const expected& o) : has_(o.has_) {
    if (has_) ::new (static_cast<void*>(&value_)) T(o.value_);
    else ::new (static_cast<void*>(&error_)) roster::error(o.error_);
  }
  expected(expected&& o) noexcept(std::is_nothrow_move_constructible_v<T>) : has_(o.has_) {
    if (has_) ::new (static_cast<void*>(&value_)) T(std::move(o.value_));
    else ::new (static_cast<void*>(&error_)) roster::error(std::move(o.error_));
  }
  expected& operator=(const expected& o) {
    if (this != &o) {
      destroy();
      has_ = o.has_;
      if (has_) ::new (static_cast<void*>(&value_)) T(o.value_);
      else ::new (static_cast<void*>(&error_)) roster::error(o.error_);
    }
    return *this;
  }
  expected& operator=(expected&& o) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &o) {
      destroy();
      has_ = o.has_;
      if (has_) ::new (static_cast<void*>(&value_)) T(std::move(o.value_));
      else ::new (static_cast<void*>(&error_)) roster::error(std::move(o.error_));
    }
    return *this;
  }
  ~expected() { destroy(); }

  [[nodiscard]] bool has_value() const noexcept { return has_; }
  explicit operator bool() const noexcept { return has_; }
  T& value() & { return value_; }
  const T& value() const& { return value_; }
  T&& value() && { return std::move(value_); }
  T& operator*() & { return value_; }
  const T& operator*() const& { return value_; }
  T&& operator*() && { return std::move(value_); }
  T* operator->() { return &value_; }
  const T* operator->() const { return &value_; }
  const roster::error& error() const& { return error_; }
  roster::error&& error() && { return std::move(error_); }
  template <class U>
  T value_or(U&& fallback) const& {
    return has_ ? value_ : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  void destroy() noexcept {
    if (has_) value_.~T();
    else error_.~error();
  }
  union {
    T value_;
    roster::error error_;
  };
  bool has_;
};

/// expected<void>: success or an error.
template <>
class [[nodiscard]] expected<void> {
 public:
  using value_type = void;
  expected() = default;
  expected(unexpected e) : e_(std::in_place, std::move(e.value)) {}
  expected(roster::error e) : e_(std::in_place, std::move(e)) {}
  [[nodiscard]] bool has_value() const noexcept { return !e_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  const roster::error& error() const& { return *e_; }
  roster::error&& error() && { return std::move(*e_); }

 private:
  std::optional<roster::error> e_;
};

}  // namespace roster
