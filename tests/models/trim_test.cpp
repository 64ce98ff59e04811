// trim: whitespace goes from both ends and from nowhere else.
#include "models/base/trim.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace seed {
namespace {

TEST(Trim, DropsWhitespaceAtBothEndsAndKeepsItInside) {
  EXPECT_EQ(trim(" \t 7 + 3\r\n"), "7 + 3");
  EXPECT_EQ(trim("(1 2)"), "(1 2)");
  EXPECT_EQ(trim(" \n\t"), "");
  EXPECT_EQ(trim(""), "");
}

TEST(Trim, IsAViewIntoItsText) {
  const std::string text = "  answer  ";
  const std::string_view trimmed = trim(text);
  EXPECT_EQ(trimmed.data(), text.data() + 2);
  EXPECT_EQ(trimmed.size(), 6u);
}

}  // namespace
}  // namespace seed
