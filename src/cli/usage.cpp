#include "cli/usage.h"

#include <algorithm>
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

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
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

}  // namespace kevo::cli
