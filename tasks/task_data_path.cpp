#include "tasks/task_data_path.h"

#include <filesystem>

#include "models/base/error.h"
#include "tasks/task.h"

namespace seed::tasks {
namespace {

namespace fs = std::filesystem;

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// "; tasks/gsm8k/README.md says where to get the data set", if the folder
// has a README.
std::string readme_hint(const std::string& folder) {
  const fs::path readme = (fs::path(folder) / "README.md").lexically_normal();
  return is_file(readme) ? "; " + readme.string() + " says where to get the data set" : "";
}

}  // namespace

std::string resolve_data_path(const std::string& path, const std::string& folder, const TaskLoadOptions& options,
                              const std::string& where) {
  if (!options.data_path.empty()) {
    std::error_code ec;
    SEED_CHECK(!fs::is_directory(options.data_path, ec), kInvalidArgument)
        << where << ": field 'data.path' (replaced by --data): " << options.data_path
        << " is a folder; --data takes the data file itself" << readme_hint(folder);
    SEED_CHECK(is_file(options.data_path), kNotFound)
        << where << ": field 'data.path' (replaced by --data): " << options.data_path << ": no such file"
        << readme_hint(folder);
    return options.data_path;
  }
  if (fs::path(path).is_absolute()) {
    SEED_CHECK(is_file(path), kNotFound) << where << ": field 'data.path': " << path
                                         << ": no such file; pass the file with --data PATH" << readme_hint(folder);
    return path;
  }
  const fs::path in_folder = (fs::path(folder) / path).lexically_normal();
  if (is_file(in_folder)) return in_folder.string();
  const fs::path in_data_dir = (fs::path(options.data_dir) / path).lexically_normal();
  if (!options.data_dir.empty() && is_file(in_data_dir)) return in_data_dir.string();
  SEED_FAIL(kNotFound) << where << ": field 'data.path': " << path << ": not in the task folder ("
                       << in_folder.string() << ")"
                       << (options.data_dir.empty() ? ", and SEED_DATA_DIR is not set"
                                                    : " nor under SEED_DATA_DIR (" + in_data_dir.string() + ")")
                       << "; pass the file with --data PATH, or set SEED_DATA_DIR to a folder holding " << path
                       << readme_hint(folder);
}

}  // namespace seed::tasks
