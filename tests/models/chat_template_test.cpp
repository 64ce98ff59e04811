// The chat-template interpreter (models/chat_template/): each Jinja construct
// on its own, the whitespace rules transformers sets, the errors (an
// unsupported construct at load with its position, raise_exception at
// render), and loading tokenizer_config.json. Byte parity with
// @huggingface/jinja on real models' templates is tests/tokenizer_parity/.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "models/chat_template/chat_template.h"
#include "models/tokenizer.h"
#include "tests/throws_error.h"

namespace seed::models {
namespace {

using ordered_json = nlohmann::ordered_json;
using testing::throws_error;

hf::TokenizerConfig tokens() {
  hf::TokenizerConfig config;
  config.bos_token = "<s>";
  config.eos_token = "</s>";
  return config;
}

// Renders `source` with `variables` (a JSON object; "messages" defaults to []).
std::string render(const std::string& source, ordered_json variables = ordered_json::object()) {
  const ChatTemplate chat(source, tokens(), "test");
  const ordered_json messages = variables.contains("messages") ? variables["messages"] : ordered_json::array();
  const bool generation = variables.value("add_generation_prompt", false);
  variables.erase("messages");
  variables.erase("add_generation_prompt");
  return chat.render(messages, generation, variables);
}

TEST(ChatTemplateTest, TextAndOutput) {
  EXPECT_EQ(render("hello {{ 'world' }}!"), "hello world!");
  EXPECT_EQ(render("{{ 1 + 2 }} {{ 7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 1 / 2 }} {{ 4 / 2 }}"),
            "3 3 1 2 1024 0.5 2.0");
  EXPECT_EQ(render("{{ true }} {{ none }}|{{ undefined_name }}|{{ [1, 'a'] }} {{ {'k': [1, 2]} }}"),
            "true ||[1, \"a\"] {\"k\": [1, 2]}");
  EXPECT_EQ(render("{{ 'a' 'b' }}{{ \"q\\\"\\n\" }}"), "abq\"\n");
}

TEST(ChatTemplateTest, VariablesAndSpecialTokens) {
  EXPECT_EQ(render("{{ bos_token }}x{{ eos_token }}{{ pad_token is defined }}"), "<s>x</s>false");
  EXPECT_EQ(render("{{ name }}", {{"name", "seed"}}), "seed");
}

TEST(ChatTemplateTest, IfElifElse) {
  const std::string source = "{% if x > 2 %}big{% elif x == 2 %}two{% else %}small{% endif %}";
  EXPECT_EQ(render(source, {{"x", 3}}), "big");
  EXPECT_EQ(render(source, {{"x", 2}}), "two");
  EXPECT_EQ(render(source, {{"x", 1}}), "small");
}

TEST(ChatTemplateTest, ForLoopVariablesAndElse) {
  EXPECT_EQ(render("{% for x in xs %}{{ loop.index0 }}{{ loop.index }}{{ x }}"
                   "{% if loop.first %}F{% endif %}{% if loop.last %}L{% endif %}{{ loop.length }},{% endfor %}",
                   {{"xs", {"a", "b", "c"}}}),
            "01aF3,12b3,23cL3,");
  EXPECT_EQ(render("{% for x in xs %}{{ x }}{% else %}empty{% endfor %}", {{"xs", ordered_json::array()}}), "empty");
  EXPECT_EQ(render("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", {{"d", {{"b", 1}, {"a", 2}}}}),
            "b=1;a=2;");
  EXPECT_EQ(render("{% for k in d %}{{ k }}{% endfor %}", {{"d", {{"b", 1}, {"a", 2}}}}), "ba");
  EXPECT_EQ(render("{% for x in range(5) if x is odd %}{{ x }}{% endfor %}"), "13");
  EXPECT_EQ(render("{% for x in range(9) %}{% if x == 3 %}{% break %}{% endif %}"
                   "{% if x == 1 %}{% continue %}{% endif %}{{ x }}{% endfor %}"),
            "02");
  EXPECT_EQ(render("{% for x in [1] %}{{ loop.previtem is defined }}{{ loop.revindex0 }}{% endfor %}"), "false0");
}

TEST(ChatTemplateTest, SetScopingAndNamespace) {
  // A set inside a loop stays in the loop; a namespace carries state out.
  EXPECT_EQ(render("{% set n = 0 %}{% for x in [1, 2] %}{% set n = n + x %}{% endfor %}{{ n }}"), "0");
  EXPECT_EQ(render("{% set ns = namespace(n=0, seen=false) %}{% for x in [1, 2] %}{% set ns.n = ns.n + x %}"
                   "{% set ns.seen = true %}{% endfor %}{{ ns.n }}{{ ns.seen }}"),
            "3true");
  EXPECT_EQ(render("{% set a, b = [1, 2] %}{{ b }}{{ a }}"), "21");
  EXPECT_EQ(render("{% set block %}in {{ 'side' }}{% endset %}[{{ block }}]"), "[in side]");
}

TEST(ChatTemplateTest, Filters) {
  const ordered_json people = {{"people", {{{"name", "ann"}, {"admin", true}}, {{"name", "bob"}, {"admin", false}}}}};
  EXPECT_EQ(render("[{{ '  x y \n' | trim }}]"), "[x y]");
  EXPECT_EQ(render("{{ {'a': 'é', 'b': [1, none, true]} | tojson }}"), "{\"a\": \"é\", \"b\": [1, null, true]}");
  EXPECT_EQ(render("{{ {'a': 1} | tojson(indent=2) }}"), "{\n  \"a\": 1\n}");
  EXPECT_EQ(render("{{ [1, 2, 3] | length }}{{ 'héllo' | length }}{{ 'abc' | upper }}{{ 'ABC' | lower }}"),
            "35ABCabc");
  EXPECT_EQ(render("{{ missing | default('d') }}{{ '' | default('e', true) }}{{ 'x' | default('f') }}"), "dex");
  EXPECT_EQ(render("{{ ['a', 'b'] | join(', ') }}|{{ [1, 2] | first }}{{ [1, 2] | last }}"), "a, b|12");
  EXPECT_EQ(render("{{ 'a-b-a' | replace('a', 'x') }}{{ 'hello world' | title }}{{ 'hi' | capitalize }}"),
            "x-b-xHello WorldHi");
  EXPECT_EQ(render("{{ (people | selectattr('admin') | first).name }}"
                   "{{ people | rejectattr('admin') | map(attribute='name') | join }}",
                   people),
            "annbob");
  EXPECT_EQ(render("{{ people | selectattr('name', 'string') | length }}", people), "2");
  EXPECT_EQ(render("{{ (people | selectattr('name', 'equalto', 'bob') | first).admin }}", people), "false");
  EXPECT_EQ(render("{{ ['a', 'code', 'b'] | reject('equalto', 'code') | join(', ') }}"), "a, b");
  EXPECT_EQ(render("{{ [1, 2, 3, 4] | select('even') | join }}{{ [0, 1, ''] | select | join }}"), "241");
  EXPECT_EQ(render("{{ [3, 1, 2] | sort | join }}{{ [1, 2] | reverse | join }}{{ '42' | int + 1 }}"), "1232143");
  EXPECT_EQ(render("{{ 'a\nb' | indent(2) }}"), "a\n  b");
  EXPECT_EQ(render("{% filter upper %}shout {{ 'it' }}{% endfilter %}"), "SHOUT IT");
}

TEST(ChatTemplateTest, SlicingAndSubscripts) {
  const ordered_json xs = {{"xs", {1, 2, 3, 4}}};
  EXPECT_EQ(render("{{ xs[::-1] | join }} {{ xs[1:] | join }} {{ xs[:-1] | join }} {{ xs[1:3] | join }}", xs),
            "4321 234 123 23");
  EXPECT_EQ(render("{{ xs[0] }}{{ xs[-1] }}{{ xs[9] is defined }}{{ xs.0 }}", xs), "14false1");
  EXPECT_EQ(render("{{ 'hello'[1:3] }}{{ 'hello'[::-1] }}{{ 'hello'[-1] }}"), "elolleho");
  EXPECT_EQ(render("{{ m['role'] }}{{ m.role }}{{ m.missing is defined }}", {{"m", {{"role", "user"}}}}),
            "useruserfalse");
}

TEST(ChatTemplateTest, StringMethods) {
  EXPECT_EQ(render("[{{ '  a  '.strip() }}][{{ '\n\na\n'.lstrip('\n') }}][{{ 'xxaxx'.rstrip('x') }}]"),
            "[a][a\n][xxa]");
  EXPECT_EQ(render("{{ 'a</think>b'.split('</think>')[-1] }}{{ 'a  b c'.split() | length }}{{ 'a,b,c'.split(',', 1)[1] }}"),
            "b3b,c");
  EXPECT_EQ(render("{{ 'abc'.startswith('ab') }}{{ 'abc'.endswith(('x', 'c')) }}{{ 'abc'.upper() }}"),
            "truetrueABC");
  EXPECT_EQ(render("{{ 'aaa'.replace('a', 'b', 2) }}{{ {'k': 1}.get('k') }}{{ {'k': 1}.get('z', 'd') }}"), "bba1d");
}

TEST(ChatTemplateTest, TestsComparisonsAndOperators) {
  const ordered_json values = {{"s", "x"}, {"n", nullptr}, {"i", 3}, {"l", {1}}, {"d", {{"a", 1}}}};
  EXPECT_EQ(render("{{ s is defined }}{{ u is defined }}{{ u is undefined }}{{ n is none }}{{ s is not none }}",
                   values),
            "truefalsetruetruetrue");
  EXPECT_EQ(render("{{ s is string }}{{ i is string }}{{ i is number }}{{ i is integer }}{{ l is iterable }}"
                   "{{ d is mapping }}{{ true is true }}{{ false is false }}{{ i is even }}",
                   values),
            "truefalsetruetruetruetruetruetruefalse");
  EXPECT_EQ(render("{{ 6 is divisibleby 3 }}{{ 7 is divisibleby(2) }}{{ 'a' is equalto 'a' }}{{ 2 is in [1, 2] }}"),
            "truefalsetruetrue");
  EXPECT_EQ(render("{{ 1 < 2 and 2 <= 2 }}{{ 1 > 2 or 3 >= 4 }}{{ not 3 }}{{ 1 != 2 }}{{ 'a' == 'a' }}"),
            "truefalsefalsetruetrue");
  EXPECT_EQ(render("{{ 'b' in 'abc' }}{{ 2 in [1, 2] }}{{ 'a' in d }}{{ 'z' not in d }}{{ 'x' in u }}", values),
            "truetruetruetruefalse");
  EXPECT_EQ(render("{{ 'n=' ~ i ~ '!' }}{{ 'n=' + 'x' }}{{ [1] + [2] }}", values), "n=3!n=x[1, 2]");
  EXPECT_EQ(render("{{ 'yes' if i > 2 else 'no' }}{{ 'a' if false }}{{ 0 or 'fallback' }}", values), "yesfallback");
}

TEST(ChatTemplateTest, WhitespaceControl) {
  // transformers' settings: trim_blocks drops the newline after a block tag,
  // lstrip_blocks the indentation before it; a final newline is dropped.
  EXPECT_EQ(render("{% if true %}\n  a\n{% endif %}\n"), "  a\n");
  EXPECT_EQ(render("    {% if true %}x{% endif %}"), "x");
  EXPECT_EQ(render("a   {%- if true -%}   b   {%- endif -%}   c"), "abc");
  EXPECT_EQ(render("a \n {{- 'b' -}} \n c"), "abc");
  EXPECT_EQ(render("a {#- comment -#} b{# other #}"), "ab");
  EXPECT_EQ(render("{{ 'x' }}\n"), "x");
}

TEST(ChatTemplateTest, Macros) {
  EXPECT_EQ(render("{% macro greet(name, punct='!') %}hi {{ name }}{{ punct }}{% endmacro %}"
                   "{{ greet('ann') }} {{ greet('bob', punct='?') }}"),
            "hi ann! hi bob?");
  EXPECT_EQ(render("{% macro box() %}[{{ caller() }}]{% endmacro %}{% call box() %}in{% endcall %}"), "[in]");
}

TEST(ChatTemplateTest, RaiseExceptionGivesItsMessage) {
  EXPECT_TRUE(throws_error([] { render("ok\n{{ raise_exception('roles must alternate') }}"); },
                           ErrorKind::kInvalidArgument, {"test", "line 2:4", "roles must alternate"}));
}

TEST(ChatTemplateTest, UnsupportedConstructFailsAtLoadWithPosition) {
  const auto load = [](const std::string& source) { return [source] { ChatTemplate(source, tokens(), "cfg.json"); }; };
  EXPECT_TRUE(throws_error(load("a\n  {% include 'x' %}"), ErrorKind::kInvalidArgument,
                           {"cfg.json", "unsupported statement 'include'", "line 2:6"}));
  EXPECT_TRUE(throws_error(load("{{ x | wordcount }}"), ErrorKind::kInvalidArgument,
                           {"unsupported filter 'wordcount'", "line 1:8"}));
  EXPECT_TRUE(throws_error(load("{% if x is sequence_of %}{% endif %}"), ErrorKind::kInvalidArgument,
                           {"unsupported test 'sequence_of'", "line 1:12"}));
  EXPECT_TRUE(throws_error(load("{{ s.format(1) }}"), ErrorKind::kInvalidArgument,
                           {"unsupported method 'format'", "line 1:6"}));
  EXPECT_TRUE(throws_error(load("{{ cycler(1) }}"), ErrorKind::kInvalidArgument,
                           {"unsupported function 'cycler'", "line 1:4"}));
  EXPECT_TRUE(throws_error(load("{% for x in xs %}"), ErrorKind::kInvalidArgument, {"missing {% endfor %}"}));
  EXPECT_TRUE(throws_error(load("{{ 'open }}"), ErrorKind::kInvalidArgument, {"unterminated string", "line 1:4"}));
  EXPECT_TRUE(throws_error(load("{{ x ; }}"), ErrorKind::kInvalidArgument, {"unexpected character ';'", "line 1:6"}));
}

TEST(ChatTemplateTest, ANumberPastInt64OrDoubleIsAnErrorWithPosition) {
  const auto load = [](const std::string& source) { return [source] { ChatTemplate(source, tokens(), "cfg.json"); }; };
  EXPECT_TRUE(throws_error(load("{{ 99999999999999999999 }}"), ErrorKind::kInvalidArgument,
                           {"cfg.json", "number 99999999999999999999 is out of range", "line 1:4"}));
  EXPECT_TRUE(throws_error(load("\n{{ xs.99999999999999999999 }}"), ErrorKind::kInvalidArgument,
                           {"is out of range", "line 2:"}));
  EXPECT_TRUE(throws_error(load("{{ 1" + std::string(400, '0') + ".5 }}"), ErrorKind::kInvalidArgument,
                           {"is out of range", "line 1:4"}));
  // An attribute path's list index past any list's length is absent.
  const ordered_json xs = {{"xs", {{{"a", {1}}}, {{"a", {2}}}}}};
  EXPECT_EQ(render("{{ xs | map(attribute='a.99999999999999999999') | list | length }}", xs), "2");
}

// What would overflow the stack, wrap an integer or exhaust memory is an
// error with the position, not a crash (found by tests/fuzz/chat_template).
TEST(ChatTemplateTest, DeepNestingIsAnErrorNotAStackOverflow) {
  const auto load = [](const std::string& source) { return [source] { ChatTemplate(source, tokens(), "cfg.json"); }; };
  EXPECT_TRUE(throws_error(load("{{ " + std::string(2000, '(') + "1" + std::string(2000, ')') + " }}"),
                           ErrorKind::kInvalidArgument, {"cfg.json", "line 1:", "nested more than 256 levels deep"}));
  std::string ifs;
  for (int i = 0; i < 300; ++i) ifs += "{% if true %}";
  for (int i = 0; i < 300; ++i) ifs += "{% endif %}";
  EXPECT_TRUE(throws_error(load(ifs), ErrorKind::kInvalidArgument, {"nested more than 256 levels deep"}));
  std::string elifs = "{% if false %}";
  for (int i = 0; i < 300; ++i) elifs += "{% elif false %}";
  EXPECT_TRUE(throws_error(load(elifs + "{% endif %}"), ErrorKind::kInvalidArgument, {"nested more than"}));
  // Nesting a real template uses parses and renders.
  EXPECT_EQ(render("{{ " + std::string(50, '(') + "1" + std::string(50, ')') + " }}"), "1");
  // A macro that calls itself, and a chain of operators, nest only as they render.
  EXPECT_TRUE(throws_error([] { render("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"); },
                           ErrorKind::kInvalidArgument, {"line 1:", "nested more than 512 levels deep"}));
  std::string sum = "{{ 0";
  for (int i = 0; i < 3000; ++i) sum += " + 1";
  EXPECT_TRUE(throws_error([&] { render(sum + " }}"); }, ErrorKind::kInvalidArgument, {"nested more than"}));
}

TEST(ChatTemplateTest, ValuesNestedDeeplyOrHoldingThemselvesAreFreedAndRefusedWhenWritten) {
  const std::string deep =
      "{% set ns = namespace(x=0) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}";
  EXPECT_EQ(render(deep + "{{ ns.x | length }}"), "1");  // and freed without recursion
  EXPECT_TRUE(throws_error([&] { render(deep + "{{ ns.x }}"); }, ErrorKind::kInvalidArgument,
                           {"nested more than 512 levels deep (or holding itself)"}));
  const std::string self = "{% set ns = namespace(n=1) %}{% set ns.self = ns %}";
  EXPECT_EQ(render(self + "{{ ns.self.self.self.n }}"), "1");  // LeakSanitizer: the cycle is freed
  EXPECT_TRUE(throws_error([&] { render(self + "{{ ns | tojson }}"); }, ErrorKind::kInvalidArgument,
                           {"holding itself"}));
}

TEST(ChatTemplateTest, IntegersPast64BitsAreErrors) {
  for (const char* source : {"{{ 9223372036854775807 + 1 }}", "{{ -9223372036854775807 - 2 }}",
                             "{{ 4294967296 * 4294967296 }}", "{{ -(-9223372036854775807 - 1) }}", "{{ 2 ** 64 }}",
                             "{{ (10.0 ** 300) | int }}", "{{ (-9223372036854775807 - 1) | abs }}",
                             "{{ (-9223372036854775807 - 1) // -1 }}"}) {
    SCOPED_TRACE(source);
    EXPECT_TRUE(throws_error([&] { render(source); }, ErrorKind::kInvalidArgument, {"an integer past 64 bits"}));
  }
  EXPECT_EQ(render("{{ 9223372036854775806 + 1 }}"), "9223372036854775807");
  EXPECT_EQ(render("{{ -9223372036854775807 - 1 }}"), "-9223372036854775808");
  EXPECT_EQ(render("{{ 2 ** 62 }}"), "4611686018427387904");
}

TEST(ChatTemplateTest, RangesSlicesAndTextStayWithinBounds) {
  EXPECT_EQ(render("{{ range(0, 10, 3) | list }}"), "[0, 3, 6, 9]");
  EXPECT_EQ(render("{{ range(5, 0, -2) | list }}"), "[5, 3, 1]");
  EXPECT_EQ(render("{{ range(3, 3) | list }}"), "[]");
  EXPECT_EQ(render("{{ range(9223372036854775806, 9223372036854775807, 5) | list }}"), "[9223372036854775806]");
  EXPECT_EQ(render("{{ range(100000) | length }}"), "100000");
  EXPECT_TRUE(throws_error([] { render("{{ range(100001) }}"); }, ErrorKind::kInvalidArgument,
                           {"range() of more than 100000 numbers"}));
  EXPECT_EQ(render("{{ [1, 2, 3][1::9223372036854775807] }}"), "[2]");
  EXPECT_EQ(render("{{ 'abc'[2::-9223372036854775807 - 1] }}"), "c");
  EXPECT_TRUE(throws_error(
      [] { render("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"); },
      ErrorKind::kInvalidArgument, {"a string longer than 16777216 bytes"}));
  EXPECT_TRUE(throws_error([] { render("{{ 'a\nb' | indent(1000000000000) }}"); }, ErrorKind::kInvalidArgument,
                           {"indent wider than 1024"}));
  EXPECT_EQ(render("{{ [1] | tojson(indent=-2147483649) }}"), "[1]");
}

TEST(ChatTemplateTest, RuntimeErrorNamesThePosition) {
  EXPECT_TRUE(throws_error([] { render("{% for x in 3 %}{% endfor %}"); }, ErrorKind::kInvalidArgument,
                           {"line 1:4", "cannot loop over a integer"}));
  EXPECT_TRUE(throws_error([] { render("\n{{ none + 1 }}"); }, ErrorKind::kInvalidArgument, {"line 2:"}));
}

TEST(ChatTemplateTest, RenderPromptWritesSystemAndUserTurns) {
  const ChatTemplate chat(
      "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{% if add_generation_prompt %}<bot>{% endif %}",
      tokens(), "test");
  EXPECT_EQ(chat.render_prompt("be brief", "hi"), "<system>be brief<user>hi<bot>");
  EXPECT_EQ(chat.render_prompt("", "hi"), "<user>hi<bot>");
  EXPECT_TRUE(throws_error([&] { chat.render(ordered_json::object(), true); }, ErrorKind::kInvalidArgument,
                           {"must be a JSON list"}));
  EXPECT_TRUE(throws_error([&] { chat.render(ordered_json::array({"hi"}), true); }, ErrorKind::kInvalidArgument,
                           {"message 0", "role"}));
}

// A tokenizer that reads text as bytes and adds BOS (1) when asked.
class RecordingTokenizer : public Tokenizer {
 public:
  std::vector<int32_t> encode(std::string_view text, bool add_bos) const override {
    std::vector<int32_t> ids;
    if (add_bos) ids.push_back(1);
    for (char c : text) ids.push_back(static_cast<unsigned char>(c));
    return ids;
  }
  std::string decode(const std::vector<int32_t>&) const override { return ""; }
  int64_t vocab_size() const override { return 256; }
  int32_t bos_id() const override { return 1; }
  int32_t eos_id() const override { return 2; }
};

TEST(ChatTemplateTest, ALeadingBosTextBecomesOneBos) {
  // The template writes bos_token itself; a tokenizer that reads special
  // tokens as plain text (SentencePiece) gets the BOS id for it, once.
  const ChatTemplate chat("{{ bos_token }}{{ messages[0].content }}", tokens(), "test");
  const std::string text = chat.render_prompt("", "hi");
  EXPECT_EQ(text, "<s>hi");
  EXPECT_EQ(chat.encode(RecordingTokenizer(), text), (std::vector<int32_t>{1, 'h', 'i'}));
  // Without a leading BOS text nothing is added.
  EXPECT_EQ(chat.encode(RecordingTokenizer(), "hi<s>"), (std::vector<int32_t>{'h', 'i', '<', 's', '>'}));
}

class ChatTemplateFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("chat_template_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& text) { std::ofstream(dir_ / "tokenizer_config.json") << text; }
  std::filesystem::path dir_;
};

TEST_F(ChatTemplateFileTest, LoadsTheStringOrTheDefaultOfNamedTemplates) {
  EXPECT_FALSE(ChatTemplate::load(dir_.string()).has_value());  // no file
  write(R"({"bos_token": "<s>"})");
  EXPECT_FALSE(ChatTemplate::load(dir_.string()).has_value());  // no template
  write(R"({"bos_token": {"content": "<B>"}, "chat_template": "{{ bos_token }}{{ messages[0].content }}"})");
  EXPECT_EQ(ChatTemplate::load(dir_.string())->render_prompt("", "x"), "<B>x");
  write(R"({"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]})");
  EXPECT_EQ(ChatTemplate::load(dir_.string())->render_prompt("", "x"), "D");
}

TEST_F(ChatTemplateFileTest, MalformedConfigNamesTheFileAndField) {
  const std::string path = (dir_ / "tokenizer_config.json").string();
  write(R"({"chat_template": 7})");
  EXPECT_TRUE(throws_error([&] { ChatTemplate::load(dir_.string()); }, ErrorKind::kInvalidArgument,
                           {path, "chat_template"}));
  write(R"({"bos_token": 3, "chat_template": "x"})");
  EXPECT_TRUE(throws_error([&] { ChatTemplate::load(dir_.string()); }, ErrorKind::kInvalidArgument, {path, "bos_token"}));
  write(R"({"chat_template": "{% while %}"})");
  EXPECT_TRUE(throws_error([&] { ChatTemplate::load(dir_.string()); }, ErrorKind::kInvalidArgument,
                           {path, "field 'chat_template'", "unsupported statement 'while'", "line 1:4"}));
  write("{not json");
  EXPECT_TRUE(throws_error([&] { ChatTemplate::load(dir_.string()); }, ErrorKind::kCorruption, {path}));
}

}  // namespace
}  // namespace seed::models
