#include "cli/usage.h"

#include <algorithm>
#include <cctype>
#include <numeric>

#include <fmt/format.h>

namespace kevo::cli {

namespace {

std::string top_level_name(const CLI::App& app) {
  auto subs = app.get_subcommands();
  return subs.empty() ? "" : subs.front()->get_name();
}

// Whether `arg` (an option of `app`, without "=value") takes the next word as its value.
bool takes_value(const CLI::App& app, const std::string& arg) {
  if (arg.find('=') != std::string::npos) return false;
  const CLI::Option* opt = app.get_option_no_throw(arg);
  return opt && opt->get_items_expected_max() > 0;
}

bool has_positionals(const CLI::App& app) {
  auto opts = app.get_options([](const CLI::Option* o) { return o->get_positional(); });
  return !opts.empty();
}

}  // namespace

int usage_error_code(const CLI::App& app) {
  static const char* const kCheckerFamily[] = {"eval", "task", "import", "export-torch"};
  std::string top = top_level_name(app);
  for (const char* n : kCheckerFamily)
    if (top == n) return 21;
  return 2;
}

std::optional<std::string> unknown_command_message(const CLI::App& app,
                                                   const std::vector<std::string>& args) {
  const CLI::App* at = &app;
  std::string path = "kevo";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.empty() || arg[0] == '-') {
      if (takes_value(*at, arg)) ++i;
      continue;
    }
    auto subs = at->get_subcommands([](const CLI::App*) { return true; });
    // A command with arguments of its own: the rest are its arguments.
    if (subs.empty() || has_positionals(*at)) return std::nullopt;
    auto hit = std::find_if(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->check_name(arg); });
    if (hit != subs.end()) {
      at = *hit;
      path += " " + (*hit)->get_name();
      continue;
    }
    // A command group only ever takes a subcommand: this word was meant as one.
    const CLI::App* best = nullptr;
    size_t best_d = SIZE_MAX;
    std::string names;
    for (const CLI::App* s : subs) {
      if (s->get_group().empty()) continue;  // hidden
      names += (names.empty() ? "" : ", ") + s->get_name();
      size_t d = edit_distance(arg, s->get_name());
      if (d < best_d) best_d = d, best = s;
    }
    std::string msg = fmt::format("{}: unknown command '{}'", path, arg);
    if (best) msg += fmt::format(" (did you mean '{}'?)", best->get_name());
    return msg + fmt::format("\ncommands: {}\nRun with --help for more information.", names);
  }
  return std::nullopt;
}

namespace {

// The option `arg` names (its name before any "=value"), or "" for a word that is not an option
// ("-", "--", a negative number, combined short flags such as "-vq").
std::string option_name(const std::string& arg) {
  if (arg.size() < 2 || arg[0] != '-' || arg == "--") return "";
  if (std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.') return "";
  if (arg[1] != '-' && arg.size() > 2) return "";
  return arg.substr(0, arg.find('='));
}

// The option of `at` or of a command above it (options given before the subcommand) named so.
const CLI::Option* find_option(const CLI::App* at, const std::string& name) {
  for (; at; at = at->get_parent())
    if (const CLI::Option* o = at->get_option_no_throw(name)) return o;
  return nullptr;
}

std::string closest_option(const CLI::App& at, const std::string& name) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const CLI::Option* o : at.get_options()) {
    for (const std::string& l : o->get_lnames()) {
      size_t d = edit_distance(name, "--" + l);
      if (d < best_d) best_d = d, best = "--" + l;
    }
  }
  return best_d <= std::max<size_t>(2, name.size() / 3) ? best : "";
}

}  // namespace

std::optional<std::string> unknown_option_message(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* at = &app;
  std::string path = "kevo";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") return std::nullopt;  // the rest are positional words
    const std::string name = option_name(arg);
    if (!name.empty()) {
      const CLI::Option* o = find_option(at, name);
      if (!o) {
        std::string msg = fmt::format("{}: unknown option '{}'", path, name);
        if (std::string near = closest_option(*at, name); !near.empty()) msg += fmt::format(" (did you mean '{}'?)", near);
        return msg + fmt::format("\nRun '{} --help' for its options.", path);
      }
      if (arg.find('=') == std::string::npos && o->get_items_expected_max() > 0) ++i;
      continue;
    }
    auto subs = at->get_subcommands([](const CLI::App*) { return true; });
    auto hit = std::find_if(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->check_name(arg); });
    if (hit != subs.end() && !has_positionals(*at)) {
      at = *hit;
      path += " " + (*hit)->get_name();
    }
  }
  return std::nullopt;
}

}  // namespace kevo::cli
