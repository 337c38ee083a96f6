// The document MapReader reads: yaml-cpp's events kept with their marks.
#include "common/config/yaml_document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/exceptions.h>

#include <string>
#include <vector>

namespace hostmesh::config {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Keys(const YamlNode& map) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : map.Entries()) keys.emplace_back(key.Scalar());
  return keys;
}

TEST(YamlDocument, BlockAndFlowStyleWithMarks) {
  const auto docs = YamlDocument::ParseAll(
      "host: h1\n"
      "nics:\n"
      "  - {name: nic0, rail: 0}\n"
      "  - name: \"nic1\"\n"
      "    rail: 1\n"
      "empty:\n"
      "tags: [a, 'b c']\n");
  ASSERT_EQ(docs.size(), 1u);
  const YamlNode root = docs[0]->root();
  ASSERT_TRUE(root.IsMap());
  EXPECT_THAT(Keys(root), ElementsAre("host", "nics", "empty", "tags"));
  const auto entries = root.Entries();
  EXPECT_EQ(entries[0].second.Scalar(), "h1");
  EXPECT_EQ(entries[0].second.Mark().line, 0);
  EXPECT_EQ(entries[0].second.Mark().column, 6);
  const std::vector<YamlNode> nics = entries[1].second.Items();
  ASSERT_EQ(nics.size(), 2u);
  EXPECT_THAT(Keys(nics[0]), ElementsAre("name", "rail"));
  EXPECT_EQ(nics[1].Entries()[0].second.Scalar(), "nic1");
  EXPECT_EQ(nics[1].Entries()[1].second.Mark().line, 4);
  EXPECT_TRUE(entries[2].second.IsNull());
  const std::vector<YamlNode> tags = entries[3].second.Items();
  ASSERT_EQ(tags.size(), 2u);
  EXPECT_EQ(tags[1].Scalar(), "b c");
}

TEST(YamlDocument, AliasesStandForTheirAnchor) {
  const auto docs = YamlDocument::ParseAll(
      "base: &b {rail: 3}\n"
      "copy: *b\n"
      "name: &n nic0\n"
      "again: *n\n");
  const auto entries = docs.at(0)->root().Entries();
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_TRUE(entries[1].second.IsMap());
  EXPECT_EQ(entries[1].second.Entries().at(0).second.Scalar(), "3");
  EXPECT_EQ(entries[3].second.Scalar(), "nic0");
}

TEST(YamlDocument, DocumentsEmptyAndSeveral) {
  EXPECT_TRUE(YamlDocument::ParseAll("").empty());
  EXPECT_TRUE(YamlDocument::ParseAll("# only a comment\n").empty());
  const auto only_marker = YamlDocument::ParseAll("---\n");
  ASSERT_EQ(only_marker.size(), 1u);
  EXPECT_TRUE(only_marker[0]->root().IsNull());
  const auto two = YamlDocument::ParseAll("a: 1\n---\nb: 2\n");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1]->root().Mark().line, 2);
  EXPECT_TRUE(YamlDocument::EmptyMap().IsMap());
  EXPECT_TRUE(YamlDocument::EmptyMap().Entries().empty());
}

TEST(YamlDocument, SyntaxErrorsAndUnknownAliasesThrowWithTheirMark) {
  try {
    YamlDocument::ParseAll("a: [1, 2\nb: 3\n");
    FAIL() << "accepted";
  } catch (const YAML::ParserException& e) {
    EXPECT_GE(e.mark.line, 1);
  }
  EXPECT_THROW(YamlDocument::ParseAll("a: *nowhere\n"), YAML::ParserException);
}

// Found by fuzz/analyzer_config_fuzz.cc: yaml-cpp 0.7 returns a null document
// for a token that cannot start a node without consuming it, forever, so
// ParseAll never returned (and grew without bound) on a stray comma.
TEST(YamlDocument, AStrayTokenIsASyntaxErrorNotAnEndlessStreamOfDocuments) {
  for (const char* text : {",", "a: 1\n]\n", "}\n", "- 1\n,\n"}) {
    try {
      const auto docs = YamlDocument::ParseAll(text);
      FAIL() << "accepted " << text << " as " << docs.size() << " documents";
    } catch (const YAML::ParserException& e) {
      EXPECT_GE(e.mark.line, 0) << text;
    }
  }
  // Several empty documents still start at places of their own.
  EXPECT_EQ(YamlDocument::ParseAll("---\n---\n---\n").size(), 3u);
}

}  // namespace
}  // namespace hostmesh::config
