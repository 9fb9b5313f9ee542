#include "compile/pool.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace kevo {

CompilePool::CompilePool(int threads, int nice) : nice_(nice) {
  int n = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 0; i < n; ++i) workers_.emplace_back([this] { work(); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

std::future<Result<CompileResult>> CompilePool::submit(std::string source, std::string shown_name,
                                                        CompileOptions opts) {
  std::packaged_task<Result<CompileResult>()> task(
      [source = std::move(source), shown_name = std::move(shown_name), opts = std::move(opts)] {
        return compile_cuda_shared(source, shown_name, opts);
      });
  auto fut = task.get_future();
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return fut;
}

void CompilePool::work() {
  // Linux keeps a niceness per thread, and a process forked from a thread starts with that
  // thread's: lowering this thread's lowers every compiler it runs. Best effort: a failure (a
  // limit on this process) leaves the compiles at normal priority.
  if (nice_ > 0) {
    const id_t tid = static_cast<id_t>(::gettid());
    errno = 0;
    const int now = ::getpriority(PRIO_PROCESS, tid);
    if (errno == 0) (void)::setpriority(PRIO_PROCESS, tid, std::min(19, now + nice_));
  }
  for (;;) {
    std::packaged_task<Result<CompileResult>()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace kevo
