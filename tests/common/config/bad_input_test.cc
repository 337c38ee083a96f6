// One bad input per row: each must yield exactly one issue, at the given key
// path, line and column, with a message containing the fragment. The
// instantiation is named "config" so `ctest -R config` selects it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/config/config_error.h"
#include "tests/common/config/test_config.h"

namespace hostmesh::config {
namespace {

struct BadInput {
  const char* name;
  const char* yaml;
  const char* path;
  int line;
  int column;
  const char* fragment;
};

const BadInput kBadInputs[] = {
    // Unknown keys, with and without a close match.
    {"unknown_key_suggests", "host: h1\nintervl: 5s\n", "intervl", 2, 1,
     "unknown key; did you mean \"interval\"?"},
    {"unknown_nested_key_suggests", "host: h1\nprobe:\n  timout: 1s\n", "probe.timout", 3, 3,
     "unknown key; did you mean \"timeout\"?"},
    {"unknown_key_far_from_any", "host: h1\nzzzzzz: 1\n", "zzzzzz", 2, 1, "unknown key"},
    {"unknown_key_in_list_item", "host: h1\nservers:\n  - name: a\n    ip: 10.0.0.1\n    nmae: b\n",
     "servers[0].nmae", 5, 5, "did you mean \"name\"?"},
    {"duplicate_key", "host: h1\ncount: 2\ncount: 3\n", "count", 3, 1,
     "duplicate key (first at line 2)"},
    // Wrong types.
    {"map_for_integer", "host: h1\ncount: {a: 1}\n", "count", 2, 8,
     "expected an integer, got a map"},
    {"list_for_string", "host: [a, b]\n", "host", 1, 7, "expected a non-empty string, got a list"},
    {"word_for_integer", "host: h1\ncount: three\n", "count", 2, 8,
     "expected an integer, got \"three\""},
    {"escapes_control_characters", "host: h1\ncount: \"1\\t2\"\n", "count", 2, 8,
     "expected an integer, got \"1\\t2\""},
    {"fraction_for_integer", "host: h1\ncount: 2.5\n", "count", 2, 8, "expected an integer"},
    {"word_for_number", "host: h1\nratio: half\n", "ratio", 2, 8,
     "expected a number, got \"half\""},
    {"yes_for_bool", "host: h1\nenabled: yes\n", "enabled", 2, 10,
     "expected true or false, got \"yes\""},
    {"list_for_map", "host: h1\nprobe: [1, 2]\n", "probe", 2, 8, "expected a map, got a list"},
    {"map_for_list", "host: h1\nservers: {a: 1}\n", "servers", 2, 10, "expected a list, got a map"},
    {"scalar_list_item_for_map", "host: h1\nservers:\n  - 5\n", "servers[0]", 3, 5,
     "expected a map, got \"5\""},
    {"map_in_scalar_list", "host: h1\ntags: [a, {b: 1}]\n", "tags[1]", 2, 11,
     "expected a non-empty string, got a map"},
    {"no_value", "host:\n", "host", 1, 1, "has no value; expected a non-empty string"},
    {"empty_string", "host: \"\"\n", "host", 1, 7, "expected a non-empty string, got \"\""},
    // Out of range.
    {"integer_above_range", "host: h1\ncount: 11\n", "count", 2, 8,
     "must be between 1 and 10, got \"11\""},
    {"integer_below_range", "host: h1\ncount: 0\n", "count", 2, 8,
     "must be between 1 and 10, got \"0\""},
    {"integer_beyond_type", "host: h1\nsmall: 256\n", "small", 2, 8,
     "must be between 0 and 255, got \"256\""},
    {"negative_for_unsigned", "host: h1\nsmall: -1\n", "small", 2, 8,
     "must be between 0 and 255, got \"-1\""},
    {"integer_beyond_int64", "host: h1\ncount: 99999999999999999999\n", "count", 2, 8,
     "must be between 1 and 10"},
    {"number_above_range", "host: h1\nratio: 1.5\n", "ratio", 2, 8,
     "must be between 0 and 1, got \"1.5\""},
    {"number_at_exclusive_bound", "host: h1\nprobe:\n  rate: 0\n", "probe.rate", 3, 9,
     "must be greater than 0 and at most 100, got \"0\""},
    {"duration_below_range", "host: h1\ninterval: 0ms\n", "interval", 2, 11,
     "must be between 1ms and 60s, got \"0ms\""},
    {"duration_above_range", "host: h1\ninterval: 2m\n", "interval", 2, 11,
     "must be between 1ms and 60s, got \"2m\""},
    {"size_below_range", "host: h1\nbudget: 512KiB\n", "budget", 2, 9,
     "must be between 1MiB and 16GiB, got \"512KiB\""},
    {"port_out_of_range", "host: h1\nservers:\n  - {name: a, ip: 10.0.0.1, port: 0}\n",
     "servers[0].port", 3, 35, "must be between 1 and 65535, got \"0\""},
    // Bad enum values list the allowed ones.
    {"enum_typo", "host: h1\nmode: fsat\n", "mode", 2, 7,
     "must be one of \"fast\", \"slow\", got \"fsat\" (did you mean \"fast\"?)"},
    {"enum_unknown", "host: h1\nmode: turbo\n", "mode", 2, 7,
     "must be one of \"fast\", \"slow\", got \"turbo\""},
    // Bad notations.
    {"duration_without_unit", "host: h1\ninterval: 100\n", "interval", 2, 11,
     "expected a duration such as 250us, 100ms, 1.5s, 5m or 1h, got \"100\""},
    {"duration_unknown_unit", "host: h1\ninterval: 1d\n", "interval", 2, 11, "expected a duration"},
    {"size_unknown_unit", "host: h1\nbudget: 64XB\n", "budget", 2, 9,
     "expected a size such as 1000, 512KiB, 64MiB or 1GB, got \"64XB\""},
    {"endpoint_without_port", "host: h1\ntarget: 10.0.0.1\n", "target", 2, 9, "expected host:port"},
    {"endpoint_bad_port", "host: h1\ntarget: 10.0.0.1:99999\n", "target", 2, 9,
     "expected host:port"},
    {"endpoint_unbracketed_v6", "host: h1\ntarget: fd00::1:80\n", "target", 2, 9,
     "expected host:port"},
    {"bad_ipv4", "host: h1\nservers:\n  - name: a\n    ip: 10.0.0.256\n", "servers[0].ip", 4, 9,
     "expected an IPv4 or IPv6 address, got \"10.0.0.256\""},
    {"bad_ipv6", "host: h1\nservers:\n  - name: a\n    ip: fd00:::1\n", "servers[0].ip", 4, 9,
     "expected an IPv4 or IPv6 address"},
    // Missing required keys, at the map that lacks them.
    {"missing_required", "count: 2\n", "host", 1, 1, "required key is missing"},
    {"missing_required_in_item",
     "host: h1\nservers:\n  - {name: a, ip: 10.0.0.1}\n  - ip: 10.0.0.2\n", "servers[1].name", 4, 5,
     "required key is missing"},
    // YAML syntax errors carry the parser's line and no key path.
    {"syntax_bad_indent", "host: h1\n  count: 2\n", "", 2, 8, "invalid YAML: illegal map value"},
    {"syntax_unclosed_flow", "host: h1\ntags: [a, b\ncount: 2\n", "", 3, 6, "invalid YAML"},
    {"syntax_tab_indent", "host: h1\nprobe:\n\ttimeout: 1s\n", "", 3, 9, "invalid YAML"},
    {"top_level_list", "- host\n- h1\n", "", 1, 1, "the top level must be a map of keys"},
    {"two_documents", "host: h1\n---\nhost: h2\n", "", 3, 1, "only one YAML document is allowed"},
};

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, NamesKeyLineAndProblem) {
  const BadInput& bad = GetParam();
  try {
    fixture::ParseTestConfig(bad.yaml);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    const ConfigIssue& issue = e.issues()[0];
    EXPECT_EQ(issue.source, "test.yaml");
    EXPECT_EQ(issue.path, bad.path) << e.what();
    EXPECT_EQ(issue.line, bad.line) << e.what();
    EXPECT_EQ(issue.column, bad.column) << e.what();
    EXPECT_THAT(issue.message, ::testing::HasSubstr(bad.fragment)) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(config, BadInputTest, ::testing::ValuesIn(kBadInputs),
                         [](const ::testing::TestParamInfo<BadInput>& row) {
                           return std::string(row.param.name);
                         });

}  // namespace
}  // namespace hostmesh::config
