// task: gelu
// Adversarial (isolation): arranges for its code to run while the runner waits for its next
// request (during the baseline's batch), without a thread: a SIGALRM handler on an interval timer,
// and SIGIO on its stderr. Confined, the timer and the SIGIO setup are refused and the kernel
// writes nothing (`incorrect [unwritten]`); if either could be armed it aborts.
#include <kevo/kernel.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>

static volatile int g_ticks = 0;
static bool g_armed = false;

static void on_alarm(int) { g_ticks = g_ticks + 1; }

__attribute__((constructor)) static void arm() {
  signal(SIGALRM, on_alarm);
  itimerval t{{0, 100000}, {0, 100000}};
  if (setitimer(ITIMER_REAL, &t, nullptr) == 0) g_armed = true;
  if (fcntl(2, F_SETOWN, getpid()) == 0) g_armed = true;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  if (g_armed) {
    std::fprintf(stderr, "timer_signal: a timer or SIGIO could be armed\n");
    abort();
  }
  (void)a;
  return 0;
}
