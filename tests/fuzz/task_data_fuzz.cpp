// A task's data file as each file source reads it (jsonl, lines,
// game24-csv); the first byte picks the source and the rows range.
#include "tasks/task_data.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kSources[] = {"jsonl", "lines", "game24-csv"};
  seed::tasks::DataSpec spec;
  spec.source = kSources[data[0] % 3];
  spec.begin = (data[0] >> 2) % 4;
  spec.end = (data[0] & 0x80) ? -1 : spec.begin + ((data[0] >> 4) % 8);
  spec.path = seed::fuzz::write_scratch("data", seed::fuzz::as_text(data + 1, size - 1));
  seed::fuzz::refuse_only_with_seed_error([&] {
    for (const seed::tasks::Problem& problem : seed::tasks::load_problems(spec, "task.json")) {
      problem.fields.size();
    }
  });
  return 0;
}
