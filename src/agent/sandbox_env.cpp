#include "agent/sandbox_env.h"

#include <cstdlib>

namespace kevo::agent {

namespace {

// Harmless variables of kevo's own environment worth keeping: the user's name and locale.
constexpr const char* kKept[] = {"USER", "LOGNAME", "LANG", "LC_ALL", "TZ"};

}  // namespace

std::map<std::string, std::string> quiet_cli_variables() {
  return {{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
          {"DISABLE_TELEMETRY", "1"},
          {"DISABLE_ERROR_REPORTING", "1"},
          {"DISABLE_AUTOUPDATER", "1"},
          {"NO_UPDATE_NOTIFIER", "1"},
          {"NO_COLOR", "1"}};
}

std::vector<std::string> agent_environment(const AgentEnvSpec& spec) {
  std::map<std::string, std::string> env;
  for (const char* k : kKept)
    if (const char* v = std::getenv(k)) env[k] = v;
  if (!env.count("LANG")) env["LANG"] = "C.UTF-8";
  std::string path;
  for (const auto& d : spec.path_dirs) path += d.string() + ":";
  env["PATH"] = path + "/usr/local/bin:/usr/bin:/bin";
  env["HOME"] = spec.home.string();
  const std::string tmp = (spec.home / "tmp").string();
  env["TMPDIR"] = env["TMP"] = env["TEMP"] = tmp;
  env["TERM"] = "dumb";
  env["SHELL"] = "/bin/bash";
  for (const auto& [k, v] : quiet_cli_variables()) env[k] = v;
  for (const auto& [k, v] : spec.add) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace kevo::agent
