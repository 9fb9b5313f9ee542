#include "agent/cli_episodes.h"

#include <cstdlib>

#include <fmt/format.h>

#include "agent/cli_agent.h"
#include "agent/kernel_tools.h"
#include "evolve/prompts.h"
#include "mcp/stdio.h"
#include "util/fs.h"

namespace kevo::agent {

namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

evolve::EpisodeOutcome failed(std::string model, std::string why, bool fatal) {
  evolve::EpisodeOutcome o;
  o.model = std::move(model);
  o.error = std::move(why);
  o.fatal = fatal;
  return o;
}

}  // namespace

ModelApi default_model_api(AgentCliKind kind) {
  switch (kind) {
    case AgentCliKind::kClaudeCode: return {env_or("ANTHROPIC_BASE_URL", "https://api.anthropic.com"), "ANTHROPIC_API_KEY"};
    case AgentCliKind::kCodex: return {env_or("OPENAI_BASE_URL", "https://api.openai.com/v1"), "OPENAI_API_KEY"};
    case AgentCliKind::kCommand: return {};
  }
  return {};
}

std::string episode_prompt(const evolve::Job& job) {
  return job.prompt.system + "\n\n" + job.prompt.user +
         "\n\n## How to answer in this session\n"
         "Ignore any answer format above: you work through kevo's tools (the MCP server `kevo`). Call `task` for "
         "the task, `evaluate` for each kernel you want checked and timed (every call is recorded), `profile` for "
         "Nsight Compute's view of a passing one, and `submit` for your best kernel when you are done. Only what the "
         "tools report counts; nothing you write in text is read. The files in your workspace are copies for you "
         "to read: changing them changes nothing kevo uses.\n";
}

CliEpisodes::CliEpisodes(const Task& task, evolve::CandidateEvaluator& ev, CliEpisodeOptions o)
    : task_(task), ev_(ev), o_(std::move(o)) {
  if (o_.api.base_url.empty() && o_.api.key_env.empty()) o_.api = default_model_api(o_.cli.kind);
}

std::string CliEpisodes::name() const {
  return fmt::format("{}:{}", to_string(o_.cli.kind), o_.cli.kind == AgentCliKind::kCommand ? o_.cli.command_template : o_.cli.model);
}

Status CliEpisodes::write_workspace(const fs::path& ws, const evolve::TaskContext& ctx) const {
  KEVO_TRY(write_file_atomic(ws / "TASK.md", evolve::task_context_text(ctx)));
  KEVO_TRY(write_file_atomic(ws / "ABI.md", ctx.abi_text));
  return write_file_atomic(ws / "baseline.cu", ctx.baseline_code);
}

evolve::EpisodeOutcome CliEpisodes::run(const evolve::Job& job, const evolve::TaskContext& ctx,
                                        evolve::EpisodeBroker& broker, const llm::CancelToken& cancel) {
  const fs::path dir = o_.work_root / fmt::format("episode-{}", ++episodes_);
  std::error_code ec;
  fs::create_directories(dir / "workspace", ec);
  if (ec) return failed(name(), fmt::format("cannot make {}: {}", (dir / "workspace").string(), ec.message()), false);
  if (auto w = write_workspace(dir / "workspace", ctx); !w) return failed(name(), w.error().message, false);
  SessionOptions so;
  so.budgets = o_.budgets;
  so.broker = &broker;
  so.context = &ctx;
  so.parents = job.parents;
  so.model = name();
  so.episode = job.no;
  auto session = KernelSession::start_episode(task_, ev_, so);
  KernelSession* ks = session.get();
  mcp::Session rpc({"kevo", "", server_instructions()}, std::make_unique<KernelTools>(std::move(session)));
  AgentEpisodeSpec spec;
  spec.cli = o_.cli;
  spec.cli_executable = o_.cli_executable;
  spec.api = o_.api;
  spec.mcp_serve = [&rpc](int fd) { mcp::serve_stdio(rpc, fd, fd, {}, [&rpc] { return rpc.expired(); }); };
  spec.stop = [&cancel] { return cancel.cancelled(); };
  spec.workspace = dir / "workspace";
  spec.control_dir = dir / "control";
  spec.prompt = episode_prompt(job);
  spec.wall_limit = o_.wall_limit;
  spec.max_usd = o_.max_usd;
  spec.bridge_executable = o_.bridge_executable;
  auto r = run_agent_episode(spec);
  // It could not start (not installed, no key, no Landlock): the next one could not either.
  if (!r) return failed(name(), r.error().message, true);
  if (!r->mcp_connected)
    return failed(name(), fmt::format("the agent never called kevo's tools ({}): {}", r->describe(), r->stderr_tail), false);
  evolve::EpisodeOutcome out;
  out.ok = true;
  out.model = name();
  out.cost_usd = r->cost_usd.value_or(0);
  out.answer = ks->answer();
  out.summary = fmt::format("{}; {} attempt(s){}", r->describe(), ks->attempts(),
                            out.answer ? fmt::format(", answer #{}", out.answer) : std::string(", no answer submitted"));
  return out;
}

}  // namespace kevo::agent
