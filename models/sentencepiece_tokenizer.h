// SentencePiece behind the Tokenizer interface (private to models/:
// load_tokenizer is the public way in).
//
// Why a plugin: Debian's libsentencepiece carries its own copy of protobuf
// 3.14 and exports its symbols, while libtorch loads the system protobuf
// 3.21. Linked into one program, one library's calls land in the other's
// protobuf and the process crashes at start-up (or fails protobuf's version
// check, depending on link order). So the code that touches libsentencepiece
// is built as libseed_sentencepiece.so and opened with RTLD_LOCAL |
// RTLD_DEEPBIND: its protobuf stays private to it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/tokenizer.h"

// Entry points of libseed_sentencepiece.so, looked up by name. Both throw
// seed::Error like the functions they implement.
extern "C" {
// A new tokenizer for a tokenizer.model file; the caller owns it.
seed::models::Tokenizer* seed_sentencepiece_load(const char* model_path);
// train_sentencepiece(), see tokenizer.h.
void seed_sentencepiece_train(const std::vector<std::string>& sentences, int vocab_size, const char* model_path);
}

namespace seed::models {

// Loads a SentencePiece model file (tokenizer.model). Throws kNotFound if the
// file (or the plugin) is missing, kCorruption naming the file if
// libsentencepiece cannot parse it.
std::unique_ptr<Tokenizer> make_sentencepiece_tokenizer(const std::string& model_path);

}  // namespace seed::models
