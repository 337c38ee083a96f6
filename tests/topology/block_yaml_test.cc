#include "topology/block_yaml.h"

#include <gtest/gtest.h>

#include "tests/topology/test_fabrics.h"
#include "topology/inventory_loader.h"

namespace hostmesh::topology {
namespace {

TEST(BlockYaml, ReadsNestedBlocksWithPositions) {
  const auto doc = BlockYaml::Parse(
      "# comment\n"
      "a: 1\n"
      "list:\n"
      "  - name: x   # trailing comment\n"
      "    inner:\n"
      "      k: \"quoted # not a comment\"\n"
      "  - name: y\n"
      "empty: []\n"
      "none:\n");
  ASSERT_TRUE(doc);
  const auto list = doc->Child(doc->root(), "list");
  ASSERT_NE(list, BlockYaml::kNil);
  const auto second = doc->Item(list, 1);
  EXPECT_EQ(doc->node(doc->Child(second, "name")).text, "y");
  EXPECT_EQ(doc->node(doc->Child(second, "name")).line, 7);
  const auto k = doc->Child(doc->Child(doc->Item(list, 0), "inner"), "k");
  EXPECT_EQ(doc->node(k).text, "quoted # not a comment");
  EXPECT_TRUE(doc->node(k).quoted);
  EXPECT_EQ(doc->node(doc->Child(doc->root(), "empty")).kind, BlockYaml::Kind::kSequence);
  EXPECT_EQ(doc->node(doc->Child(doc->root(), "none")).kind, BlockYaml::Kind::kNull);
}

TEST(BlockYaml, LeavesEverythingElseToYamlCpp) {
  for (const char* text : {"a: [1, 2]\n", "a: 'x'\n", "---\na: 1\n", "a: &x 1\n", "a: |\n  t\n",
                           "a:\n\t- 1\n", "a: \"x\\ty\"\n", "- 1\n", "a: 1\n  b: 2\n"}) {
    EXPECT_FALSE(BlockYaml::Parse(text)) << text;
  }
}

// The fast reader and MapReader read the same inventory into the same data.
TEST(BlockYaml, SameInventoryAsYamlCpp) {
  const std::string text = testing::GeneratedText({.hosts = 4, .rails = 4, .spines = 4, .pods = 2});
  ASSERT_TRUE(BlockYaml::Parse(text));
  EXPECT_FALSE(BlockYaml::Parse("---\n" + text));  // forces yaml-cpp
  EXPECT_EQ(ParseInventory(text, "fast"), ParseInventory("---\n" + text, "yaml-cpp"));
}

}  // namespace
}  // namespace hostmesh::topology
