// Rational: normalisation, exact arithmetic, and failures reported as values.
#include "tasks/rational.h"

#include <cstdint>
#include <gtest/gtest.h>

#include <limits>

#include "models/base/error.h"

namespace seed::tasks {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(RationalTest, NormalisesSignAndCommonFactors) {
  const Rational r = Rational::of(6, -4);
  EXPECT_EQ(r.num(), -3);
  EXPECT_EQ(r.den(), 2);
  EXPECT_EQ(Rational::of(0, -7), Rational(0));
  EXPECT_EQ(Rational::of(0, -7).den(), 1);
  EXPECT_EQ(Rational::of(-8, -2), Rational(4));
  EXPECT_TRUE(Rational::of(8, 2).is_integer());
}

TEST(RationalTest, OfRejectsZeroDenominatorWithInvalidArgument) {
  try {
    Rational::of(1, 0);
    FAIL() << "expected seed::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
}

TEST(RationalTest, PrintsIntegersPlainAndFractionsAsPOverQ) {
  EXPECT_EQ(Rational(24).to_string(), "24");
  EXPECT_EQ(Rational(-3).to_string(), "-3");
  EXPECT_EQ(Rational::of(8, 3).to_string(), "8/3");
  EXPECT_EQ(Rational::of(1, -2).to_string(), "-1/2");
}

TEST(RationalTest, ParsesWhatItPrintsAndRejectsGarbage) {
  EXPECT_EQ(Rational::parse("8/3"), Rational::of(8, 3));
  EXPECT_EQ(Rational::parse("-1/2"), Rational::of(-1, 2));
  EXPECT_EQ(Rational::parse("6/2"), Rational(3));
  EXPECT_EQ(Rational::parse("13"), Rational(13));
  for (const char* bad : {"", "-", "1/", "/2", "1/0", "1.5", " 1", "1 ", "a", "1/-2", "--1",
                          "99999999999999999999"}) {
    EXPECT_FALSE(Rational::parse(bad).has_value()) << bad;
  }
}

TEST(RationalTest, ArithmeticIsExact) {
  const Rational third = Rational::of(1, 3);
  EXPECT_EQ(add(third, third).value, Rational::of(2, 3));
  EXPECT_EQ(sub(Rational(3), Rational::of(8, 3)).value, third);
  // 8 / (3 - 8/3) = 24: the classic puzzle floats get wrong.
  EXPECT_EQ(div(Rational(8), sub(Rational(3), Rational::of(8, 3)).value).value, Rational(24));
  EXPECT_EQ(mul(Rational::of(-2, 3), Rational::of(9, 4)).value, Rational::of(-3, 2));
}

TEST(RationalTest, DivisionByZeroIsReportedAsAValue) {
  const RationalResult r = div(Rational(5), Rational(0));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status, ArithmeticStatus::kDivisionByZero);
}

TEST(RationalTest, OverflowIsReportedAsAValue) {
  EXPECT_EQ(mul(Rational(kMax), Rational(2)).status, ArithmeticStatus::kOverflow);
  EXPECT_EQ(add(Rational(kMax), Rational(1)).status, ArithmeticStatus::kOverflow);
  EXPECT_EQ(sub(Rational(-kMax), Rational(2)).status, ArithmeticStatus::kOverflow);
  EXPECT_EQ(div(Rational::of(1, kMax), Rational(kMax)).status, ArithmeticStatus::kOverflow);
  // Large operands whose exact result fits are fine: (max * 2) / 2.
  EXPECT_EQ(mul(Rational(kMax), Rational::of(2, 2)).value, Rational(kMax));
}

TEST(RationalTest, ComparesExactlyWithoutOverflow) {
  EXPECT_LT(Rational::of(1, 3), Rational::of(1, 2));
  EXPECT_LT(Rational(-1), Rational::of(-1, 2));
  EXPECT_LT(Rational::of(kMax - 1, kMax), Rational(1));
  EXPECT_GT(Rational::of(kMax, kMax - 1), Rational(1));
  EXPECT_LE(Rational(2), Rational(2));
}

}  // namespace
}  // namespace seed::tasks
