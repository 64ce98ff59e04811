// Prompt templates of task folders: text with {name} fields.
//
// A task.json writes its prompts as templates ("Input: {input}\nPossible next
// steps:\n"); the search fills them with a problem's data fields and a
// state's fields (tasks/task.h). "{{" and "}}" stand for literal braces, so
// few-shot examples may contain JSON. Field names are letters, digits, '_'
// and '-'. Pure functions; thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seed::tasks {

// The field names `tmpl` uses, in order of first use. Throws kInvalidArgument
// ("unclosed '{'", "empty field name", a stray '}') naming `where` (for
// instance "tasks/game24/task.json: field 'generate.prompt'").
std::vector<std::string> template_fields(std::string_view tmpl, const std::string& where);

// `tmpl` with each {name} replaced by lookup(name). lookup returns nullopt
// for an unknown name: then throws kInvalidArgument naming `where` and the
// field. Loading a task checks every name first, so a loaded task never
// fails here.
std::string fill_template(std::string_view tmpl,
                          const std::function<std::optional<std::string>(const std::string&)>& lookup,
                          const std::string& where);

}  // namespace seed::tasks
