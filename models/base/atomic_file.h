// AtomicFile: writing a file so that readers find its old bytes or all of
// the new ones, never a part, even after a crash.
//
// The bytes go to a temporary beside the file (named for this process, so
// that processes writing the same path at once never share one). commit()
// flushes the temporary to disk (fsync), renames it over the file, and
// flushes the folder (fsync), so that the rename itself survives a crash.
// Without commit() the destructor removes the temporary and the file is
// left as it was. Not thread-safe; neither copied nor moved.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace seed {

class AtomicFile {
 public:
  // Throws seed::Error kIo naming `path` if the temporary cannot be created.
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  // Appends; throws kIo naming the file (a full disk, say).
  void write(const void* bytes, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Makes the written bytes the file's. Throws kIo naming the file; the
  // file is then left as it was. REQUIRES not committed yet.
  void commit();

 private:
  std::string path_;
  std::string temporary_;
  int fd_ = -1;
};

// Replaces `path` with `text` through an AtomicFile.
void write_file_atomically(const std::string& path, std::string_view text);

// Writes all of `bytes` to the open file `fd`, through short writes and
// interrupted calls; false (errno set) if the system refuses.
bool write_all(int fd, std::string_view bytes);

}  // namespace seed
