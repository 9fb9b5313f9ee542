// task: gelu
// Adversarial (isolation): a static constructor looks for the other processes of the evaluation in
// /proc (kevo-runner, kevo) and opens what would let it take them over: a runner's request pipe
// (/proc/<pid>/fd/4: a `load` of this library sent there makes the oracle and the baseline this
// code) and the checker's environment (its credentials). Confined, every open fails and the kernel
// writes nothing (`incorrect [unwritten]`: the payoff never came). If any open succeeds it aborts,
// so a hole reads as `crash [abort]`, never as the expected verdict.
#include <kevo/kernel.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cstdio>

static bool g_reached = false;

static bool is_kevo(const char* pid) {
  char path[64], comm[64] = {0};
  snprintf(path, sizeof path, "/proc/%s/comm", pid);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return false;
  ssize_t n = read(fd, comm, sizeof comm - 1);
  close(fd);
  return n > 0 && strncmp(comm, "kevo", 4) == 0;
}

__attribute__((constructor)) static void reach() {
  char self[32];
  snprintf(self, sizeof self, "%d", getpid());
  DIR* d = opendir("/proc");
  if (d) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9' || strcmp(e->d_name, self) == 0 || !is_kevo(e->d_name)) continue;
      char path[64];
      snprintf(path, sizeof path, "/proc/%s/fd/4", e->d_name);
      int fd = open(path, O_WRONLY | O_NONBLOCK);
      if (fd >= 0) g_reached = true, close(fd);
      snprintf(path, sizeof path, "/proc/%s/environ", e->d_name);
      fd = open(path, O_RDONLY);
      if (fd >= 0) {
        char c;
        if (read(fd, &c, 1) == 1) g_reached = true;
        close(fd);
      }
    }
    closedir(d);
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/environ", getppid());
  int fd = open(path, O_RDONLY);
  if (fd >= 0) g_reached = true, close(fd);
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  if (g_reached) {
    std::fprintf(stderr, "reach_trusted_runner: another kevo process was reachable\n");
    abort();
  }
  (void)a;
  return 0;
}
