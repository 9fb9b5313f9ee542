// `kevo evolve` asks each model one short question before the baseline: an unreachable model
// stops it at once with exit 3 (a fatal LLM error) and no run recorded, instead of a search that
// retries every proposal and ends "finished".
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "util/subprocess.h"

using namespace kevo;
using namespace kevo::evolve::testing;
namespace fs = std::filesystem;

namespace {

// A loopback port nothing listens on: bound, read, closed.
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return 9;
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

TEST(ModelPing, AnUnreachableModelStopsEvolveAtOnce) {
  Harness h(improving_kernels());
  const std::string db = (h.dir / "cli.db").string();
  const std::string model = "http://127.0.0.1:" + std::to_string(closed_port()) + "/v1#m1";
  auto r = run_process({.argv = {(fs::path(KEVO_BINARY_DIR) / "bin" / "kevo").string(), "evolve", h.task.dir.string(),
                                 "--fake-gpu", "--db", db, "--model", model, "--quiet"},
                        .env_add = {{"HOME", h.dir.string()}, {"KEVO_DB", ""}},
                        .timeout = std::chrono::seconds(60)});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 3) << r->out << r->err;
  EXPECT_TRUE(contains(r->err, "did not answer a first short request")) << r->err;
  EXPECT_LT(r->wall_seconds, 15.0) << "it retried";
  auto d = store::RunDb::open(db);
  ASSERT_TRUE(d);
  auto runs = (*d)->list_runs();
  ASSERT_TRUE(runs);
  EXPECT_TRUE(runs->empty()) << "a run was recorded for a model that never answered";
}
