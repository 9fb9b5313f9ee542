#include "check/compile_recipe.h"

namespace kevo {

CompileOptions candidate_compile_options(const Task& task, const std::string& arch,
                                         const std::filesystem::path& cache_dir) {
  CompileOptions co;
  co.arch = arch;
  if (!cache_dir.empty()) co.cache_dir = cache_dir;
  if (task.allow_cublas) co.link_libs.push_back("cublas");
  if (task.allow_cudnn) co.link_libs.push_back("cudnn");
  return co;
}

std::string device_arch(std::string arch) {
  if (arch.size() > 1 && arch.back() == 'a') arch.pop_back();
  return arch;
}

}  // namespace kevo
