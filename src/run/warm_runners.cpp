#include "run/warm_runners.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <vector>
#include <thread>

#include "util/gpu_lock.h"

namespace kevo {
namespace {
using namespace std::chrono_literals;

// How long a spare waits for a timing on its GPU to end before it starts anyway: a timing session
// lasts seconds; a spare started late only means an evaluation starts its own runner.
constexpr std::chrono::milliseconds kLockWait{30000};

// Never empty (short_kind's "none"): the default runner on the default GPU is "runner:".
std::string key_of(const RunnerOptions& o) {
  std::string k = "runner:" + o.runner.string();
  for (const auto& [name, value] : o.env) k += "\n" + name + "=" + value;
  return k;
}

// One per process, never destroyed: its thread forks the spares, and a runner dies with the thread
// that forked it (PR_SET_PDEATHSIG), so the thread lives as long as the process.
class Warm {
 public:
  static Warm& get() {
    static Warm* w = new Warm();
    return *w;
  }

  void set_spares(int n) {
    std::deque<WarmRunners::Ready> drop;
    {
      std::lock_guard l(mu_);
      spares_ = std::max(0, n);
      for (auto& [k, q] : ready_)
        while (static_cast<int>(q.size()) > spares_) drop.push_back(std::move(q.back())), q.pop_back();
      if (spares_ > 0 && !thread_.joinable()) thread_ = std::thread([this] { loop(); });
    }
    cv_.notify_all();
  }

  std::optional<WarmRunners::Ready> take(const RunnerOptions& o) {
    if (!o.launcher.empty()) return std::nullopt;
    const std::string k = key_of(o);
    std::optional<WarmRunners::Ready> r;
    {
      std::lock_guard l(mu_);
      if (spares_ == 0) return std::nullopt;
      if (!kinds_.count(k)) kinds_.emplace(k, o);
      auto& q = ready_[k];
      if (!q.empty()) r = std::move(q.front()), q.pop_front();
    }
    cv_.notify_all();
    // Alive and answering now, not only when it was started (an idle runner can have died).
    if (r && !r->first->call(proto::HelloRequest{}, 10s)) r.reset();
    if (r) ++taken_;
    return r;
  }

  int started() const { return started_; }
  int taken() const { return taken_; }
  int reused() const { return reused_; }

  void keep(const RunnerOptions& o, const std::string& tag, WarmRunners::Ready r) {
    std::deque<WarmRunners::Ready> drop;  // ended outside the lock: a runner's end waits for its process
    std::lock_guard l(mu_);
    if (spares_ == 0 || !o.launcher.empty()) return;
    kept_.push_back({key_of(o) + "\ntag=" + tag, std::move(r)});
    auto count = [&](const std::string& k) {
      return std::count_if(kept_.begin(), kept_.end(), [&](const Kept& x) { return x.key == k; });
    };
    for (auto it = kept_.begin(); it != kept_.end();)
      if (count(it->key) > WarmRunners::kKeptPerTag || static_cast<int>(kept_.size()) > WarmRunners::kKeptInAll)
        drop.push_back(std::move(it->ready)), it = kept_.erase(it);
      else
        ++it;
  }

  std::optional<WarmRunners::Ready> take_kept(const RunnerOptions& o, const std::string& tag) {
    const std::string k = key_of(o) + "\ntag=" + tag;
    std::optional<WarmRunners::Ready> r;
    {
      std::lock_guard l(mu_);
      auto it = std::find_if(kept_.rbegin(), kept_.rend(), [&](const Kept& x) { return x.key == k; });
      if (it == kept_.rend()) return std::nullopt;
      r = std::move(it->ready);
      kept_.erase(std::next(it).base());
    }
    if (!r->first->call(proto::HelloRequest{}, 10s)) return std::nullopt;  // it died while kept
    ++reused_;
    return r;
  }

 private:
  // Starts what the first kind short of its count lacks, up to kStartsAtOnce runners side by side
  // under one hold of the GPU's shared lock, and sleeps when none is short. A kind counts as short
  // once it lacks that many (or has none ready): CUDA contexts made side by side cost less each
  // than one after another, and every hold of the lock is time a timing on
  // that GPU waits (docs/measurements/2026-11-28-h200-0415afa-candidate-slab.md).
  void loop() {
    for (;;) {
      RunnerOptions o;
      std::string k, uuid;
      int n = 0;
      {
        std::unique_lock l(mu_);
        cv_.wait(l, [&] { return !(k = short_kind()).empty(); });
        o = kinds_.at(k);
        uuid = uuid_[k];
        n = std::min(kStartsAtOnce, spares_ - ready_count(k));
      }
      // A process start and a new CUDA context on the GPU being timed would show on the checker's
      // clock (the timing's walls): spares start while nothing is timed there, as correctness
      // checks do (shared). The GPU is known from an earlier spare's hello; a lock that cannot be
      // had only delays the spares, so its failure is not an error.
      std::optional<GpuLock> lock;
      if (!uuid.empty())
        if (auto l = GpuLock::acquire(uuid, kLockWait, {}, GpuLock::Mode::Shared)) lock.emplace(std::move(*l));
      // Forked here (a runner dies with the thread that forked it), greeted side by side.
      std::vector<Result<std::unique_ptr<RunnerClient>>> cs;
      for (int i = 0; i < n; ++i) cs.push_back(RunnerClient::start(o));
      std::vector<std::future<CallResult<proto::HelloReply>>> hellos;
      for (auto& c : cs)
        hellos.push_back(std::async(std::launch::async, [&c, &o] {
          return c ? (*c)->call(proto::HelloRequest{}, o.start_timeout)
                   : CallResult<proto::HelloReply>(CallError{c.error()});
        }));
      std::vector<CallResult<proto::HelloReply>> hs;
      for (auto& f : hellos) hs.push_back(f.get());
      lock.reset();
      std::lock_guard l(mu_);
      for (size_t i = 0; i < hs.size(); ++i) {
        if (!hs[i]) {
          // No GPU or no runner: nothing to warm; evaluations start their own and say why.
          spdlog::debug("a runner started ahead failed: {}", hs[i].error().message);
          kinds_.erase(k);
          continue;
        }
        ++started_;
        uuid_[k] = hs[i]->uuid;
        ready_[k].emplace_back(std::move(*cs[i]), std::move(*hs[i]));
      }
    }
  }

  int ready_count(const std::string& k) const {
    auto it = ready_.find(k);
    return it == ready_.end() ? 0 : static_cast<int>(it->second.size());
  }

  std::string short_kind() const {
    for (const auto& [k, o] : kinds_) {
      const int ready = ready_count(k), missing = spares_ - ready;
      if (missing > 0 && (ready == 0 || missing >= std::min(kStartsAtOnce, spares_))) return k;
    }
    return {};
  }

  static constexpr int kStartsAtOnce = 2;
  std::mutex mu_;
  std::condition_variable cv_;
  int spares_ = 0;
  std::map<std::string, RunnerOptions> kinds_;
  std::map<std::string, std::deque<WarmRunners::Ready>> ready_;
  std::map<std::string, std::string> uuid_;  // kind -> the GPU its spares run on (from a hello)
  struct Kept {
    std::string key;  // kind and tag
    WarmRunners::Ready ready;
  };
  std::deque<Kept> kept_;  // the oldest first
  std::thread thread_;
  std::atomic<int> started_{0}, taken_{0}, reused_{0};
};

}  // namespace

void WarmRunners::set_spares(int per_kind) { Warm::get().set_spares(per_kind); }
std::optional<WarmRunners::Ready> WarmRunners::take(const RunnerOptions& opts) { return Warm::get().take(opts); }
int WarmRunners::started() { return Warm::get().started(); }
int WarmRunners::taken() { return Warm::get().taken(); }
int WarmRunners::reused() { return Warm::get().reused(); }
void WarmRunners::keep(const RunnerOptions& opts, const std::string& tag, Ready r) {
  Warm::get().keep(opts, tag, std::move(r));
}
std::optional<WarmRunners::Ready> WarmRunners::take_kept(const RunnerOptions& opts, const std::string& tag) {
  return Warm::get().take_kept(opts, tag);
}

}  // namespace kevo
