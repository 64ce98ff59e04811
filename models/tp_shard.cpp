#include "models/tp_shard.h"

#include <algorithm>

#include "models/base/error.h"

namespace seed::models {

TpShard TpShard::whole(const ModelConfig& c) { return of(c, 0, 1); }

TpShard TpShard::of(const ModelConfig& c, int rank, int size) {
  SEED_CHECK(size >= 1 && rank >= 0 && rank < size, kInvalidArgument)
      << "tensor-parallel rank " << rank << " is not in a group of " << size;
  const int64_t T = size;
  SEED_CHECK(c.num_attention_heads % T == 0, kInvalidArgument)
      << "num_attention_heads (" << c.num_attention_heads << ") is not divisible by the tp size " << T
      << "; choose a tp size that divides it";
  SEED_CHECK(c.num_key_value_heads % T == 0 || T % c.num_key_value_heads == 0, kInvalidArgument)
      << "num_key_value_heads (" << c.num_key_value_heads << ") neither divides nor is divisible by the tp size "
      << T << "; choose a tp size that divides it or is a multiple of it";
  SEED_CHECK(c.intermediate_size % T == 0, kInvalidArgument)
      << "intermediate_size (" << c.intermediate_size << ") is not divisible by the tp size " << T
      << "; choose a tp size that divides it";
  SEED_CHECK(c.draft_vocab_size == 0 || T == 1, kInvalidArgument)
      << "draft_vocab_size (" << c.draft_vocab_size << ") is set: an LM head over a part of the vocabulary "
      << "runs on whole models (a draft's), not split over a tp size of " << T;
  const int64_t stride = (c.vocab_size + T - 1) / T;
  SEED_CHECK(stride * (T - 1) < c.vocab_size, kInvalidArgument)
      << "vocab_size (" << c.vocab_size << ") is too small to give each of the tp size " << T
      << " ranks a row of the LM head";

  TpShard s;
  s.rank = rank;
  s.size = size;
  s.heads = c.num_attention_heads / T;
  s.head_begin = rank * s.heads;
  if (c.num_key_value_heads % T == 0) {
    s.kv_heads = c.num_key_value_heads / T;
    s.kv_head_begin = rank * s.kv_heads;
  } else {  // T / Hkv ranks share each kv head; a rank's query heads all read it
    s.kv_heads = 1;
    s.kv_head_begin = rank / (T / c.num_key_value_heads);
  }
  s.intermediate = c.intermediate_size / T;
  s.intermediate_begin = rank * s.intermediate;
  s.vocab_stride = stride;
  s.vocab_begin = rank * stride;
  s.vocab = std::min(stride, c.vocab_size - s.vocab_begin);
  return s;
}

ModelConfig TpShard::local_config(const ModelConfig& full) const {
  ModelConfig local = full;
  local.num_attention_heads = heads;
  local.num_key_value_heads = kv_heads;
  local.intermediate_size = intermediate;
  return local;
}

}  // namespace seed::models
