#include "tasks/prompt_template.h"

#include <cctype>

#include "models/base/error.h"

namespace seed::tasks {
namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// Walks `tmpl`, calling text(piece) for literal text and field(name) for
// each {name}; validates the syntax on the way.
template <typename Text, typename Field>
void walk(std::string_view tmpl, const std::string& where, Text text, Field field) {
  size_t i = 0;
  while (i < tmpl.size()) {
    const char c = tmpl[i];
    if ((c == '{' || c == '}') && i + 1 < tmpl.size() && tmpl[i + 1] == c) {
      text(std::string_view(&tmpl[i], 1));
      i += 2;
      continue;
    }
    SEED_CHECK(c != '}', kInvalidArgument)
        << where << ": stray '}' at offset " << i << " (write '}}' for a literal brace)";
    if (c != '{') {
      const size_t next = tmpl.find_first_of("{}", i);
      const size_t end = next == std::string_view::npos ? tmpl.size() : next;
      text(tmpl.substr(i, end - i));
      i = end;
      continue;
    }
    const size_t close = tmpl.find('}', i + 1);
    SEED_CHECK(close != std::string_view::npos, kInvalidArgument)
        << where << ": unclosed '{' at offset " << i << " (write '{{' for a literal brace)";
    const std::string_view name = tmpl.substr(i + 1, close - i - 1);
    SEED_CHECK(!name.empty(), kInvalidArgument) << where << ": empty field name '{}' at offset " << i;
    for (const char n : name) {
      SEED_CHECK(is_name_char(n), kInvalidArgument)
          << where << ": field name '" << name << "' may hold only letters, digits, '_' and '-'"
          << " (write '{{' for a literal brace)";
    }
    field(std::string(name));
    i = close + 1;
  }
}

}  // namespace

std::vector<std::string> template_fields(std::string_view tmpl, const std::string& where) {
  std::vector<std::string> names;
  walk(tmpl, where, [](std::string_view) {},
       [&](const std::string& name) {
         for (const std::string& seen : names) {
           if (seen == name) return;
         }
         names.push_back(name);
       });
  return names;
}

std::string fill_template(std::string_view tmpl,
                          const std::function<std::optional<std::string>(const std::string&)>& lookup,
                          const std::string& where) {
  std::string out;
  walk(tmpl, where, [&](std::string_view piece) { out += piece; },
       [&](const std::string& name) {
         const std::optional<std::string> value = lookup(name);
         SEED_CHECK(value.has_value(), kInvalidArgument) << where << ": no value for field {" << name << "}";
         out += *value;
       });
  return out;
}

}  // namespace seed::tasks
