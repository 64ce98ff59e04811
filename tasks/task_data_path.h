// Where a task's data file is found. Data sets the repository cannot ship
// (GSM8K, creative writing) live in a folder of their own; task.json names
// the file by its place in that folder ("gsm8k/test.jsonl"), and a run
// points at the folder once (SEED_DATA_DIR) or at the file (--data).
//
// The rule, first match wins:
//   1. TaskLoadOptions::data_path (`seed run --data`): that file, relative
//      to the working directory;
//   2. an absolute data.path: that file;
//   3. a relative data.path: the file in the task folder if it is there,
//      else the file under TaskLoadOptions::data_dir (SEED_DATA_DIR).
//
// Thread-safe: reads the file system only.
#pragma once

#include <string>

namespace seed::tasks {

struct TaskLoadOptions;

// The data file for task.json's data.path `path` in task folder `folder`.
// `where` names the task.json in errors. Throws kNotFound naming `where`,
// field 'data.path', every path tried, how to point at the file (--data,
// SEED_DATA_DIR) and the task folder's README.md, which says where to get
// the data set.
std::string resolve_data_path(const std::string& path, const std::string& folder, const TaskLoadOptions& options,
                              const std::string& where);

}  // namespace seed::tasks
