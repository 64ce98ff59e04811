#include "models/hf_tokenizer/post_processors.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "models/base/error.h"
#include "models/hf_tokenizer/json_read.h"

namespace seed::models::hf {
namespace {

using json = nlohmann::json;

// The single-sequence template: runs of special ids around "$A".
class TemplateProcessor : public PostProcessor {
 public:
  TemplateProcessor(std::vector<int32_t> before, std::vector<int32_t> after)
      : before_(std::move(before)), after_(std::move(after)) {}
  void add_special_tokens(std::vector<int32_t>* ids) const override {
    ids->insert(ids->begin(), before_.begin(), before_.end());
    ids->insert(ids->end(), after_.begin(), after_.end());
  }

 private:
  std::vector<int32_t> before_, after_;
};

class NoOpProcessor : public PostProcessor {
 public:
  void add_special_tokens(std::vector<int32_t>*) const override {}
};

class SequenceProcessor : public PostProcessor {
 public:
  explicit SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> steps) : steps_(std::move(steps)) {}
  void add_special_tokens(std::vector<int32_t>* ids) const override {
    for (const auto& step : steps_) step->add_special_tokens(ids);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> steps_;
};

std::unique_ptr<PostProcessor> make_template(const json& value, const Field& field) {
  const json& special = read_member(value, "special_tokens", field);
  SEED_CHECK(special.is_object(), kInvalidArgument) << (field / "special_tokens").str() << " must be an object";
  const json& single = read_array(value, "single", field);
  std::vector<int32_t> before, after;
  bool seen_sequence = false;
  for (size_t i = 0; i < single.size(); ++i) {
    const Field item = (field / "single")[i];
    const json& entry = single[i];
    if (entry.is_object() && entry.contains("Sequence")) {
      SEED_CHECK(!seen_sequence, kInvalidArgument) << item.str() << ": the single template names $A twice";
      seen_sequence = true;
      continue;
    }
    SEED_CHECK(entry.is_object() && entry.contains("SpecialToken"), kInvalidArgument)
        << item.str() << " must be {\"SpecialToken\": ...} or {\"Sequence\": ...}";
    const std::string name = read_string(entry["SpecialToken"], "id", item / "SpecialToken");
    SEED_CHECK(special.contains(name), kInvalidArgument)
        << item.str() << ": special token \"" << name << "\" is not in " << (field / "special_tokens").path;
    const Field token_field = (field / "special_tokens") / name;
    const json& ids = read_array(special[name], "ids", token_field);
    for (const json& id : ids) {
      SEED_CHECK(id.is_number_integer() && id.get<int64_t>() >= 0, kInvalidArgument)
          << (token_field / "ids").str() << " must hold non-negative integers";
      (seen_sequence ? after : before).push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
  }
  return std::make_unique<TemplateProcessor>(std::move(before), std::move(after));
}

}  // namespace

std::unique_ptr<PostProcessor> make_post_processor(const json& value, const Field& field) {
  if (value.is_null()) return nullptr;
  const std::string type = read_type(value, field);
  if (type == "TemplateProcessing") return make_template(value, field);
  if (type == "ByteLevel") return std::make_unique<NoOpProcessor>();
  if (type == "Sequence") {
    const json& list = read_array(value, "processors", field);
    std::vector<std::unique_ptr<PostProcessor>> steps;
    for (size_t i = 0; i < list.size(); ++i) {
      if (auto step = make_post_processor(list[i], (field / "processors")[i])) steps.push_back(std::move(step));
    }
    return std::make_unique<SequenceProcessor>(std::move(steps));
  }
  SEED_FAIL(kInvalidArgument) << (field / "type").str() << ": post-processor type '" << type
                              << "' is not supported (seed reads TemplateProcessing, ByteLevel, Sequence)";
}

}  // namespace seed::models::hf
