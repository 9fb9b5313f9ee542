#include "util/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace kevo {
void init_logging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("kevo");
  logger->set_pattern("%^[%l]%$ %v");
  logger->set_level(verbosity >= 2   ? spdlog::level::debug
                    : verbosity == 1 ? spdlog::level::info
                                     : spdlog::level::warn);
  spdlog::set_default_logger(logger);
}
}  // namespace kevo
