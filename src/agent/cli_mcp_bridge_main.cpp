// kevo-mcp-bridge SOCKET: the stdio MCP server an agent CLI is configured with; it joins its stdin
// and stdout to kevo's MCP server outside the CLI's sandbox (cli_mcp_bridge.h).
#include <cstdio>
#include <cstdlib>

#include "agent/cli_mcp_bridge.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kevo-mcp-bridge SOCKET\n");
    return 2;
  }
  const int rc = kevo::agent::run_bridge_client(argv[1]);
  std::fflush(stdout);
  std::_Exit(rc);  // not waiting for the stdin thread
}
