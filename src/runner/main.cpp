// kevo-runner's entry point: one request at a time from fd 4, one reply each on fd 5, until the
// checker closes the channel. A sticky CUDA error ends the process after its reply: the next
// candidate gets a fresh process and context.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "runner/confine.h"
#include "runner/private_proc.h"
#include "runner/service.h"

int main(int argc, char** argv) {
  // One hardware queue unless the user chose otherwise: a context with CUDA's default eight took
  // 243 ms to make on an H200, with one 62 ms, and every spare runner is made while no timing may
  // run on its GPU (docs/measurements/2026-11-29-h200-c519fc3-context-queues.md). A runner puts
  // its work on one stream, so a single queue serializes nothing it would overlap; work a candidate
  // puts on any other stream runs in the order it was issued, inside the timed span, not beside it.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 0);
  // No other process of the user's may open this one's pipes, memory or environment through /proc
  // (a candidate's runner would take over a trusted one): before CUDA, before anything.
  kevo::runner::make_undumpable();
  // A /proc that will show a candidate nothing but itself: set up while this is the only thread.
  kevo::runner::make_proc_private();
  // `kevo-runner --isolation`: confine this process as a candidate's runner would be, without a
  // GPU, and print what took (kevo doctor's probe).
  if (argc > 1 && std::string_view(argv[1]) == "--isolation") {
    const bool keep_root = std::getenv("KEVO_RUNNER_KEEP_ROOT") != nullptr;
    std::printf("%s\n", nlohmann::json(kevo::runner::confine_process({.drop_identity = !keep_root})).dump().c_str());
    return 0;
  }
  // Candidate output on stdout must not reach anything that parses it.
  dup2(2, 1);
  setvbuf(stdout, nullptr, _IONBF, 0);
  kevo::runner::RunnerService service;
  for (;;) {
    auto req = kevo::read_message_blocking(kevo::runner::kRequestFd);
    if (!req) return 0;  // the checker closed the channel
    nlohmann::json reply;
    bool fatal = false;
    try {
      reply = service.handle(*req);
    } catch (const kevo::runner::Fatal& f) {
      reply = kevo::proto::ErrorReply{.error = f.what, .fatal = true, .cuda_error = static_cast<int>(f.cuda)};
      fatal = true;
    } catch (const std::exception& e) {
      reply = kevo::proto::ErrorReply{.error = std::string("bad request: ") + e.what()};
    }
    if (!kevo::write_message(kevo::runner::kReplyFd, reply)) return 3;
    if (fatal) _exit(4);  // the CUDA context is unusable; a fresh process starts clean
  }
}
