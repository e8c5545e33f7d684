#pragma once
// Sets an environment variable for one scope and puts back what was there
// (its old value, or unset) when the scope ends. Tests only: setenv is not
// thread-safe, so a test that uses it starts no thread while it is set.

#include <cstdlib>
#include <optional>
#include <string>

namespace roster_test {

struct scoped_env {
  std::string name;
  std::optional<std::string> saved;
  scoped_env(const char* n, const char* value) : name(n) {
    if (const char* v = std::getenv(n)) saved = v;
    ::setenv(n, value, 1);
  }
  ~scoped_env() {
    if (saved) ::setenv(name.c_str(), saved->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;
};

}  // namespace roster_test
