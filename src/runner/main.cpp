// kevo-runner's entry point: one request at a time from fd 4, one reply each on fd 5, until the
// checker closes the channel. A sticky CUDA error ends the process after its reply: the next
// candidate gets a fresh process and context.
#include <unistd.h>

#include <cstdio>

#include "runner/service.h"

int main() {
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
