// task.json (Task::load): fields, prompt templates and regexes, checked
// against a small data file; an accepted task builds its first prompts.
#include <utility>

#include "tasks/task.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string rows = seed::fuzz::write_scratch(
      "task/data.jsonl",
      "{\"input\": \"4 9 10 13\", \"question\": \"What is 2 + 3?\", \"answer\": \"5\", \"target\": 24}\n"
      "{\"input\": \"1 1 4 6\", \"question\": \"What is 7 * 6?\", \"answer\": \"42\", \"target\": 24}\n");
  std::string text = seed::fuzz::as_text(data, size);
  // A blocksworld task generates data.count instances and plans each one
  // optimally: as long as asked, by design (tasks_test covers the generator
  // and the planner up to 8 blocks). Here 20 instances of 8 blocks take
  // 75 ms (5.5 ms in a release build) where most inputs take 2, and such
  // inputs came to fill the corpus, so the count and the size are capped to
  // keep each input quick; larger values reach no other code.
  if (auto json = seed::fuzz::as_json<nlohmann::ordered_json>(data, size);
      json && json->is_object() && json->contains("data") && json->at("data").is_object()) {
    nlohmann::ordered_json& spec = json->at("data");
    for (const auto& [key, cap] : {std::pair<const char*, int>{"count", 4}, {"blocks_min", 5}, {"blocks_max", 5}}) {
      if (spec.contains(key) && spec[key].is_number() && spec[key].get<double>() > cap) spec[key] = cap;
    }
    text = json->dump();
  }
  const std::string task_json = seed::fuzz::write_scratch("task/task.json", text);
  seed::fuzz::refuse_only_with_seed_error([&] {
    seed::tasks::TaskLoadOptions options;
    options.data_path = rows;
    const seed::tasks::Task task =
        seed::tasks::Task::load(std::filesystem::path(task_json).parent_path().string(), options);
    const seed::tasks::State root;
    for (const seed::tasks::Problem& problem : task.problems()) {
      if (!task.spec().generate.stages.empty()) task.generation_prompt(0, problem, root, {});
      if (task.spec().cot) task.cot_prompt(problem);
      task.evaluation_prompt(problem, root);
      task.parse_value("likely 7.5");
    }
  });
  return 0;
}
