// AtomicFile: a reader finds a file's old bytes or all of the new ones.
#include "models/base/atomic_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/throws_error.h"

namespace seed {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("seed_atomic_" + std::to_string(::getpid()) + "_" + test->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }

  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesTheWholeTextAndNoTemporaryStays) {
  write_file_atomically(path("a.json"), "{\"x\": 1}\n");
  EXPECT_EQ(read(path("a.json")), "{\"x\": 1}\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, TheOldBytesStayUntilCommit) {
  write_file_atomically(path("f"), "old");
  AtomicFile file(path("f"));
  file.write("new ");
  file.write("bytes");
  EXPECT_EQ(read(path("f")), "old");
  file.commit();
  EXPECT_EQ(read(path("f")), "new bytes");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, WithoutCommitTheFileIsLeftAsItWas) {
  write_file_atomically(path("f"), "old");
  {
    AtomicFile file(path("f"));
    file.write("half of it");
  }
  EXPECT_EQ(read(path("f")), "old");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, AFolderThatIsNotThereIsAnIoErrorNamingTheFile) {
  const std::string missing = path("no/such/folder/f");
  EXPECT_TRUE(testing::throws_error([&] { write_file_atomically(missing, "x"); }, ErrorKind::kIo, {missing}));
}

}  // namespace
}  // namespace seed
