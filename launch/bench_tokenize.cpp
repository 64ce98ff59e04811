// `seed bench tokenize`: encoding and decoding speed of a model folder's
// tokenizer on a text file, on one thread.
#include <cstdint>
#include <spdlog/spdlog.h>

#include <chrono>
#include <fstream>
#include <iterator>

#include "launch/model_option.h"
#include "launch/option_checks.h"
#include "launch/tokenize_commands.h"
#include "models/base/error.h"
#include "models/tokenizer.h"

namespace seed::launch {
namespace {

struct BenchTokenizeOptions {
  std::string model_dir;
  std::string text_path;
  int repeats = 3;
};

using Clock = std::chrono::steady_clock;

// Lines of the file: tokenizers see prompts and documents, not one huge string.
std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  SEED_CHECK(in.good(), kNotFound) << path << ": cannot open the text file";
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line + "\n");
  SEED_CHECK(!lines.empty(), kInvalidArgument) << path << " is empty";
  return lines;
}

void run_bench_tokenize(const BenchTokenizeOptions& options) {
  const auto tokenizer = models::load_tokenizer(options.model_dir);
  const std::vector<std::string> lines = read_lines(options.text_path);
  size_t bytes = 0;
  for (const auto& line : lines) bytes += line.size();
  std::printf("%-6s %10s %10s %12s %12s\n", "pass", "MB", "tokens", "encode MB/s", "decode MB/s");
  for (int pass = 0; pass < options.repeats; ++pass) {
    std::vector<std::vector<int32_t>> encoded;
    encoded.reserve(lines.size());
    size_t tokens = 0;
    const auto start = Clock::now();
    for (const auto& line : lines) {
      encoded.push_back(tokenizer->encode(line, false));
      tokens += encoded.back().size();
    }
    const double encode_s = std::chrono::duration<double>(Clock::now() - start).count();
    const auto decode_start = Clock::now();
    size_t decoded_bytes = 0;
    for (const auto& ids : encoded) decoded_bytes += tokenizer->decode(ids).size();
    const double decode_s = std::chrono::duration<double>(Clock::now() - decode_start).count();
    // The first pass starts with an empty word cache.
    std::printf("%-6s %10.2f %10zu %12.2f %12.2f\n", pass == 0 ? "cold" : "warm", bytes / 1e6, tokens,
                bytes / 1e6 / encode_s, decoded_bytes / 1e6 / decode_s);
  }
}

}  // namespace

void add_bench_tokenize_command(CLI::App& bench) {
  auto options = std::make_shared<BenchTokenizeOptions>();
  CLI::App* cmd = bench.add_subcommand("tokenize", "Encode and decode speed of a model's tokenizer on a text file (one thread)");
  add_model_option(cmd, &options->model_dir, "Model folder (tokenizer.model or tokenizer.json)");
  cmd->add_option("--text", options->text_path, "UTF-8 text file, encoded line by line")->required()->check(CLI::ExistingFile);
  cmd->add_option("--repeats", options->repeats, "Passes over the file (the first is cold)")
      ->check(positive_integer())
      ->capture_default_str();
  cmd->callback([options] { run_bench_tokenize(*options); });
}

}  // namespace seed::launch
