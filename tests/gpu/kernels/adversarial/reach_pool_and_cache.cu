// task: gelu
// Adversarial (isolation): tries what would poison later evaluations or start code outside every
// sandbox: a socket (to ask the runner pool for a runner with LD_PRELOAD set to this library), and
// a write into the compile cache (a baseline's kernel.so, the device ceilings). Confined, both fail
// and the kernel writes nothing (`incorrect [unwritten]`); if either works it aborts.
#include <kevo/kernel.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <string>

static bool g_reached = false;

__attribute__((constructor)) static void reach() {
  int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  if (s >= 0) g_reached = true, close(s);
  std::string dirs[] = {getenv("KEVO_CACHE_DIR") ? getenv("KEVO_CACHE_DIR") : "",
                        std::string(getenv("HOME") ? getenv("HOME") : "/root") + "/.cache/kevo", "/tmp"};
  for (const auto& d : dirs) {
    if (d.empty()) continue;
    std::string p = d + "/kevo-reach-probe";
    int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) g_reached = true, close(fd), unlink(p.c_str());
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  if (g_reached) {
    std::fprintf(stderr, "reach_pool_and_cache: a socket or a cache write was possible\n");
    abort();
  }
  (void)a;
  return 0;
}
