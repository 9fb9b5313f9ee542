// The kevo-runner a process starts runners from: the binary's bytes read once into a sealed memfd
// (no write, grow, shrink or further seals) and every runner exec'd from that fd, so a file
// replaced or rewritten on disk later changes nothing this process starts. The runner pool reads
// its image when it starts; a checker that starts its own runners reads one at its first start.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "util/result.h"

namespace kevo {

class RunnerImage {
 public:
  // Reads the regular file at `path` (what it holds now, once) into a sealed memfd; when
  // `expected_sha256` (lowercase hex) is given, bytes with another digest are refused.
  static Result<std::shared_ptr<const RunnerImage>> read(const std::filesystem::path& path,
                                                         const std::string& expected_sha256 = {});
  ~RunnerImage();
  RunnerImage(const RunnerImage&) = delete;
  RunnerImage& operator=(const RunnerImage&) = delete;

  int fd() const { return fd_; }                       // read-only, close-on-exec
  const std::string& sha256() const { return sha256_; }  // of the bytes in the memfd
  const std::filesystem::path& path() const { return path_; }
  bool script() const { return script_; }  // #!: the stand-in runners of tests
  // The binary's $ORIGIN library folders, resolved against the file's real folder: exec'd from a
  // memfd it has none, so the starter puts them on the runner's LD_LIBRARY_PATH.
  const std::vector<std::string>& origin_dirs() const { return origin_dirs_; }

 private:
  RunnerImage() = default;
  int fd_ = -1;
  std::string sha256_;
  std::filesystem::path path_;
  bool script_ = false;
  std::vector<std::string> origin_dirs_;
};

// The SHA-256 of what the file at `path` holds now.
Result<std::string> file_sha256(const std::filesystem::path& path);

// This process's image of the runner at `path`: read at the first call for that path, the same
// bytes for every later one.
Result<std::shared_ptr<const RunnerImage>> runner_image(const std::filesystem::path& path);

}  // namespace kevo
