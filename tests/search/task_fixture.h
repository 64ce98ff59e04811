// A task folder written to a temporary directory, for tests of the task
// loader and of the search algorithms.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace seed::testing {

class TempTaskFolder {
 public:
  // Writes `task_json` as task.json and `data` as data.jsonl.
  TempTaskFolder(const nlohmann::json& task_json, const std::string& data) {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("seed_task_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    write("task.json", task_json.dump(2));
    write("data.jsonl", data);
  }
  ~TempTaskFolder() { std::filesystem::remove_all(dir_); }
  TempTaskFolder(const TempTaskFolder&) = delete;
  TempTaskFolder& operator=(const TempTaskFolder&) = delete;

  // `name` may hold folders ("prm/config.json").
  void write(const std::string& name, const std::string& text) const {
    std::filesystem::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << text;
  }
  std::string path() const { return dir_.string(); }
  std::string task_json() const { return (dir_ / "task.json").string(); }

 private:
  std::filesystem::path dir_;
};

// A toy task: a state's steps are letters, one per line. Generation proposes
// lines ("gen\n<steps>" -> "a\nb\n"), evaluation reads "v=<0..10>" from
// "val\n<steps>", and the answer prompt is "ans\n<steps>". The checker is
// exact against field "answer".
inline nlohmann::json toy_task_json(const std::string& mode = "propose") {
  return {
      {"name", "toy"},
      {"data", {{"source", "jsonl"}, {"path", "data.jsonl"}}},
      {"generate", {{"mode", mode}, {"prompt", "gen\n{steps}"}, {"temperature", 0}}},
      {"evaluate",
       {{"mode", "value"}, {"prompt", "val\n{steps}"}, {"number", "v=(\\d+)"}, {"min", 0}, {"max", 10},
        {"temperature", 0}}},
      {"answer", {{"prompt", "ans\n{steps}"}, {"temperature", 0}}},
      {"cot", {{"prompt", "cot {input}"}, {"temperature", 0.7}}},
      {"final", {{"pattern", "!$"}}},
      {"checker", {{"name", "exact"}, {"field", "answer"}}},
  };
}

// The toy task with thoughts in two stages, a sub-question then its
// sub-answer, its value prompt naming both parts (GSM8K's form).
inline nlohmann::json two_stage_task_json() {
  nlohmann::json j = toy_task_json("sample");
  j["generate"] = {{"mode", "sample"},
                   {"stages", nlohmann::json::array({{{"prompt", "Q for {input}:"}, {"output", "sub_question"}},
                                                     {{"prompt", "A to {sub_question}:"}, {"output", "sub_answer"}}})},
                   {"thought", "{sub_question} -> {sub_answer}"}};
  j["evaluate"]["prompt"] = "val {sub_question}|{sub_answer}";
  return j;
}

}  // namespace seed::testing
