#include "llm/keys.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cstdlib>
#include <sstream>

#include "llm/errors.h"
#include "util/fs.h"

namespace kevo::llm {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::string expand_home(const std::string& path) {
  if (path.starts_with("~/"))
    if (const char* home = std::getenv("HOME")) return std::string(home) + path.substr(1);
  return path;
}

}  // namespace

Result<std::string> resolve_api_key(const ProviderConfig& p, const std::string& key_file) {
  if (p.api_key_env.empty()) return std::string();
  if (const char* v = std::getenv(p.api_key_env.c_str()); v && *v) return trim(v);
  if (!key_file.empty()) {
    std::string path = expand_home(key_file);
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077))
      spdlog::warn("key file {} is readable by other users; chmod 600 it", path);
    auto text = read_file(path);
    if (!text)
      return make_error(ErrorKind::kFatal, fmt::format("cannot read key file: {}", text.error().message));
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
      line = trim(line);
      if (line.empty() || line[0] == '#') continue;
      if (line.starts_with("export ")) line = trim(line.substr(7));
      auto eq = line.find('=');
      if (eq == std::string::npos || trim(line.substr(0, eq)) != p.api_key_env) continue;
      std::string value = trim(line.substr(eq + 1));
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
          value.back() == value.front())
        value = value.substr(1, value.size() - 2);
      if (!value.empty()) return value;
    }
  }
  if (!p.key_required) return std::string();
  return make_error(
      ErrorKind::kFatal,
      fmt::format("no API key for provider '{}': set the environment variable {}{}", p.name,
                  p.api_key_env,
                  key_file.empty() ? std::string(" (or name a key file with llm.key_file)")
                                   : fmt::format(" or add {}=... to the key file {}",
                                                 p.api_key_env, key_file)));
}

}  // namespace kevo::llm
