#pragma once
// Helpers for the tools suite: a temporary folder, running a program with its
// output captured, and a validator for the JSON Schema subset roster-info uses.

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace tools_test {

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

/// A fresh folder under /tmp, removed at the end.
struct temp_dir {
  std::string path;
  temp_dir() {
    char buf[] = "/tmp/roster-tools-XXXXXX";
    path = ::mkdtemp(buf);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

struct run_result {
  int status = -1;
  std::string out, err;
};

/// Runs a program with extra environment (a value of nullopt unsets the
/// variable); returns its exit status and output.
inline run_result run(const std::vector<std::string>& argv,
                      const std::map<std::string, std::optional<std::string>>& env = {}) {
  temp_dir dir;
  const std::string out = dir.path + "/out", err = dir.path + "/err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    for (const auto& [k, v] : env) {
      if (v) ::setenv(k.c_str(), v->c_str(), 1);
      else ::unsetenv(k.c_str());
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  run_result r;
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

/// Runs roster-info with a private cache and no selector or trace from the caller.
inline run_result info(const std::string& exe, std::vector<std::string> args, const std::string& cache,
                       std::map<std::string, std::optional<std::string>> env = {}) {
  args.insert(args.begin(), exe);
  env.emplace("XDG_CACHE_HOME", cache);
  env.emplace("ROSTER_DEVICE_SELECTOR", std::nullopt);
  env.emplace("ROSTER_TRACE", std::nullopt);
  env.emplace("ROSTER_DEVICE", std::nullopt);
  env.emplace("ROSTER_REQUIRE", std::nullopt);
  env.emplace("CUDA_VISIBLE_DEVICES", std::nullopt);
  return run(args, env);
}

/// Returns whether a table row (two spaces, then the pattern) is in the text.
inline bool has_row(const std::string& text, const std::string& pattern) {
  return std::regex_search(text, std::regex("(^|\n)  " + pattern + "\\s*(\n|$)"));
}

/// Returns where a line starting with `start` begins, or npos.
inline std::size_t find_line(const std::string& text, const std::string& start) {
  std::size_t at = 0;
  while (at < text.size()) {
    auto nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    if (text.compare(at, start.size(), start) == 0) return at;
    at = nl + 1;
  }
  return std::string::npos;
}

/// Checks a JSON value against a JSON Schema, for the keywords roster-info's
/// schema uses: type, enum, required, properties, additionalProperties (false),
/// items, minItems, minimum, minLength, pattern, oneOf, $ref to #/$defs/NAME.
/// Any other keyword in the schema is itself reported, so the check cannot
/// silently skip something.
class schema_validator {
 public:
  explicit schema_validator(nlohmann::json schema) : root_(std::move(schema)) { check_keywords(root_, "#"); }
  std::vector<std::string> validate(const nlohmann::json& v) {
    errors_ = keyword_errors_;
    check(root_, v, "$");
    return errors_;
  }

 private:
  static bool has_type(const nlohmann::json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "integer") return v.is_number_integer();
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    return false;
  }
  void check_keywords(const nlohmann::json& s, const std::string& at) {
    static const std::set<std::string> known = {
        "$schema", "$id", "title", "description", "type", "enum", "required", "properties", "additionalProperties",
        "items", "minItems", "minimum", "minLength", "pattern", "oneOf", "$ref", "$defs"};
    if (!s.is_object()) return;
    for (const auto& [k, v] : s.items()) {
      if (!known.count(k)) keyword_errors_.push_back(at + ": unsupported keyword " + k);
      if (k == "properties" || k == "$defs")
        for (const auto& [name, sub] : v.items()) check_keywords(sub, at + "/" + k + "/" + name);
      if (k == "items") check_keywords(v, at + "/items");
      if (k == "oneOf")
        for (const auto& sub : v) check_keywords(sub, at + "/oneOf");
    }
  }
  void fail(const std::string& at, const std::string& why) { errors_.push_back(at + ": " + why); }
  void check(const nlohmann::json& s, const nlohmann::json& v, const std::string& at) {
    if (s.contains("$ref")) {
      const std::string ref = s["$ref"];
      const std::string prefix = "#/$defs/";
      if (ref.rfind(prefix, 0) != 0 || !root_["$defs"].contains(ref.substr(prefix.size())))
        return fail(at, "unresolvable $ref " + ref);
      return check(root_["$defs"][ref.substr(prefix.size())], v, at);
    }
    if (s.contains("oneOf")) {
      int matches = 0;
      for (const auto& sub : s["oneOf"]) {
        auto saved = errors_;
        errors_.clear();
        check(sub, v, at);
        if (errors_.empty()) ++matches;
        errors_ = saved;
      }
      if (matches != 1) fail(at, "matches " + std::to_string(matches) + " of oneOf, not exactly 1");
    }
    if (s.contains("type")) {
      bool ok = false;
      if (s["type"].is_string()) ok = has_type(v, s["type"]);
      else
        for (const auto& t : s["type"]) ok = ok || has_type(v, t);
      if (!ok) return fail(at, "is " + std::string(v.type_name()) + ", not " + s["type"].dump());
    }
    if (s.contains("enum")) {
      bool ok = false;
      for (const auto& e : s["enum"]) ok = ok || e == v;
      if (!ok) fail(at, v.dump() + " is not one of " + s["enum"].dump());
    }
    if (v.is_number() && s.contains("minimum") && v.get<double>() < s["minimum"].get<double>())
      fail(at, "below the minimum");
    if (v.is_string()) {
      const std::string text = v;
      if (s.contains("minLength") && text.size() < s["minLength"].get<std::size_t>()) fail(at, "too short");
      if (s.contains("pattern") && !std::regex_search(text, std::regex(s["pattern"].get<std::string>())))
        fail(at, "'" + text + "' does not match " + s["pattern"].get<std::string>());
    }
    if (v.is_object()) {
      if (s.contains("required"))
        for (const auto& k : s["required"])
          if (!v.contains(k.get<std::string>())) fail(at, "lacks required key " + k.get<std::string>());
      for (const auto& [k, x] : v.items()) {
        if (s.contains("properties") && s["properties"].contains(k)) check(s["properties"][k], x, at + "." + k);
        else if (s.contains("additionalProperties") && s["additionalProperties"] == false)
          fail(at, "has a key the schema does not allow: " + k);
      }
    }
    if (v.is_array()) {
      if (s.contains("minItems") && v.size() < s["minItems"].get<std::size_t>()) fail(at, "too few items");
      if (s.contains("items"))
        for (std::size_t i = 0; i < v.size(); ++i) check(s["items"], v[i], at + "[" + std::to_string(i) + "]");
    }
  }

  nlohmann::json root_;
  std::vector<std::string> errors_, keyword_errors_;
};

}  // namespace tools_test
