// The one rule for names that travel (host, agent id, NIC): what it refuses,
// and that a refusal quotes a hostile value only in part.
#include "common/base/names.h"

#include <gtest/gtest.h>

namespace hostmesh {
namespace {

TEST(names, PrintableAsciiUpToTheLimitIsAName) {
  EXPECT_FALSE(CheckName("h003"));
  EXPECT_FALSE(CheckName("gpu-node-17.rack3.example:agent@2"));
  EXPECT_FALSE(CheckName(std::string(kMaxNameBytes, 'a')));
}

TEST(names, EmptyLongSpacedControlAndNonAsciiAreRefused) {
  EXPECT_EQ(CheckName("").value_or(""), "must not be empty");
  EXPECT_EQ(CheckName(std::string(kMaxNameBytes + 1, 'a')).value_or("").find("must be at most 253"),
            0u);
  EXPECT_EQ(CheckName("h 003").value_or(""),
            "must be printable ASCII without spaces or control characters, got \"h 003\"");
  EXPECT_TRUE(CheckName("h\n003"));
  EXPECT_TRUE(CheckName("h\x7f"));
  EXPECT_TRUE(CheckName("h\xc3\xa9"));  // UTF-8 e-acute
  EXPECT_TRUE(CheckName("nic0", 3));
}

TEST(names, RefusalsQuoteAtMostSixtyFourCharactersWithControlsMasked) {
  const std::string why = CheckName(std::string(100'000, 'x') + "\n").value_or("");
  EXPECT_LT(why.size(), 200u);
  EXPECT_NE(why.find("...\""), std::string::npos) << why;
  EXPECT_NE(CheckName("a\nb c").value_or("").find("\"a?b c\""), std::string::npos);
}

}  // namespace
}  // namespace hostmesh
