// Prompt templates of task.json ({name} fields, "{{" and "}}" escapes): an
// accepted template fills, and each field it lists is looked up.
#include <cstdlib>
#include <set>

#include "tasks/prompt_template.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string tmpl = seed::fuzz::as_text(data, size);
  const std::string where = "task.json: field 'generate.prompt'";
  seed::fuzz::refuse_only_with_seed_error([&] {
    const std::vector<std::string> fields = seed::tasks::template_fields(tmpl, where);
    const std::set<std::string> listed(fields.begin(), fields.end());
    seed::tasks::fill_template(
        tmpl,
        [&](const std::string& name) -> std::optional<std::string> {
          if (listed.count(name) == 0) std::abort();  // a field template_fields missed
          return "<" + name + ">";
        },
        where);
  });
  return 0;
}
