// The examples that end each command's --help, in one table so that every command has them (a
// CLI test walks every --help and fails on a command without "Examples:").
#include <map>
#include <string>
#include <vector>

#include "cli/usage.h"

namespace kevo::cli {

namespace {

// Key: the command's path under `kevo`, words joined by spaces.
const std::map<std::string, std::vector<std::string>>& examples() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"eval", {"kevo eval softmax my_softmax.cu             # verdict, speedup, exit code",
                "kevo eval softmax --baseline --compile-only --json"}},
      {"doctor", {"kevo doctor", "kevo doctor --remeasure     # measure the GPU's ceilings again",
                  "kevo doctor --db postgresql://kevo@db/kevo   # is the run database reachable, at which schema"}},
      {"llm", {"kevo llm ping anthropic:claude-sonnet-4-5", "kevo llm models"}},
      {"llm ping", {"kevo llm ping openai:gpt-4.1",
                    "kevo llm ping 'http://localhost:8000/v1#qwen2.5-coder-32b' -p 'Say hi'"}},
      {"llm models", {"kevo llm models", "kevo llm models -c kevo.toml"}},
      {"evolve", {"kevo evolve softmax --model anthropic:claude-sonnet-4-5 --events jsonl run.jsonl",
                  "kevo evolve --resume 7                      # after Ctrl-C or a crash",
                  "kevo evolve softmax --model M --gpus 0,1      # one evaluation per GPU at once",
                  "kevo evolve softmax --model M --db postgresql://kevo@db/kevo --gpus none  # workers evaluate",
                  "kevo evolve softmax --model claude-code:claude-sonnet-4-5  # agent episodes (docs/AGENTS.md)",
                  "kevo evolve softmax --model openai:gpt-4.1 --mutator agent   # the model calls kevo's tools"}},
      {"worker", {"kevo worker --db postgresql://kevo@db/kevo             # every GPU of this host",
                  "kevo worker --db runs.db --gpus 1 --idle-exit 60      # a second process on one host"}},
      {"translate", {"kevo translate 19_relu --model openai:gpt-4.1"}},
      {"runs", {"kevo runs", "kevo runs --db runs.db"}},
      {"mcp", {"kevo mcp softmax                              # stdio: claude mcp add kevo -- kevo mcp softmax",
               "kevo mcp softmax --http 127.0.0.1:8765          # Streamable HTTP, one run per session",
               "kevo mcp softmax --fake-gpu --max-evals 10      # a dry run on // fake: markers"}},
      {"show", {"kevo show 7", "kevo show 7 --candidate 12 --json"}},
      {"export", {"kevo export 7 -o softmax-kernel", "kevo export 7 --torch softmax-ext"}},
      {"import", {"kevo import kernelbench level1/23_Softmax.py --out tasks",
                  "kevo import evoengineer records.json --out tasks",
                  "kevo import robust-kbench robust-kbench/tasks --out tasks"}},
      {"import kernelbench", {"kevo import kernelbench level1/23_Softmax.py --out tasks",
                              "kevo import kernelbench level1/*.py --out tasks --force"}},
      {"import evoengineer", {"kevo import evoengineer records.json --out tasks"}},
      {"import robust-kbench", {"kevo import robust-kbench robust-kbench/tasks --out tasks",
                                "kevo import robust-kbench robust-kbench/tasks/layernorm --out tasks --force"}},
      {"export-torch", {"kevo export-torch softmax best.cu softmax-ext --module softmax_ext",
                        "kevo export-torch tasks/layernorm fwd.cu ln-train --backward tasks/layernorm_backward "
                        "--backward-kernel bwd.cu",
                        "kevo export-torch tasks/layernorm - ln-train --backward tasks/layernorm_backward"}},
      {"runners", {"kevo runners start            # ready runners for the next kevo evals",
                   "kevo runners status", "kevo runners stop"}},
      {"runners start", {"kevo runners start", "kevo runners start --spares 2 --idle-exit 3600"}},
      {"runners status", {"kevo runners status          # exit 1 when none runs"}},
      {"runners stop", {"kevo runners stop            # after the runners it handed out have ended"}},
      {"runners serve", {"kevo runners serve --idle-exit 86400   # in the foreground (a service manager's unit)"}},
      {"task", {"kevo task list --suite quick", "kevo task lint softmax gelu"}},
      {"task list", {"kevo task list", "kevo task list --suite quick --json"}},
      {"task lint", {"kevo task lint softmax gelu", "kevo task lint --suite full -q"}},
      {"bench", {"kevo bench --suite quick --model anthropic:claude-sonnet-4-5 --out bench-quick",
                 "kevo bench --suite quick --model M --mutator agent --budget-tokens 2000000  # tool-using episodes",
                 "kevo bench table a.db b.db --format csv"}},
      {"bench table", {"kevo bench table runs.db", "kevo bench table a.db b.db --format csv"}},
      {"serve", {"kevo serve --db runs.db                      # http://127.0.0.1:8080/, read-only",
                 "kevo serve --db postgresql://kevo@db/kevo --listen 0.0.0.0:8080 --token \"$KEVO_SERVE_TOKEN\""}},
      {"report", {"kevo report runs.db -o report.html", "kevo report bench-quick --title 'quick suite'"}},
      {"archive", {"kevo archive list --db runs.db", "kevo archive export lab.jsonl --db runs.db",
                   "kevo archive import lab.jsonl --db other.db"}},
      {"archive list", {"kevo archive list", "kevo archive list --db runs.db"}},
      {"archive show", {"kevo archive show 4 --db runs.db"}},
      {"archive export", {"kevo archive export lab.jsonl --db runs.db", "kevo archive export --db runs.db > lab.jsonl"}},
      {"archive import", {"kevo archive import lab.jsonl --db runs.db   # all or nothing; known entries skipped"}},
      {"recheck", {"kevo recheck cuda-l1/level1 --claims cuda-l1/claims.tsv --problems cuda-l1/problems -o recheck-l1",
                   "kevo recheck solutions --claims claims.tsv --problems KernelBench/level1   # again: resumes"}},
  };
  return table;
}

void add_to(CLI::App& cmd, const std::string& path) {
  auto it = examples().find(path);
  if (it != examples().end()) {
    std::string footer = "\nExamples:";
    for (const auto& e : it->second) footer += "\n  " + e;
    cmd.footer(footer);
  }
  for (CLI::App* sub : cmd.get_subcommands([](CLI::App*) { return true; }))
    add_to(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name());
}

}  // namespace

void add_help_examples(CLI::App& app) {
  app.footer("\nExamples:\n  kevo doctor\n  kevo eval softmax my_softmax.cu\n"
             "  kevo evolve softmax --model anthropic:claude-sonnet-4-5");
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) add_to(*sub, sub->get_name());
}

}  // namespace kevo::cli
