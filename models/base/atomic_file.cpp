#include "models/base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>

#include "models/base/error.h"

namespace seed {

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), temporary_(path_ + ".tmp" + std::to_string(::getpid())) {
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  SEED_CHECK(fd_ >= 0, kIo) << "cannot write " << path_ << ": cannot create " << temporary_ << ": "
                            << std::strerror(errno);
}

AtomicFile::~AtomicFile() {
  if (fd_ < 0) return;  // committed
  ::close(fd_);
  ::unlink(temporary_.c_str());
}

void AtomicFile::write(const void* bytes, size_t size) {
  SEED_CHECK(write_all(fd_, {static_cast<const char*>(bytes), size}), kIo)
      << "cannot write " << path_ << ": " << std::strerror(errno);
}

void AtomicFile::commit() {
  SEED_CHECK(fd_ >= 0, kInternal) << path_ << ": committed twice";
  // A full disk or a failing device may only show at fsync or close.
  const bool synced = ::fsync(fd_) == 0;
  const int sync_errno = errno;
  const bool closed = ::close(std::exchange(fd_, -1)) == 0;
  if (!synced || !closed) {
    ::unlink(temporary_.c_str());
    SEED_FAIL(kIo) << "cannot write " << path_ << ": " << std::strerror(synced ? errno : sync_errno)
                   << " (it is left as it was)";
  }
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
    const int rename_errno = errno;
    ::unlink(temporary_.c_str());
    SEED_FAIL(kIo) << "cannot replace " << path_ << ": " << std::strerror(rename_errno);
  }
  // The rename is an entry of the folder: durable once the folder is synced.
  const std::filesystem::path folder = std::filesystem::path(path_).parent_path();
  const int dir = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  SEED_CHECK(dir >= 0, kIo) << "cannot sync the folder of " << path_ << ": " << std::strerror(errno);
  const bool dir_synced = ::fsync(dir) == 0;
  const int dir_errno = errno;
  ::close(dir);
  SEED_CHECK(dir_synced, kIo) << "cannot sync the folder of " << path_ << ": " << std::strerror(dir_errno);
}

void write_file_atomically(const std::string& path, std::string_view text) {
  AtomicFile file(path);
  file.write(text);
  file.commit();
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace seed
