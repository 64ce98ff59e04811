// Corpus generation: draws states, labels them exactly, renders prompts.
// Design: one generator function per kind, each on its own random stream
// (derive_engine(seed, stream)), so kinds are independent of each other's
// counts; the Game-of-24 puzzle source is shared and read-only apart from
// its solver memo, whose answers are pure functions of the state.
#include "tasks/corpus.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "models/base/error.h"
#include "tasks/blocksworld.h"
#include "tasks/corpus_formats.h"
#include "tasks/corpus_generators.h"
#include "tasks/random_draw.h"

namespace seed::tasks {
namespace {

constexpr size_t kPuzzleSize = 4;
// Propose states follow a path to 24 this often (ToT-BFS keeps good states,
// so that is what the proposer mostly sees); otherwise random steps.
constexpr uint64_t kProposeOnPathPercent = 75;
// Step-reward paths keep to a path to 24 this often, so that both labels
// are common at every depth.
constexpr uint64_t kPrmOnPathPercent = 50;

// Keeps the items that satisfy `wanted`, unless none does (then keeps all).
template <typename T, typename Pred>
void keep_if(std::vector<T>* items, Pred wanted) {
  if (std::none_of(items->begin(), items->end(), wanted)) return;
  items->erase(std::remove_if(items->begin(), items->end(), [&](const T& x) { return !wanted(x); }),
               items->end());
}

// Puzzles and the exact solver, shared by the three Game-of-24 kinds.
class Game24Source {
 public:
  explicit Game24Source(const CorpusConfig& config) : config_(config) {
    split_ = split_game24_puzzles(load_game24_csv(config.game24_csv));
    for (const Numbers& p : split_.test) test_keys_.insert(numbers_text(p));
  }

  Game24Solver& solver() { return solver_; }
  const std::vector<Numbers>& training_puzzles() const { return split_.train; }

  // A training puzzle: a random multiset (never a test one) or a CSV row.
  Numbers draw_puzzle(std::mt19937_64& rng) const {
    if (split_.train.empty() || draw_chance(rng, config_.game24_random_percent, 100)) {
      for (int draw = 0; draw < kMaxDraws; ++draw) {
        Numbers puzzle;
        for (size_t i = 0; i < kPuzzleSize; ++i) {
          puzzle.emplace_back(draw_between(rng, 1, config_.game24_random_max));
        }
        if (test_keys_.count(numbers_text(puzzle)) == 0) return puzzle;
      }
      SEED_FAIL(kInvalidArgument) << "every random puzzle is a test puzzle; raise game24_random_max";
    }
    return pick(rng, split_.train);
  }

  // Takes up to `depth` random steps from `state`. On a path, steps keep a
  // solvable state solvable and, where possible, have non-negative results
  // (as the proposer is taught to prefer). Appends the steps taken to
  // `taken` if given.
  Numbers walk(std::mt19937_64& rng, Numbers state, uint64_t depth, bool on_path,
               std::vector<Game24Step>* taken = nullptr) {
    for (uint64_t d = 0; d < depth && state.size() > 1; ++d) {
      std::vector<Game24Step> steps = game24_next_steps(state);
      if (on_path && solver_.solvable(state)) {
        keep_if(&steps, [&](const Game24Step& s) { return solver_.solvable(s.left); });
        keep_if(&steps, [](const Game24Step& s) { return s.result >= Rational(0); });
      }
      const Game24Step& step = pick(rng, steps);
      if (taken != nullptr) taken->push_back(step);
      state = step.left;
    }
    return state;
  }

 private:
  const CorpusConfig& config_;
  Game24Split split_;
  std::set<std::string> test_keys_;
  Game24Solver solver_;
};

CorpusExample game24_example(std::string kind, std::string prompt, std::string completion) {
  return {"game24", std::move(kind), std::move(prompt), std::move(completion)};
}

std::vector<CorpusExample> game24_propose(const CorpusConfig& config, Game24Source& source) {
  std::mt19937_64 rng = engine(config, Stream::kPropose);
  std::vector<CorpusExample> examples;
  for (int i = 0; i < config.game24_propose; ++i) {
    const Numbers puzzle = source.draw_puzzle(rng);
    const uint64_t depth = draw_below(rng, kPuzzleSize - 1);  // states of 4, 3 or 2 numbers
    const Numbers state =
        source.walk(rng, puzzle, depth, draw_chance(rng, kProposeOnPathPercent, 100));
    const std::vector<Game24Step> steps = game24_next_steps(state);
    // Step indices in four tiers, each in random order: keeps the state
    // solvable with a non-negative result, solvable with a negative one, then
    // the unsolvable ones likewise. The first propose_lines are listed, in
    // game24_next_steps order.
    std::vector<size_t> tiers[4];
    for (size_t s = 0; s < steps.size(); ++s) {
      const bool solvable = source.solver().solvable(steps[s].left);
      const bool negative = steps[s].result < Rational(0);
      tiers[(solvable ? 0 : 2) + (negative ? 1 : 0)].push_back(s);
    }
    std::vector<size_t> listed;
    for (std::vector<size_t>& tier : tiers) {
      draw_shuffle(rng, &tier);
      listed.insert(listed.end(), tier.begin(), tier.end());
    }
    listed.resize(std::min(listed.size(), static_cast<size_t>(config.game24_propose_lines)));
    std::sort(listed.begin(), listed.end());
    std::string completion;
    for (const size_t s : listed) completion += steps[s].text() + "\n";
    examples.push_back(game24_example(
        "propose", render_prompt(kGame24ProposePrompt, {{"input", numbers_text(state)}}),
        std::move(completion)));
  }
  return examples;
}

std::vector<CorpusExample> game24_value(const CorpusConfig& config, Game24Source& source) {
  std::mt19937_64 rng = engine(config, Stream::kValue);
  std::vector<CorpusExample> examples;
  for (int i = 0; i < config.game24_value; ++i) {
    const Numbers puzzle = source.draw_puzzle(rng);
    // Depth 0..3 (4..1 numbers) with weights 2:4:3:1: the states a search
    // evaluates, mostly one or two proposals deep.
    const uint64_t roll = draw_below(rng, 10);
    const uint64_t depth = roll < 2 ? 0 : roll < 6 ? 1 : roll < 9 ? 2 : 3;
    const Numbers state =
        source.walk(rng, puzzle, depth, draw_chance(rng, config.game24_value_on_path_percent, 100));
    // The worked check (two or three numbers) agrees with the solver's label.
    examples.push_back(game24_example(
        "value", render_prompt(kGame24ValuePrompt, {{"input", numbers_text(state)}}),
        game24_value_check(state).work + game24_label_name(source.solver().label(state)) + "\n"));
  }
  return examples;
}

std::vector<CorpusExample> game24_cot(const CorpusConfig& config, Game24Source& source) {
  std::mt19937_64 rng = engine(config, Stream::kCot);
  std::vector<CorpusExample> examples;
  for (int i = 0; i < config.game24_cot; ++i) {
    Numbers puzzle;
    for (int draw = 0; puzzle.empty() || !source.solver().solvable(puzzle); ++draw) {
      SEED_CHECK(draw < kMaxDraws, kInternal) << "corpus: no solvable puzzle drawn";
      puzzle = source.draw_puzzle(rng);
    }
    std::vector<Game24Step> steps;
    source.walk(rng, puzzle, puzzle.size() - 1, /*on_path=*/true, &steps);
    const std::optional<std::string> expression = expression_from_steps(puzzle, steps);
    SEED_CHECK(expression.has_value(), kInternal) << "corpus: a solution path does not replay";
    std::string completion;
    for (const Game24Step& step : steps) completion += step.text() + "\n";
    completion += std::string(kGame24AnswerPrefix) + *expression + " = 24\n";
    examples.push_back(game24_example(
        "cot", render_prompt(kGame24CotPrompt, {{"input", numbers_text(puzzle)}}),
        std::move(completion)));
  }
  return examples;
}

std::vector<CorpusExample> game24_prm(const CorpusConfig& config, Game24Source& source) {
  std::mt19937_64 rng = engine(config, Stream::kPrm);
  std::vector<CorpusExample> examples;
  for (int i = 0; i < config.game24_prm; ++i) {
    const Numbers puzzle = source.draw_puzzle(rng);
    const uint64_t depth = 1 + draw_below(rng, kPuzzleSize - 1);  // 1, 2 or 3 steps
    std::vector<Game24Step> steps;
    const Numbers left = source.walk(rng, puzzle, depth, draw_chance(rng, kPrmOnPathPercent, 100), &steps);
    std::string prompt = render_prompt(kGame24PrmPrefix, {{"input", numbers_text(puzzle)}});
    for (size_t s = 0; s + 1 < steps.size(); ++s) prompt += steps[s].text() + std::string(kGame24PrmTag) + "\n";
    prompt += steps.back().text();
    bool good = source.solver().solvable(left);
    // Half the whole paths go on to the Answer line a chain of thought
    // ends with; it is right only if the path made 24.
    if (left.size() == 1 && draw_chance(rng, 1, 2)) {
      const std::optional<std::string> expression = expression_from_steps(puzzle, steps);
      SEED_CHECK(expression.has_value(), kInternal) << "corpus: a walk does not replay";
      prompt += std::string(kGame24PrmTag) + "\n" + std::string(kGame24AnswerPrefix) + *expression + " = 24";
    }
    prompt += kGame24PrmTag;
    examples.push_back(game24_example("prm", std::move(prompt), good ? "+" : "-"));
  }
  return examples;
}

// The states a search meets one and two steps into a puzzle, enumerated
// rather than drawn, so that each set of numbers left is seen under several
// puzzles. Two numbers can make 24 in about 3 of 100 two-step states; all of
// those are kept and one dead end per first step, so that both labels are
// common.
std::vector<CorpusExample> game24_prm_states(const CorpusConfig& config, Game24Source& source) {
  if (!config.game24_prm_states) return {};
  std::mt19937_64 rng = engine(config, Stream::kPrmStates);
  Game24Solver& solver = source.solver();
  std::vector<CorpusExample> examples;
  const auto add = [&](std::string prompt, const Numbers& left) {
    examples.push_back(game24_example("prm_states", std::move(prompt) + std::string(kGame24PrmTag),
                                      solver.solvable(left) ? "+" : "-"));
  };
  for (const Numbers& puzzle : source.training_puzzles()) {
    const std::string input = render_prompt(kGame24PrmPrefix, {{"input", numbers_text(puzzle)}});
    for (const Game24Step& first : game24_next_steps(puzzle)) {
      const std::string after_first = input + first.text();
      add(after_first, first.left);
      const std::string before_second = after_first + std::string(kGame24PrmTag) + "\n";
      const std::vector<Game24Step> seconds = game24_next_steps(first.left);
      std::vector<const Game24Step*> dead_ends;
      for (const Game24Step& second : seconds) {
        if (solver.solvable(second.left)) {
          add(before_second + second.text(), second.left);
        } else {
          dead_ends.push_back(&second);
        }
      }
      if (!dead_ends.empty()) {
        const Game24Step& second = *pick(rng, dead_ends);
        add(before_second + second.text(), second.left);
      }
    }
  }
  return examples;
}


bool needs_game24(std::string_view kind) {
  return kind == "propose" || kind == "value" || kind == "cot" || kind == "prm" || kind == "prm_states";
}

std::vector<CorpusExample> generate_kind(const CorpusConfig& config, std::string_view kind,
                                         Game24Source* source) {
  if (kind == "propose") return game24_propose(config, *source);
  if (kind == "value") return game24_value(config, *source);
  if (kind == "cot") return game24_cot(config, *source);
  if (kind == "prm") return game24_prm(config, *source);
  if (kind == "prm_states") return game24_prm_states(config, *source);
  if (kind == "next_action") return blocks_next_action(config);
  if (kind == "evaluate_action") return blocks_evaluate_action(config);
  if (kind == "plan") return blocks_plan(config);
  SEED_FAIL(kInvalidArgument) << "unknown corpus kind '" << kind
                              << "'; expected propose, value, cot, prm, prm_states, next_action, "
                                 "evaluate_action or plan";
}

}  // namespace

void CorpusConfig::validate() const {
  const std::pair<const char*, int> counts[] = {
      {"game24_propose", game24_propose},
      {"game24_value", game24_value},
      {"game24_cot", game24_cot},
      {"game24_prm", game24_prm},
      {"blocksworld_next_action", blocksworld_next_action},
      {"blocksworld_evaluate_action", blocksworld_evaluate_action},
      {"blocksworld_plan", blocksworld_plan},
  };
  for (const auto& [name, count] : counts) {
    SEED_CHECK(count >= 0, kInvalidArgument) << "corpus: " << name << " = " << count << " < 0";
  }
  SEED_CHECK(game24_value_on_path_percent >= 0 && game24_value_on_path_percent <= 100, kInvalidArgument)
      << "corpus: game24_value_on_path_percent = " << game24_value_on_path_percent << " outside [0, 100]";
  SEED_CHECK(game24_random_percent >= 0 && game24_random_percent <= 100, kInvalidArgument)
      << "corpus: game24_random_percent = " << game24_random_percent << " outside [0, 100]";
  SEED_CHECK(game24_random_max >= 1, kInvalidArgument)
      << "corpus: game24_random_max = " << game24_random_max << " < 1";
  SEED_CHECK(game24_propose_lines >= 1, kInvalidArgument)
      << "corpus: game24_propose_lines = " << game24_propose_lines << " < 1";
  SEED_CHECK(blocks_min >= 2 && blocks_min <= blocks_max && blocks_max <= kBlocksMax,
             kInvalidArgument)
      << "corpus: blocks_min..blocks_max = " << blocks_min << ".." << blocks_max
      << "; need 2 <= blocks_min <= blocks_max <= " << kBlocksMax;
  SEED_CHECK(game24_csv.size() > 0 || !uses_game24(), kInvalidArgument)
      << "corpus: game24 examples need game24_csv (the path of Tree of Thoughts' 24.csv, e.g. " << kGame24CsvPath
      << ")";
}

Game24Split split_game24_puzzles(const std::vector<Numbers>& puzzles) {
  SEED_CHECK(puzzles.size() >= kGame24TestEnd, kInvalidArgument)
      << "Game-of-24 puzzles: " << puzzles.size() << " rows, but the test split is rows "
      << kGame24TestBegin << ".." << kGame24TestEnd - 1 << "; use Tree of Thoughts' full 24.csv";
  Game24Split split;
  split.test.assign(puzzles.begin() + kGame24TestBegin, puzzles.begin() + kGame24TestEnd);
  std::set<std::string> test_keys;
  for (const Numbers& p : split.test) test_keys.insert(numbers_text(p));
  for (size_t i = 0; i < puzzles.size(); ++i) {
    if (i >= kGame24TestBegin && i < kGame24TestEnd) continue;
    if (test_keys.count(numbers_text(puzzles[i])) == 0) split.train.push_back(puzzles[i]);
  }
  return split;
}

std::vector<CorpusExample> generate_corpus_kind(const CorpusConfig& config, std::string_view kind) {
  config.validate();
  std::optional<Game24Source> source;
  if (needs_game24(kind)) source.emplace(config);
  return generate_kind(config, kind, source ? &*source : nullptr);
}

std::vector<CorpusExample> generate_corpus(const CorpusConfig& config) {
  config.validate();
  std::optional<Game24Source> source;
  if (config.uses_game24()) source.emplace(config);
  std::vector<CorpusExample> corpus;
  for (const std::string_view kind :
       {"propose", "value", "cot", "prm", "prm_states", "next_action", "evaluate_action", "plan"}) {
    if (needs_game24(kind) && !source) continue;
    std::vector<CorpusExample> part = generate_kind(config, kind, source ? &*source : nullptr);
    std::move(part.begin(), part.end(), std::back_inserter(corpus));
  }
  std::mt19937_64 rng = engine(config, Stream::kShuffle);
  draw_shuffle(rng, &corpus);
  return corpus;
}

void write_corpus_jsonl(const std::string& path, const std::vector<CorpusExample>& examples) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  SEED_CHECK(out.good(), kIo) << "cannot write corpus '" << path << "'";
  for (const CorpusExample& e : examples) {
    // ordered_json keeps the documented field order in every line.
    const nlohmann::ordered_json line = {
        {"task", e.task}, {"kind", e.kind}, {"prompt", e.prompt}, {"completion", e.completion}};
    out << line.dump() << '\n';
  }
  out.flush();
  SEED_CHECK(out.good(), kIo) << "writing corpus '" << path << "' failed (disk full?)";
}

std::string render_prompt(std::string_view tmpl,
                          const std::vector<std::pair<std::string_view, std::string>>& fields) {
  std::vector<bool> used(fields.size(), false);
  std::string out;
  size_t pos = 0;
  while (pos < tmpl.size()) {
    const size_t open = tmpl.find('{', pos);
    if (open == std::string_view::npos) {
      out.append(tmpl.substr(pos));
      break;
    }
    const size_t close = tmpl.find('}', open);
    SEED_CHECK(close != std::string_view::npos, kInvalidArgument)
        << "prompt template: '{' without '}' at offset " << open;
    out.append(tmpl.substr(pos, open - pos));
    const std::string_view name = tmpl.substr(open + 1, close - open - 1);
    size_t f = 0;
    while (f < fields.size() && fields[f].first != name) ++f;
    SEED_CHECK(f < fields.size(), kInvalidArgument)
        << "prompt template names field {" << name << "}, which was not given";
    out += fields[f].second;
    used[f] = true;
    pos = close + 1;
  }
  for (size_t f = 0; f < fields.size(); ++f) {
    SEED_CHECK(used[f], kInvalidArgument)
        << "prompt field '" << fields[f].first << "' is not in the template";
  }
  return out;
}

}  // namespace seed::tasks
