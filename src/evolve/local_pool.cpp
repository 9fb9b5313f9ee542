// LocalPool: evaluations on this host's GPUs, one thread per running evaluation.
#include <algorithm>
#include <future>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "evolve/eval_pool.h"
#include "util/subprocess.h"

namespace kevo::evolve {

namespace {

using Clock = std::chrono::steady_clock;

class LocalPool final : public EvalPool {
 public:
  LocalPool(std::vector<CandidateEvaluator*> evs, std::vector<std::unique_ptr<CandidateEvaluator>> owned,
            std::vector<std::string> gpus, const Task& task)
      : evs_(std::move(evs)), owned_(std::move(owned)), gpus_(std::move(gpus)), task_(task),
        running_(evs_.size()) {}
  ~LocalPool() override {
    for (auto& f : running_)
      if (f.valid()) f.wait();  // an evaluation's runners must not outlive their evaluator
  }

  int slots() const override { return static_cast<int>(evs_.size()); }
  int in_flight() const override {
    return static_cast<int>(std::count_if(running_.begin(), running_.end(), [](auto& f) { return f.valid(); }));
  }

  Status submit(EvalRequest r) override {
    auto free = std::find_if(running_.begin(), running_.end(), [](auto& f) { return !f.valid(); });
    if (free == running_.end()) return fail("all {} evaluation slots are busy", slots());
    const size_t slot = static_cast<size_t>(free - running_.begin());
    r.opts.gpu = gpus_[slot];
    *free = std::async(std::launch::async, [this, slot, r = std::move(r)] {
      const auto t0 = Clock::now();
      EvalDone d;
      d.ticket = r.ticket;
      d.verdict = r.kind == EvalKind::kBaseline ? evs_[slot]->evaluate_baseline(task_, r.opts)
                                                : evs_[slot]->evaluate(task_, r.file, r.opts);
      d.busy_s = std::chrono::duration<double>(Clock::now() - t0).count();
      d.where = gpus_[slot].empty() ? "this host's GPU" : "gpu " + gpus_[slot];
      return d;
    });
    return {};
  }

  Result<std::optional<EvalDone>> next(std::chrono::milliseconds wait) override {
    const auto until = Clock::now() + wait;
    while (true) {
      for (auto& f : running_)
        if (f.valid() && f.wait_for(std::chrono::milliseconds(0)) == std::future_status::ready)
          return std::optional<EvalDone>(f.get());
      if (Clock::now() >= until || in_flight() == 0) return std::optional<EvalDone>();
      for (auto& f : running_)
        if (f.valid()) {
          f.wait_for(std::min<Clock::duration>(std::chrono::milliseconds(5), until - Clock::now()));
          break;
        }
    }
  }

 private:
  std::vector<CandidateEvaluator*> evs_;
  std::vector<std::unique_ptr<CandidateEvaluator>> owned_;
  std::vector<std::string> gpus_;
  const Task& task_;
  std::vector<std::future<EvalDone>> running_;  // per slot; invalid when the slot is free
};

std::vector<std::string> visible_gpus() {
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
    std::vector<std::string> out;
    std::stringstream ss(v);
    for (std::string item; std::getline(ss, item, ',');)
      if (!item.empty()) out.push_back(item);
    return out;
  }
  std::vector<std::string> out;
  auto smi = find_program("nvidia-smi");
  if (!smi) return out;
  RunOptions ro;
  ro.argv = {*smi, "--query-gpu=index", "--format=csv,noheader"};
  ro.timeout = std::chrono::seconds(20);
  auto r = run_process(ro);
  if (!r || r->exit_code != 0) return out;
  std::stringstream ss(r->out);
  for (std::string line; std::getline(ss, line);) {
    line.erase(std::remove_if(line.begin(), line.end(), ::isspace), line.end());
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

bool valid_gpu_name(const std::string& g) {
  if (g.empty()) return false;
  if (std::all_of(g.begin(), g.end(), ::isdigit)) return g.size() < 4;
  return (g.rfind("GPU-", 0) == 0 || g.rfind("MIG-", 0) == 0) &&
         std::all_of(g.begin(), g.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '/'; });
}

}  // namespace

Result<EvalDone> EvalPool::run_one(EvalRequest r, const llm::CancelToken* cancel) {
  const int64_t ticket = r.ticket;
  KEVO_TRY(submit(std::move(r)));
  while (true) {
    if (cancel && cancel->cancelled() && can_leave_pending()) return fail("interrupted before its result came");
    auto d = next(std::chrono::milliseconds(200));
    if (!d) return d.unexpected();
    if (*d && (*d)->ticket == ticket) return std::move(**d);
    if (*d) return fail("evaluation {} finished while only {} was expected", (*d)->ticket, ticket);
  }
}

std::unique_ptr<EvalPool> make_local_pool(std::vector<std::unique_ptr<CandidateEvaluator>> evaluators,
                                          std::vector<std::string> gpus, const Task& task) {
  std::vector<CandidateEvaluator*> evs;
  for (auto& e : evaluators) evs.push_back(e.get());
  gpus.resize(evs.size());
  return std::make_unique<LocalPool>(std::move(evs), std::move(evaluators), std::move(gpus), task);
}

std::unique_ptr<EvalPool> make_serial_pool(CandidateEvaluator& evaluator, const Task& task) {
  return std::make_unique<LocalPool>(std::vector<CandidateEvaluator*>{&evaluator},
                                     std::vector<std::unique_ptr<CandidateEvaluator>>{}, std::vector<std::string>{""},
                                     task);
}

Result<std::vector<std::string>> parse_gpus(const std::string& spec) {
  if (spec == "none") return std::vector<std::string>{};
  if (spec == "all" || spec.empty()) {
    auto v = visible_gpus();
    if (v.empty()) v.push_back("");  // no list: one evaluator on whatever device CUDA picks
    return v;
  }
  std::vector<std::string> out;
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!valid_gpu_name(item))
      return fail("--gpus: '{}' is not a GPU (expected all, none, or a comma list of indices such as 0,2 or "
                  "uuids such as GPU-5c3e...)",
                  item);
    if (std::find(out.begin(), out.end(), item) != out.end()) return fail("--gpus: GPU '{}' is named twice", item);
    out.push_back(item);
  }
  if (out.empty()) return fail("--gpus: an empty list (use none to evaluate only on workers)");
  return out;
}

}  // namespace kevo::evolve
