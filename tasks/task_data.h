// The problems of a task folder: read from a data file or generated.
//
// A problem is a flat set of named text fields ("input": "4 9 10 13";
// "question" and "answer" for GSM8K). Prompt templates name them and
// checkers read their gold data from them. Where they come from is the
// "data" object of task.json (DataSpec):
//
//   jsonl        one JSON object per line; string, number and bool values
//                become fields (numbers as written by JSON)
//   lines        one problem per non-empty line, in field `field`
//   game24-csv   Tree of Thoughts' 24.csv, rows [begin, end) (the test split
//                by default), each as field "input" ("1 1 4 6")
//   blocksworld  `count` generated instances of blocks_min..blocks_max
//                blocks (seeded), each as fields "statement"
//                (blocks_statement) and "optimal_length"
//
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace seed::tasks {

struct Problem {
  size_t index = 0;                           // position in the task's problem list
  std::map<std::string, std::string> fields;  // the data fields

  // The field's value; throws kInvalidArgument naming the field if absent.
  const std::string& field(const std::string& name) const;
};

struct DataSpec {
  std::string source = "jsonl";  // jsonl | lines | game24-csv | blocksworld
  std::string path;              // file sources; found by the loader (task_data_path.h)
  std::string field = "input";   // lines: the field each line fills
  // Rows [begin, end) of the file (0-based, before any limit); end < 0 means
  // to the end. game24-csv defaults to the test split, 900-1000.
  int64_t begin = 0;
  int64_t end = -1;
  // blocksworld generator
  uint64_t seed = 0;
  int count = 100;
  int blocks_min = 3;
  int blocks_max = 5;
};

// The source names DataSpec::source accepts.
const std::vector<std::string>& data_source_names();

// Reads or generates the problems. `where` names the task.json for errors.
// Throws kNotFound naming `where`, field 'data.path' and the file if a file
// is missing; kInvalidArgument naming the file and line for a malformed row,
// and naming the field for an unknown source or a bad range.
std::vector<Problem> load_problems(const DataSpec& spec, const std::string& where);

}  // namespace seed::tasks
