// Tests for the safetensors reader/writer and Checkpoint: round trips of every
// dtype, sharded folders, and every corruption the reader must name rather
// than crash on (hand-made files, every truncation, byte flips).
#include "models/safetensors.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "models/base/error.h"
#include "tests/throws_error.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;

using seed::testing::throws_error;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// A hand-made safetensors file: the 8-byte length (the true one unless
// `claimed_length` is given), `header`, then `data_bytes` bytes of data.
void write_raw(const std::string& path, const std::string& header, size_t data_bytes,
               std::optional<uint64_t> claimed_length = std::nullopt) {
  const uint64_t length = claimed_length.value_or(header.size());
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(length >> (8 * i)));
  bytes += header;
  bytes.append(data_bytes, '\x5a');
  write_bytes(path, bytes);
}

struct DTypeCase {
  torch::Dtype dtype;
  const char* name;  // as written in the file
  int64_t low = 0;   // integer values are drawn from [low, high)
  int64_t high = 0;
};

// A [3, 5] tensor with values spread over the dtype's range.
at::Tensor sample(const DTypeCase& c) {
  torch::manual_seed(7);
  if (torch::isFloatingType(c.dtype)) {
    return (torch::randn({3, 5}, torch::kFloat64) * 1000).to(c.dtype);
  }
  return torch::randint(c.low, c.high, {3, 5}, torch::kInt64).to(c.dtype);
}

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("seed_test_" + std::to_string(::getpid()) + "_" +
                                        test->test_suite_name() + "_" + test->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Six 64-byte tensors: 384 bytes, three shards at 128 bytes per shard.
  static NamedTensors six_tensors() {
    NamedTensors tensors;
    for (int i = 0; i < 6; ++i) {
      tensors.emplace_back("layers." + std::to_string(i) + ".weight",
                           torch::arange(16, torch::kFloat32).reshape({4, 4}) + i);
    }
    return tensors;
  }

  fs::path dir_;
};

using CheckpointTest = SafetensorsTest;

TEST_F(SafetensorsTest, RoundTripsEveryDtypeExactly) {
  constexpr int64_t kI64Bound = int64_t{1} << 62;
  constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
  constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
  const std::vector<DTypeCase> dtypes = {
      {torch::kFloat64, "F64"},
      {torch::kFloat32, "F32"},
      {torch::kFloat16, "F16"},
      {torch::kBFloat16, "BF16"},
      {torch::kInt64, "I64", -kI64Bound, kI64Bound},
      {torch::kInt32, "I32", kI32Min, kI32Max},
      {torch::kInt16, "I16", -32768, 32768},
      {torch::kInt8, "I8", -128, 128},
      {torch::kUInt8, "U8", 0, 256},
      {torch::kBool, "BOOL", 0, 2},
  };
  NamedTensors tensors;
  for (const DTypeCase& c : dtypes) tensors.emplace_back(c.name, sample(c));
  write_safetensors(path("all.safetensors"), tensors);

  const SafetensorsFile file = SafetensorsFile::open(path("all.safetensors"));
  ASSERT_EQ(file.tensors().size(), dtypes.size());
  for (const auto& [name, expected] : tensors) {
    SCOPED_TRACE(name);
    EXPECT_STREQ(dtype_name(file.info(name).dtype), name.c_str());
    const at::Tensor got = file.read(name, {3, 5});
    EXPECT_EQ(got.scalar_type(), expected.scalar_type());
    EXPECT_TRUE(torch::equal(got, expected));
    const at::Tensor borrowed = file.borrow(name, {3, 5});
    EXPECT_EQ(borrowed.scalar_type(), expected.scalar_type());
    EXPECT_TRUE(torch::equal(borrowed, expected));
    // The file's own bytes, not a copy: every borrow of a tensor is the same memory.
    EXPECT_EQ(file.borrow(name, {3, 5}).data_ptr(), borrowed.data_ptr());
    EXPECT_NE(got.data_ptr(), borrowed.data_ptr());
  }
}

// The format does not align tensors, so one can start at an odd byte: it
// is then copied to memory aligned for its dtype, with the same values.
TEST_F(SafetensorsTest, BorrowingAMisalignedTensorCopiesIt) {
  const std::string header = R"({"odd":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  ASSERT_EQ((8 + header.size()) % 4, 1u);
  write_raw(path("odd.safetensors"), header, 16);
  const SafetensorsFile file = SafetensorsFile::open(path("odd.safetensors"));
  const at::Tensor borrowed = file.borrow("odd", {4});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(borrowed.data_ptr()) % sizeof(float), 0u);
  EXPECT_NE(file.borrow("odd", {4}).data_ptr(), borrowed.data_ptr());
  EXPECT_TRUE(torch::equal(borrowed, file.read("odd", {4})));
  float expected;
  const uint32_t bits = 0x5a5a5a5a;
  std::memcpy(&expected, &bits, sizeof expected);
  EXPECT_EQ(borrowed[3].item<float>(), expected);
}

TEST_F(SafetensorsTest, RoundTripsScalarsEmptyAndNonContiguousTensors) {
  const at::Tensor matrix = torch::arange(24, torch::kFloat32).reshape({4, 6});
  const NamedTensors tensors = {{"scalar", torch::tensor(3.25)},
                                {"empty", torch::zeros({0, 7}, torch::kInt32)},
                                {"transposed", matrix.t()},
                                {"strided", matrix.index({torch::indexing::Slice(0, 4, 2)})}};
  write_safetensors(path("odd.safetensors"), tensors);

  const SafetensorsFile file = SafetensorsFile::open(path("odd.safetensors"));
  for (const auto& [name, expected] : tensors) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(torch::equal(file.read(name), expected));
  }
  EXPECT_EQ(file.info("scalar").shape, std::vector<int64_t>{});
  EXPECT_EQ(file.info("empty").shape, (std::vector<int64_t>{0, 7}));
  EXPECT_EQ(file.info("empty").end, file.info("empty").begin);
}

// Hugging Face's files carry {"format": "pt"}; the tensors read as without it.
TEST_F(SafetensorsTest, StringMetadataIsAccepted) {
  write_raw(path("meta.safetensors"),
            R"({"__metadata__": {"format": "pt"}, "w": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}})", 2);
  const SafetensorsFile file = SafetensorsFile::open(path("meta.safetensors"));
  ASSERT_EQ(file.tensors().size(), 1u);
  EXPECT_TRUE(torch::equal(file.read("w", {2}), torch::full({2}, 0x5a, torch::kUInt8)));
}

TEST_F(SafetensorsTest, ListsTensorsInFileOrderAndAlignsData) {
  write_safetensors(path("order.safetensors"), {{"zeta", torch::ones({3}, torch::kInt8)},
                                                {"alpha", torch::ones({2}, torch::kFloat64)}});
  const SafetensorsFile file = SafetensorsFile::open(path("order.safetensors"));
  ASSERT_EQ(file.tensors().size(), 2u);
  EXPECT_EQ(file.tensors()[0].name, "zeta");
  EXPECT_EQ(file.tensors()[1].name, "alpha");
  EXPECT_EQ(file.tensors()[1].begin, 3u);
  EXPECT_TRUE(file.contains("alpha"));
  EXPECT_FALSE(file.contains("beta"));

  const std::string bytes = read_bytes(path("order.safetensors"));
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | static_cast<uint8_t>(bytes[i]);
  EXPECT_EQ((8 + header_size) % 8, 0u);
}

TEST_F(SafetensorsTest, WriterRejectsDuplicateNamesAndUnsupportedDtypes) {
  EXPECT_TRUE(throws_error(
      [&] {
        write_safetensors(path("dup.safetensors"),
                          {{"w", torch::ones({1})}, {"w", torch::ones({1})}});
      },
      ErrorKind::kInvalidArgument, {"dup.safetensors", "'w'"}));
  EXPECT_TRUE(throws_error(
      [&] {
        write_safetensors(path("cplx.safetensors"),
                          {{"z", torch::ones({1}, torch::kComplexFloat)}});
      },
      ErrorKind::kInvalidArgument, {"cplx.safetensors", "'z'"}));
  // Neither file nor temporary is left behind.
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_NE(entry.path().filename().string().rfind("cplx.safetensors", 0), 0u) << entry.path();
  }
}

TEST_F(SafetensorsTest, MissingFileIsNotFound) {
  EXPECT_TRUE(throws_error([&] { SafetensorsFile::open(path("absent.safetensors")); },
                           ErrorKind::kNotFound, {"absent.safetensors"}));
}

TEST_F(SafetensorsTest, FileShorterThanLengthFieldIsCorruption) {
  write_bytes(path("tiny.safetensors"), "abc");
  EXPECT_TRUE(throws_error([&] { SafetensorsFile::open(path("tiny.safetensors")); },
                           ErrorKind::kCorruption, {"tiny.safetensors", "too short"}));
}

TEST_F(SafetensorsTest, TruncatedDataIsCorruptionNamingTensor) {
  write_safetensors(path("cut.safetensors"),
                    {{"first", torch::ones({4})}, {"last", torch::ones({4})}});
  fs::resize_file(path("cut.safetensors"), fs::file_size(path("cut.safetensors")) - 3);
  EXPECT_TRUE(throws_error([&] { SafetensorsFile::open(path("cut.safetensors")); },
                           ErrorKind::kCorruption,
                           {"cut.safetensors", "'last'", "outside the buffer"}));
}

TEST_F(SafetensorsTest, HeaderLengthPastEndIsCorruption) {
  for (const uint64_t claimed : {uint64_t{1000}, std::numeric_limits<uint64_t>::max()}) {
    SCOPED_TRACE(claimed);
    write_raw(path("long.safetensors"), "{}", 0, claimed);
    EXPECT_TRUE(throws_error([&] { SafetensorsFile::open(path("long.safetensors")); },
                             ErrorKind::kCorruption,
                             {"long.safetensors", "header length " + std::to_string(claimed) +
                                                      " runs past the end of the file (size 10)"}));
  }
}

TEST_F(SafetensorsTest, HeaderThatIsNotAJsonObjectIsCorruption) {
  for (const std::string header : {"{\"w\": ", "[1, 2]", "\"text\""}) {
    SCOPED_TRACE(header);
    write_raw(path("bad.safetensors"), header, 0);
    EXPECT_TRUE(throws_error([&] { SafetensorsFile::open(path("bad.safetensors")); },
                             ErrorKind::kCorruption, {"bad.safetensors", "header"}));
  }
}

TEST_F(SafetensorsTest, DeeplyNestedHeaderIsRejectedWithoutCrashing) {
  constexpr size_t kDepth = 100000;
  write_raw(path("deep.safetensors"), std::string(kDepth, '[') + std::string(kDepth, ']'), 0);
  EXPECT_TRUE(throws_error([&] { SafetensorsFile::open(path("deep.safetensors")); },
                           ErrorKind::kCorruption, {"deep.safetensors", "object"}));
}

TEST_F(SafetensorsTest, DataOffsetsOutsideBufferAreCorruption) {
  write_raw(path("off.safetensors"),
            R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})", 16);
  EXPECT_TRUE(throws_error([&] { SafetensorsFile::open(path("off.safetensors")); },
                           ErrorKind::kCorruption,
                           {"off.safetensors", "'w'", "outside the buffer"}));
}

TEST_F(SafetensorsTest, ByteCountNotMatchingDtypeAndShapeIsCorruption) {
  write_raw(path("size.safetensors"),
            R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 12]}})", 24);
  EXPECT_TRUE(throws_error([&] { SafetensorsFile::open(path("size.safetensors")); },
                           ErrorKind::kCorruption,
                           {"size.safetensors", "'w'",
                            "shape [2, 3] dtype F32 needs 24 bytes but data_offsets span 12"}));
}

TEST_F(SafetensorsTest, UnsupportedDtypeIsCorruption) {
  write_raw(path("dtype.safetensors"),
            R"({"w": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}})", 2);
  EXPECT_TRUE(throws_error([&] { SafetensorsFile::open(path("dtype.safetensors")); },
                           ErrorKind::kCorruption,
                           {"dtype.safetensors", "unsupported dtype 'F8_E4M3' for tensor w"}));
}

TEST_F(SafetensorsTest, OverlappingTensorsAreCorruption) {
  write_raw(path("overlap.safetensors"),
            R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                "b": {"dtype": "F32", "shape": [2], "data_offsets": [12, 20]}})",
            20);
  EXPECT_TRUE(throws_error(
      [&] { SafetensorsFile::open(path("overlap.safetensors")); }, ErrorKind::kCorruption,
      {"overlap.safetensors", "tensors 'a' [0, 16) and 'b' [12, 20) overlap"}));
}

TEST_F(SafetensorsTest, MalformedHeaderEntriesAreCorruption) {
  const std::vector<std::string> entries = {
      R"("w": 5)",
      R"("w": {"shape": [1], "data_offsets": [0, 4]})",
      R"("w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]})",
      R"("w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]})",
      R"("w": {"dtype": "F32", "shape": "1", "data_offsets": [0, 4]})",
      R"("w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]})",
      R"("w": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]})",
      R"("w": {"dtype": "F32", "shape": [1], "data_offsets": [0.0, 4]})",
      R"("w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]})",
      R"("w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 1e30]})",
      R"("w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 99999999999999999999999]})",
      R"("w": {"dtype": "F32", "shape": [9223372036854775808], "data_offsets": [0, 4]})",
      R"("w": {"dtype": "F64", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]})",
      R"("w": {"dtype": "I8", "shape": [3037000500, 3037000500], "data_offsets": [0, 4]})",
  };
  for (const std::string& entry : entries) {
    SCOPED_TRACE(entry);
    write_raw(path("entry.safetensors"), "{" + entry + "}", 4);
    EXPECT_TRUE(throws_error([&] { SafetensorsFile::open(path("entry.safetensors")); },
                             ErrorKind::kCorruption, {"entry.safetensors", "'w'"}));
  }
}

TEST_F(SafetensorsTest, NonStringMetadataIsCorruption) {
  write_raw(path("meta.safetensors"), R"({"__metadata__": {"step": 5}})", 0);
  EXPECT_TRUE(throws_error([&] { SafetensorsFile::open(path("meta.safetensors")); },
                           ErrorKind::kCorruption, {"meta.safetensors", "'step'"}));
}

TEST_F(SafetensorsTest, ShapeMismatchOnReadNamesTensorAndShapes) {
  write_safetensors(path("shape.safetensors"), {{"embed", torch::zeros({8, 4})}});
  const SafetensorsFile file = SafetensorsFile::open(path("shape.safetensors"));
  EXPECT_TRUE(throws_error([&] { file.read("embed", {4, 8}); }, ErrorKind::kCorruption,
                           {"shape.safetensors", "'embed'", "[8, 4]", "[4, 8]"}));
  EXPECT_TRUE(throws_error([&] { file.borrow("embed", {4, 8}); }, ErrorKind::kCorruption,
                           {"shape.safetensors", "'embed'", "[8, 4]", "[4, 8]"}));
  EXPECT_TRUE(throws_error([&] { file.read("absent"); }, ErrorKind::kNotFound,
                           {"shape.safetensors", "'absent'"}));
}

// Every truncation of a valid file must be refused, and every single-byte
// change must either be refused as corruption or still read in bounds.
TEST_F(SafetensorsTest, EveryTruncationAndByteFlipIsRejectedOrReadable) {
  write_safetensors(path("good.safetensors"),
                    {{"a", torch::arange(6, torch::kInt16)}, {"b", torch::ones({2, 2})}});
  const std::string good = read_bytes(path("good.safetensors"));
  const std::string fuzzed = path("fuzzed.safetensors");
  for (size_t length = 0; length < good.size(); ++length) {
    write_bytes(fuzzed, good.substr(0, length));
    EXPECT_TRUE(
        throws_error([&] { SafetensorsFile::open(fuzzed); }, ErrorKind::kCorruption, {fuzzed}))
        << "length " << length;
  }
  for (size_t position = 0; position < good.size(); ++position) {
    for (const char byte : {'\x00', '\xff', '"', '9', '-', ']', '}', ','}) {
      std::string bytes = good;
      bytes[position] = byte;
      write_bytes(fuzzed, bytes);
      try {
        const SafetensorsFile file = SafetensorsFile::open(fuzzed);
        for (const TensorInfo& info : file.tensors()) file.read(info.name);
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kCorruption) << "position " << position << ": " << e.what();
      }
    }
  }
}

TEST_F(CheckpointTest, SingleFileRoundTrips) {
  const NamedTensors tensors = six_tensors();
  write_checkpoint(dir_.string(), tensors);
  EXPECT_TRUE(fs::exists(dir_ / "model.safetensors"));
  EXPECT_FALSE(fs::exists(dir_ / "model.safetensors.index.json"));
  const Checkpoint checkpoint = Checkpoint::open(dir_.string());
  for (const auto& [name, expected] : tensors) {
    EXPECT_TRUE(torch::equal(checkpoint.read(name, {4, 4}), expected)) << name;
  }
}

TEST_F(CheckpointTest, ShardedRoundTripsAcrossThreeShards) {
  const NamedTensors tensors = six_tensors();
  write_checkpoint(dir_.string(), tensors, /*max_shard_bytes=*/128);
  for (const char* shard : {"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                            "model-00003-of-00003.safetensors"}) {
    EXPECT_TRUE(fs::exists(dir_ / shard)) << shard;
  }
  EXPECT_FALSE(fs::exists(dir_ / "model.safetensors"));
  const nlohmann::json index =
      nlohmann::json::parse(read_bytes(path("model.safetensors.index.json")));
  EXPECT_EQ(index["metadata"]["total_size"], 384);
  EXPECT_EQ(index["weight_map"]["layers.5.weight"], "model-00003-of-00003.safetensors");

  const Checkpoint checkpoint = Checkpoint::open(dir_.string());
  for (const auto& [name, expected] : tensors) {
    EXPECT_TRUE(torch::equal(checkpoint.read(name, {4, 4}), expected)) << name;
    EXPECT_TRUE(torch::equal(checkpoint.borrow(name, {4, 4}), expected)) << name;
  }
}

TEST_F(CheckpointTest, RewritingAsOneFileRemovesTheStaleIndex) {
  write_checkpoint(dir_.string(), six_tensors(), /*max_shard_bytes=*/128);
  const NamedTensors single = {{"only", torch::ones({3})}};
  write_checkpoint(dir_.string(), single);
  EXPECT_FALSE(fs::exists(dir_ / "model.safetensors.index.json"));
  const Checkpoint checkpoint = Checkpoint::open(dir_.string());
  EXPECT_TRUE(torch::equal(checkpoint.read("only", {3}), torch::ones({3})));
  EXPECT_TRUE(throws_error([&] { checkpoint.read("layers.0.weight", {4, 4}); }, ErrorKind::kNotFound,
                           {"'layers.0.weight'"}));
}

TEST_F(CheckpointTest, MissingTensorIsNotFound) {
  write_checkpoint(dir_.string(), six_tensors());
  const Checkpoint checkpoint = Checkpoint::open(dir_.string());
  EXPECT_TRUE(throws_error([&] { checkpoint.read("lm_head.weight", {4, 4}); }, ErrorKind::kNotFound,
                           {dir_.string(), "'lm_head.weight'"}));
}

TEST_F(CheckpointTest, ShardMissingFromDiskIsNotFound) {
  write_checkpoint(dir_.string(), six_tensors(), /*max_shard_bytes=*/128);
  fs::remove(dir_ / "model-00002-of-00003.safetensors");
  EXPECT_TRUE(throws_error([&] { Checkpoint::open(dir_.string()); }, ErrorKind::kNotFound,
                           {"model.safetensors.index.json", "model-00002-of-00003.safetensors",
                            "layers.2.weight"}));
}

TEST_F(CheckpointTest, IndexNamingTensorNotInItsShardIsCorruption) {
  write_checkpoint(dir_.string(), six_tensors(), /*max_shard_bytes=*/128);
  nlohmann::json index = nlohmann::json::parse(read_bytes(path("model.safetensors.index.json")));
  index["weight_map"]["ghost.weight"] = "model-00001-of-00003.safetensors";
  write_bytes(path("model.safetensors.index.json"), index.dump());
  EXPECT_TRUE(throws_error([&] { Checkpoint::open(dir_.string()); }, ErrorKind::kCorruption,
                           {"model.safetensors.index.json", "'ghost.weight'",
                            "model-00001-of-00003.safetensors"}));
}

TEST_F(CheckpointTest, MalformedIndexIsCorruption) {
  for (const std::string text : {"{\"weight_map\": ", "{\"metadata\": {}}",
                                 "{\"weight_map\": {\"w\": \"../w.safetensors\"}}"}) {
    SCOPED_TRACE(text);
    write_bytes(path("model.safetensors.index.json"), text);
    EXPECT_TRUE(throws_error([&] { Checkpoint::open(dir_.string()); }, ErrorKind::kCorruption,
                             {"model.safetensors.index.json"}));
  }
}

TEST_F(CheckpointTest, FolderWithoutWeightsIsNotFound) {
  EXPECT_TRUE(throws_error([&] { Checkpoint::open(dir_.string()); }, ErrorKind::kNotFound,
                           {"no weights in " + dir_.string(),
                            "expected model.safetensors or model.safetensors.index.json"}));
  EXPECT_TRUE(throws_error([&] { Checkpoint::open(path("absent")); }, ErrorKind::kNotFound,
                           {path("absent")}));
}

}  // namespace
}  // namespace seed::models
