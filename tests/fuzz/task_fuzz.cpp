// task.json (Task::load): fields, prompt templates and regexes, checked
// against a small data file; an accepted task builds its first prompts.
#include "tasks/task.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string rows = seed::fuzz::write_scratch(
      "task/data.jsonl",
      "{\"input\": \"4 9 10 13\", \"question\": \"What is 2 + 3?\", \"answer\": \"5\", \"target\": 24}\n"
      "{\"input\": \"1 1 4 6\", \"question\": \"What is 7 * 6?\", \"answer\": \"42\", \"target\": 24}\n");
  std::string text = seed::fuzz::as_text(data, size);
  // A blocksworld task generates data.count instances and plans each one
  // optimally: as long as asked, by design (tasks_test covers the
  // generator). Capping the count keeps each input quick to run.
  if (auto json = seed::fuzz::as_json<nlohmann::ordered_json>(data, size);
      json && json->is_object() && json->contains("data") && json->at("data").is_object() &&
      json->at("data").contains("count")) {
    nlohmann::ordered_json& count = json->at("data").at("count");
    if (count.is_number() && count.get<double>() > 20) count = 20;
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
