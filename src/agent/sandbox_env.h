// The environment an agent CLI starts with: built from nothing rather than from kevo's, so that no
// variable of the user's (other providers' API keys, database URLs, cloud credentials, tokens)
// reaches a process that runs a model's shell commands. It gets a PATH, a private HOME and TMPDIR
// in its workspace, a locale, a plain terminal, and the variables its CLI needs (base URL, its one
// model key, the switches that keep it off the network), which the caller adds.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kevo::agent {

struct AgentEnvSpec {
  std::filesystem::path home;                    // also where TMPDIR points (home/tmp)
  std::vector<std::filesystem::path> path_dirs;  // searched first (the CLI's bin, node's bin)
  std::map<std::string, std::string> add;        // the CLI's own variables
};

// "NAME=value" each, for SpawnOptions::env_exact.
std::vector<std::string> agent_environment(const AgentEnvSpec& spec);

// The variables every agent CLI gets that keep it from reaching anything but its model: no
// telemetry, error reports, update checks or feature-flag fetches.
std::map<std::string, std::string> quiet_cli_variables();

}  // namespace kevo::agent
