// Writes the recorded fixture run (fixture.h) into DIR/fixture.db and the figures the report must
// show into DIR/expected.txt, one a line; used by render_check.sh.
#include <cstdio>
#include <fstream>

#include "fixture.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: report_fixture DIR\n");
    return 2;
  }
  auto db = kevo::testing::write_fixture(argv[1]);
  if (!db) {
    std::fprintf(stderr, "report_fixture: %s\n", db.error().message.c_str());
    return 1;
  }
  std::ofstream e(std::filesystem::path(argv[1]) / "expected.txt");
  for (const char* f : kevo::testing::kFixtureFigures) e << f << "\n";
  std::printf("%s\n", db->c_str());
  return 0;
}
