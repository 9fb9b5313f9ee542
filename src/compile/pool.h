// A fixed set of threads compiling candidates concurrently (nvcc is single-threaded per file).
// Background work: its threads, and so every compiler process they start, run at a lower CPU
// priority (nice), so a burst of compiles cannot take the cores from the evaluation beside it (the
// checker's clock, the runners' host threads).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compile/nvcc.h"

namespace kevo {

class CompilePool {
 public:
  static constexpr int kBackgroundNice = 10;
  // threads 0 = hardware_concurrency; `nice` is added to the caller's niceness (0: unchanged).
  explicit CompilePool(int threads, int nice = kBackgroundNice);
  ~CompilePool();  // finishes the queued compiles, then joins
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  // Compiles a CUDA candidate (compile_cuda_shared) on a pool thread.
  std::future<Result<CompileResult>> submit(std::string source, std::string shown_name, CompileOptions opts);
  int threads() const { return static_cast<int>(workers_.size()); }

 private:
  void work();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<Result<CompileResult>()>> queue_;
  bool stopping_ = false;
  int nice_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace kevo
