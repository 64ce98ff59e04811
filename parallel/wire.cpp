#include "parallel/wire.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <type_traits>

#include "models/base/error.h"
#include "spec/drafters/lesson.h"

// The format is little-endian and arrays are copied as they lie in memory.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the wire format assumes a little-endian host");

namespace seed::parallel::wire {

namespace {

constexpr uint8_t kMagic[2] = {'S', 'D'};

// A draft's flags.
constexpr uint8_t kDeterministic = 1, kWithoutReplacement = 2;
// A proposal item's status: a draft follows, or the drafter's error.
constexpr uint8_t kDrafted = 0, kFailed = 1;
// Bounds on a proposal's q rows: token ids are below kMaxVocab (the largest
// vocabularies seed loads have 262k tokens), and a row sums to 1 within
// kRowMassTolerance (float rounding over at most kMaxVocab entries).
constexpr uint32_t kMaxVocab = uint32_t{1} << 20;
constexpr double kRowMassTolerance = 1e-3;

enum class Type : uint8_t { kStart = 1, kDraft, kProposal, kVerdict, kFinish, kShutdown, kError, kVerify, kVerdicts,
                            kUsageRequest, kUsage, kLesson };

class Writer {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_arithmetic_v<T>);
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
  }
  void put_count(size_t count, const char* field) {
    SEED_CHECK(count <= std::numeric_limits<uint32_t>::max(), kInvalidArgument)
        << "wire: " << field << " has " << count << " elements, more than a message can carry";
    put(static_cast<uint32_t>(count));
  }
  template <typename T>
  void put_raw(const T* data, size_t count) {
    const auto* p = reinterpret_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + count * sizeof(T));
  }
  template <typename T>
  void put_array(const std::vector<T>& values, const char* field) {
    put_count(values.size(), field);
    put_raw(values.data(), values.size());
  }
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

// Reads a buffer front to back; every shortfall names the sender, the
// message and the field being read.
class Reader {
 public:
  Reader(const std::vector<uint8_t>& bytes, int sender) : bytes_(bytes), sender_(sender) {}

  void set_message(const char* name) { message_ = name; }
  template <typename T>
  T get(const char* field) {
    T value;
    std::memcpy(&value, take(sizeof(T), field), sizeof(T));
    return value;
  }
  template <typename T>
  void get_raw(T* out, size_t count, const char* field) {
    if (count > 0) std::memcpy(out, take(count * sizeof(T), field), count * sizeof(T));
  }
  template <typename T>
  std::vector<T> get_array(const char* field) {
    const uint32_t count = get<uint32_t>(field);
    need(uint64_t{count} * sizeof(T), field);  // before allocating what a corrupt count claims
    std::vector<T> values(count);
    get_raw(values.data(), count, field);
    return values;
  }
  void finish() {
    if (position_ != bytes_.size()) {
      detail::Raiser() & fail() << bytes_.size() - position_ << " bytes follow the end of the message";
    }
  }
  // An error to complete and raise: detail::Raiser() & r.fail() << "what";
  detail::ErrorBuilder fail() const {
    detail::ErrorBuilder builder(ErrorKind::kCorruption);
    builder << "malformed " << message_ << " message from rank " << sender_ << ": ";
    return builder;
  }
  // Throws unless `size` more bytes are left for `field`.
  void need(uint64_t size, const char* field) {
    if (size > bytes_.size() - position_) {
      detail::Raiser() & fail() << "truncated at byte " << position_ << " reading " << field << " (" << size
                                << " bytes needed, " << bytes_.size() - position_ << " left)";
    }
  }

 private:
  const uint8_t* take(size_t size, const char* field) {
    need(size, field);
    const uint8_t* p = bytes_.data() + position_;
    position_ += size;
    return p;
  }

  const std::vector<uint8_t>& bytes_;
  int sender_;
  const char* message_ = "wire";
  size_t position_ = 0;
};

// The q rows a proposal sends: contexts (0 = the prefix, i + 1 = after
// node i) that have children, in order.
std::vector<size_t> sent_contexts(const std::vector<int32_t>& parents) {
  std::vector<bool> has(parents.size() + 1, false);
  for (int32_t parent : parents) has[static_cast<size_t>(parent + 1)] = true;
  std::vector<size_t> contexts;
  for (size_t c = 0; c < has.size(); ++c) {
    if (has[c]) contexts.push_back(c);
  }
  return contexts;
}

// (ids [i32], probs [f32]): a count, the ids, then as many probs.
void put_pairs(Writer& w, const std::vector<int32_t>& ids, const std::vector<float>& probs, const char* field) {
  SEED_CHECK(ids.size() == probs.size(), kInvalidArgument)
      << "wire: " << field << " has " << ids.size() << " ids but " << probs.size() << " probs";
  w.put_array(ids, field);
  w.put_raw(probs.data(), probs.size());
}

void get_pairs(Reader& r, std::vector<int32_t>& ids, std::vector<float>& probs, const char* ids_field,
               const char* probs_field) {
  ids = r.get_array<int32_t>(ids_field);
  probs.resize(ids.size());
  r.get_raw(probs.data(), probs.size(), probs_field);
}

// Throws unless `row` is a distribution by its support (DraftRow): ids
// distinct and below kMaxVocab, probs in (0, 1], summing to 1.
void check_row(Reader& r, const spec::DraftRow& row, size_t context) {
  double mass = 0.0;
  for (size_t j = 0; j < row.ids.size(); ++j) {
    if (row.ids[j] < 0 || static_cast<uint32_t>(row.ids[j]) >= kMaxVocab) {
      detail::Raiser() & r.fail() << "q row " << context << " names token " << row.ids[j] << ", outside [0, "
                                  << kMaxVocab << ")";
    }
    if (!(row.probs[j] > 0.0f && row.probs[j] <= 1.0f)) {
      detail::Raiser() & r.fail() << "q row " << context << " gives token " << row.ids[j] << " probability "
                                  << row.probs[j] << ", outside (0, 1]";
    }
    mass += row.probs[j];
  }
  if (!(std::abs(mass - 1.0) <= kRowMassTolerance)) {
    detail::Raiser() & r.fail() << "q row " << context << " sums to " << mass << ", not 1";
  }
  std::vector<int32_t> sorted = row.ids;
  std::sort(sorted.begin(), sorted.end());
  const auto repeat = std::adjacent_find(sorted.begin(), sorted.end());
  if (repeat != sorted.end()) detail::Raiser() & r.fail() << "q row " << context << " names token " << *repeat << " twice";
}

void put_settings(Writer& w, const spec::DraftSettings& s) {
  w.put(s.sampling.temperature);
  w.put(s.sampling.top_k);
  w.put(s.sampling.top_p);
  w.put(s.seed);
  w.put(s.stream);
  w.put_array(std::vector<int32_t>(s.k_config.begin(), s.k_config.end()), "k_config");
  w.put(s.group);
  w.put(static_cast<uint8_t>(s.pruned.has_value()));
  const spec::PrunedTree pruned = s.pruned.value_or(spec::PrunedTree{});
  w.put(pruned.expand);
  w.put(pruned.prune);
  w.put(static_cast<uint8_t>(s.sample_drafts));
}

spec::DraftSettings get_settings(Reader& r) {
  spec::DraftSettings s;
  s.sampling.temperature = r.get<float>("temperature");
  s.sampling.top_k = r.get<int32_t>("top_k");
  s.sampling.top_p = r.get<float>("top_p");
  s.seed = r.get<uint64_t>("seed");
  s.stream = r.get<uint64_t>("stream");
  const std::vector<int32_t> k_config = r.get_array<int32_t>("k_config");
  s.k_config.assign(k_config.begin(), k_config.end());
  s.group = r.get<uint64_t>("group");
  const bool pruned = r.get<uint8_t>("pruned") != 0;
  spec::PrunedTree rule;
  rule.expand = r.get<float>("pruned expand");
  rule.prune = r.get<float>("pruned prune");
  if (pruned) s.pruned = rule;
  s.sample_drafts = r.get<uint8_t>("sample_drafts") != 0;
  return s;
}

void put_draft(Writer& w, const spec::DraftTree& d) {
  const size_t n = d.tokens.size();
  SEED_CHECK(d.parents.size() == n, kInvalidArgument)
      << "wire: a proposal has " << n << " tokens but " << d.parents.size() << " parents";
  for (size_t i = 0; i < n; ++i) {
    SEED_CHECK(d.parents[i] >= -1 && d.parents[i] < static_cast<int32_t>(i), kInvalidArgument)
        << "wire: proposal node " << i << " has parent " << d.parents[i] << ", not an earlier node";
  }
  const bool rows = !d.deterministic && n > 0;
  SEED_CHECK(rows ? d.q.size() == n + 1 : d.q.empty() || n == 0, kInvalidArgument)
      << "wire: a proposal's q has " << d.q.size() << " rows, not n + 1 = " << n + 1
      << (d.deterministic ? " (a deterministic draft sends none)" : "");
  w.put_array(d.tokens, "tokens");
  w.put_raw(d.parents.data(), n);  // as many as tokens
  w.put(static_cast<uint8_t>((d.deterministic ? kDeterministic : 0) | (d.without_replacement ? kWithoutReplacement : 0)));
  if (rows) {
    for (const size_t context : sent_contexts(d.parents)) {
      put_pairs(w, d.q[context].ids, d.q[context].probs, "q row");
    }
  }
  SEED_CHECK(d.confidence.empty() || d.confidence.size() == n, kInvalidArgument)
      << "wire: a proposal has " << d.confidence.size() << " confidences for " << n << " tokens";
  w.put_array(d.confidence, "confidence");
}

spec::DraftTree get_draft(Reader& r) {
  spec::DraftTree d;
  d.tokens = r.get_array<int32_t>("tokens");
  d.parents.resize(d.tokens.size());
  r.get_raw(d.parents.data(), d.parents.size(), "parents");
  for (size_t i = 0; i < d.parents.size(); ++i) {
    if (d.parents[i] < -1 || d.parents[i] >= static_cast<int32_t>(i)) {
      detail::Raiser() & r.fail() << "node " << i << " has parent " << d.parents[i] << ", not an earlier node";
    }
  }
  const uint8_t flags = r.get<uint8_t>("flags");
  if ((flags & ~(kDeterministic | kWithoutReplacement)) != 0) {
    detail::Raiser() & r.fail() << "unknown proposal flags " << int{flags};
  }
  d.deterministic = (flags & kDeterministic) != 0;
  d.without_replacement = (flags & kWithoutReplacement) != 0;
  if (!d.deterministic && !d.tokens.empty()) {
    d.q.resize(d.tokens.size() + 1);
    for (const size_t context : sent_contexts(d.parents)) {
      spec::DraftRow& row = d.q[context];
      get_pairs(r, row.ids, row.probs, "q ids", "q probs");
      check_row(r, row, context);
    }
    for (size_t i = 0; i < d.tokens.size(); ++i) {
      if (!(d.q[static_cast<size_t>(d.parents[i] + 1)].prob(d.tokens[i]) > 0.0f)) {
        detail::Raiser() & r.fail() << "node " << i << "'s token " << d.tokens[i] << " has no probability in q row "
                                    << d.parents[i] + 1 << ", which it was drawn from";
      }
    }
  }
  d.confidence = r.get_array<float>("confidence");
  if (!d.confidence.empty() && d.confidence.size() != d.tokens.size()) {
    detail::Raiser() & r.fail() << d.confidence.size() << " confidences for " << d.tokens.size() << " tokens";
  }
  return d;
}

void put_target_top(Writer& w, const std::vector<spec::TopTokens>& target_top) {
  w.put_count(target_top.size(), "target_top");
  for (const spec::TopTokens& top : target_top) put_pairs(w, top.ids, top.probs, "target_top ids");
}

std::vector<spec::TopTokens> get_target_top(Reader& r) {
  const uint32_t tops = r.get<uint32_t>("target_top");
  r.need(uint64_t{tops} * sizeof(uint32_t), "target_top");  // each at least a count
  std::vector<spec::TopTokens> target_top(tops);
  for (spec::TopTokens& top : target_top) get_pairs(r, top.ids, top.probs, "target_top ids", "target_top probs");
  return target_top;
}

spec::DrafterKind get_drafter_kind(Reader& r) {
  const uint8_t drafter = r.get<uint8_t>("drafter");
  if (drafter >= spec::kDrafterKinds.size()) detail::Raiser() & r.fail() << "unknown drafter kind " << int{drafter};
  return spec::kDrafterKinds[drafter];
}

// A count of events, never negative.
int64_t get_count(Reader& r, const char* field) {
  const int64_t count = r.get<int64_t>(field);
  if (count < 0) detail::Raiser() & r.fail() << field << " is " << count << ", a negative count";
  return count;
}

void put_verdict(Writer& w, const spec::Verdict& v) {
  w.put_array(v.accepted, "accepted");
  w.put(v.bonus);
  w.put_array(v.tokens, "tokens");
  put_target_top(w, v.target_top);
  w.put(v.hidden_from);
  w.put_array(v.hidden, "hidden");
}

spec::Verdict get_verdict(Reader& r) {
  spec::Verdict v;
  v.accepted = r.get_array<int32_t>("accepted");
  v.bonus = r.get<int32_t>("bonus");
  v.tokens = r.get_array<int32_t>("tokens");
  v.target_top = get_target_top(r);
  v.hidden_from = r.get<int64_t>("hidden_from");
  if (v.hidden_from < 0) detail::Raiser() & r.fail() << "hidden_from " << v.hidden_from << " < 0";
  v.hidden = r.get_array<float>("hidden");
  return v;
}

void put_lesson(Writer& w, spec::DrafterKind drafter, const spec::Lesson& l) {
  SEED_CHECK(l.target_top.size() <= l.tokens.size(), kInvalidArgument)
      << "wire: a lesson has " << l.target_top.size() << " target distributions for " << l.tokens.size() << " tokens";
  w.put(static_cast<uint8_t>(drafter.value()));
  w.put(l.group);
  w.put_array(l.context, "context");
  w.put_array(l.tokens, "tokens");
  put_target_top(w, l.target_top);
}

LessonMessage get_lesson(Reader& r) {
  LessonMessage m;
  m.drafter = get_drafter_kind(r);
  if (spec::lesson_context(m.drafter) == 0) {
    detail::Raiser() & r.fail() << "drafter '" << m.drafter.name() << "' keeps no group table to learn into";
  }
  m.lesson.group = r.get<uint64_t>("group");
  m.lesson.context = r.get_array<int32_t>("context");
  if (m.lesson.context.size() > spec::lesson_context(m.drafter)) {
    detail::Raiser() & r.fail() << m.lesson.context.size() << " context tokens, more than the "
                                << spec::lesson_context(m.drafter) << " a " << m.drafter.name() << " lesson carries";
  }
  m.lesson.tokens = r.get_array<int32_t>("tokens");
  m.lesson.target_top = get_target_top(r);
  if (m.lesson.target_top.size() > m.lesson.tokens.size()) {
    detail::Raiser() & r.fail() << m.lesson.target_top.size() << " target distributions for "
                                << m.lesson.tokens.size() << " tokens";
  }
  return m;
}

struct Encoder {
  Writer& w;
  void operator()(const StartMessage& m) {
    w.put(m.slot);
    w.put_array(m.tokens, "tokens");
    put_settings(w, m.settings);
    w.put(static_cast<uint8_t>(m.drafter.value()));
  }
  void operator()(const DraftMessage& m) {
    w.put_count(m.asks.size(), "asks");
    for (const spec::DraftAsk& ask : m.asks) {
      w.put(ask.slot);
      w.put(static_cast<int32_t>(ask.max_depth));
    }
  }
  void operator()(const SlotDraft& m) {
    w.put(m.slot);
    put_draft(w, m.draft);
  }
  void operator()(const ProposalMessage& m) {
    w.put_count(m.items.size(), "items");
    for (const ProposalMessage::Item& item : m.items) {
      w.put(item.slot);
      w.put(static_cast<uint8_t>(item.error ? kFailed : kDrafted));
      if (item.error) {
        w.put_array(std::vector<uint8_t>(item.error->begin(), item.error->end()), "error");
      } else {
        put_draft(w, item.draft);
      }
    }
    w.put(m.graph_warm_ups);
  }
  void operator()(const VerdictMessage& m) {
    w.put(m.slot);
    put_verdict(w, m.verdict);
  }
  void operator()(const FinishMessage& m) { w.put(m.slot); }
  void operator()(const ShutdownMessage&) {}
  void operator()(const ErrorMessage& m) { w.put_array(std::vector<uint8_t>(m.text.begin(), m.text.end()), "text"); }
  void operator()(const VerifyMessage& m) {
    w.put_count(m.items.size(), "items");
    for (const SlotDraft& item : m.items) (*this)(item);
    w.put(m.target_top_k);
  }
  void operator()(const VerdictsMessage& m) {
    w.put_count(m.items.size(), "items");
    for (const VerdictMessage& item : m.items) (*this)(item);
    w.put(m.prefill.prompt_tokens);
    w.put(m.prefill.computed_tokens);
    w.put(m.prefill.kv_peak_bytes);
    w.put(m.prefill.kv_live_bytes);
    w.put(m.prefill.evicted_blocks);
    w.put(m.prefill.verify_rounds);
    w.put(m.prefill.forward_s);
    w.put(m.prefill.host_verify_s);
    w.put(m.prefill.graph_warm_ups);
  }
  void operator()(const UsageRequestMessage&) {}
  void operator()(const LessonMessage& m) { put_lesson(w, m.drafter, m.lesson); }
  void operator()(const UsageMessage& m) {
    w.put_count(m.ranks.size(), "ranks");
    for (const RankUsage& u : m.ranks) {
      w.put(static_cast<int32_t>(u.rank));
      w.put(u.busy_s);
      w.put(u.wall_s);
      w.put(u.cpu_s);
    }
  }
};

// Variant index -> wire type, in the order of the Message variant.
constexpr Type kTypes[] = {Type::kStart,    Type::kDraft,    Type::kProposal,     Type::kVerdict,
                           Type::kFinish,   Type::kShutdown, Type::kError,        Type::kVerify,
                           Type::kVerdicts, Type::kUsageRequest, Type::kUsage, Type::kLesson};
constexpr const char* kNames[] = {"start",  "draft",    "proposal", "verdict", "finish", "shutdown",
                                  "error",  "verify",   "verdicts", "usage request", "usage", "lesson"};
static_assert(std::size(kTypes) == std::variant_size_v<Message>);
// decode names a message kNames[type - 1]: types number the variant from 1.
constexpr bool types_follow_variant_order() {
  for (size_t i = 0; i < std::size(kTypes); ++i) {
    if (static_cast<size_t>(kTypes[i]) != i + 1) return false;
  }
  return true;
}
static_assert(types_follow_variant_order());

Message decode_body(Type type, Reader& r) {
  switch (type) {
    case Type::kStart: {
      StartMessage m;
      m.slot = r.get<uint64_t>("slot");
      m.tokens = r.get_array<int32_t>("tokens");
      m.settings = get_settings(r);
      m.drafter = get_drafter_kind(r);
      return m;
    }
    case Type::kDraft: {
      DraftMessage m;
      const uint32_t count = r.get<uint32_t>("asks");
      r.need(uint64_t{count} * (sizeof(uint64_t) + sizeof(int32_t)), "asks");
      std::set<uint64_t> asked;
      for (uint32_t i = 0; i < count; ++i) {
        spec::DraftAsk ask;
        ask.slot = r.get<uint64_t>("slot");
        ask.max_depth = r.get<int32_t>("max_depth");
        if (!asked.insert(ask.slot).second) detail::Raiser() & r.fail() << "slot " << ask.slot << " asked twice";
        m.asks.push_back(ask);
      }
      return m;
    }
    case Type::kProposal: {
      ProposalMessage m;
      const uint32_t count = r.get<uint32_t>("items");
      r.need(uint64_t{count} * (sizeof(uint64_t) + sizeof(uint8_t)), "items");  // each at least a slot and status
      for (uint32_t i = 0; i < count; ++i) {
        ProposalMessage::Item item;
        item.slot = r.get<uint64_t>("slot");
        const uint8_t status = r.get<uint8_t>("status");
        if (status == kFailed) {
          const std::vector<uint8_t> text = r.get_array<uint8_t>("error");
          item.error = std::string(text.begin(), text.end());
        } else if (status == kDrafted) {
          item.draft = get_draft(r);
        } else {
          detail::Raiser() & r.fail() << "slot " << item.slot << " has unknown status " << int{status};
        }
        m.items.push_back(std::move(item));
      }
      m.graph_warm_ups = get_count(r, "graph_warm_ups");
      return m;
    }
    case Type::kVerdict: {
      VerdictMessage m;
      m.slot = r.get<uint64_t>("slot");
      m.verdict = get_verdict(r);
      return m;
    }
    case Type::kFinish: return FinishMessage{r.get<uint64_t>("slot")};
    case Type::kShutdown: return ShutdownMessage{};
    case Type::kError: {
      const std::vector<uint8_t> text = r.get_array<uint8_t>("text");
      return ErrorMessage{std::string(text.begin(), text.end())};
    }
    case Type::kVerify: {
      VerifyMessage m;
      const uint32_t count = r.get<uint32_t>("items");
      r.need(uint64_t{count} * sizeof(uint64_t), "items");  // each at least a slot
      for (uint32_t i = 0; i < count; ++i) {
        SlotDraft item;
        item.slot = r.get<uint64_t>("slot");
        item.draft = get_draft(r);
        m.items.push_back(std::move(item));
      }
      m.target_top_k = r.get<int32_t>("target_top_k");
      return m;
    }
    case Type::kVerdicts: {
      VerdictsMessage m;
      const uint32_t count = r.get<uint32_t>("items");
      r.need(uint64_t{count} * sizeof(uint64_t), "items");  // each at least a slot
      for (uint32_t i = 0; i < count; ++i) {
        VerdictMessage item;
        item.slot = r.get<uint64_t>("slot");
        item.verdict = get_verdict(r);
        m.items.push_back(std::move(item));
      }
      m.prefill.prompt_tokens = r.get<int64_t>("prompt_tokens");
      m.prefill.computed_tokens = r.get<int64_t>("computed_tokens");
      m.prefill.kv_peak_bytes = r.get<int64_t>("kv_peak_bytes");
      m.prefill.kv_live_bytes = r.get<int64_t>("kv_live_bytes");
      m.prefill.evicted_blocks = r.get<int64_t>("evicted_blocks");
      m.prefill.verify_rounds = r.get<int64_t>("verify_rounds");
      m.prefill.forward_s = r.get<double>("forward_s");
      m.prefill.host_verify_s = r.get<double>("host_verify_s");
      m.prefill.graph_warm_ups = get_count(r, "graph_warm_ups");
      return m;
    }
    case Type::kUsageRequest: return UsageRequestMessage{};
    case Type::kLesson: return get_lesson(r);
    case Type::kUsage: {
      UsageMessage m;
      const uint32_t count = r.get<uint32_t>("ranks");
      r.need(uint64_t{count} * (sizeof(int32_t) + 3 * sizeof(double)), "ranks");
      for (uint32_t i = 0; i < count; ++i) {
        RankUsage u;
        u.rank = r.get<int32_t>("rank");
        u.busy_s = r.get<double>("busy_s");
        u.wall_s = r.get<double>("wall_s");
        u.cpu_s = r.get<double>("cpu_s");
        m.ranks.push_back(u);
      }
      return m;
    }
  }
  detail::Raiser() & r.fail() << "unknown message type " << int{static_cast<uint8_t>(type)};
}

}  // namespace

const char* message_name(const Message& message) { return kNames[message.index()]; }

std::vector<uint8_t> encode(const Message& message) {
  Writer w;
  w.put(kMagic[0]);
  w.put(kMagic[1]);
  w.put(kVersion);
  w.put(static_cast<uint8_t>(kTypes[message.index()]));
  std::visit(Encoder{w}, message);
  return w.take();
}

Message decode(const std::vector<uint8_t>& bytes, int sender) {
  Reader r(bytes, sender);
  const uint8_t magic0 = r.get<uint8_t>("magic"), magic1 = r.get<uint8_t>("magic");
  if (magic0 != kMagic[0] || magic1 != kMagic[1]) detail::Raiser() & r.fail() << "not a seed message (bad magic)";
  const uint16_t version = r.get<uint16_t>("version");
  if (version != kVersion) {
    detail::Raiser() & r.fail() << "wire version " << version << ", this seed speaks version " << kVersion
                                << "; run the same seed build on every rank";
  }
  const uint8_t type = r.get<uint8_t>("type");
  if (type < static_cast<uint8_t>(Type::kStart) || type > static_cast<uint8_t>(Type::kLesson)) {
    detail::Raiser() & r.fail() << "unknown message type " << int{type};
  }
  r.set_message(kNames[type - 1]);
  Message message = decode_body(static_cast<Type>(type), r);
  r.finish();
  return message;
}

}  // namespace seed::parallel::wire
