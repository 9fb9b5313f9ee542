#include "agent/llm_episodes.h"

#include "agent/episode_loop.h"
#include "agent/kernel_tools.h"

namespace kevo::agent {

evolve::EpisodeOutcome LlmEpisodes::run(const evolve::Job& job, const evolve::TaskContext& ctx,
                                        evolve::EpisodeBroker& broker, const llm::CancelToken& cancel) {
  SessionOptions so;
  so.budgets.evaluations = o_.limits.evaluations;
  so.budgets.wall_seconds = o_.limits.minutes * 60;
  so.budgets.submissions = 1;  // the first submission names the answer and ends the episode
  so.budgets.parallel = 4;     // the evaluations one turn asks for run at once
  so.broker = &broker;
  so.context = &ctx;
  so.parents = job.parents;
  so.model = llm_.name();
  so.episode = job.no;
  KernelTools tools(KernelSession::start_episode(task_, ev_, so));
  EpisodeLoop loop(tools, llm_, broker, cancel, o_);
  evolve::EpisodeOutcome out = loop.run(job);
  tools.session().finish(SessionEnd::kClientGone, 0);
  return out;
}

}  // namespace kevo::agent
