// Suite names start with "config" so `ctest -R config` selects them.
#include "common/config/value_parsers.h"

#include <gtest/gtest.h>

#include "common/config/spelling.h"

namespace hostmesh::config {
namespace {

using namespace std::chrono_literals;

TEST(config_values, Durations) {
  EXPECT_EQ(ParseDuration("100ms"), 100ms);
  EXPECT_EQ(ParseDuration("1.5s"), 1500ms);
  EXPECT_EQ(ParseDuration("20s"), 20s);
  EXPECT_EQ(ParseDuration("5m"), 5min);
  EXPECT_EQ(ParseDuration("1h"), 1h);
  EXPECT_EQ(ParseDuration("250us"), 250us);
  EXPECT_EQ(ParseDuration("250\xC2\xB5s"), 250us);
  EXPECT_EQ(ParseDuration("7ns"), 7ns);
  EXPECT_EQ(ParseDuration("1m30s"), 90s);
  EXPECT_EQ(ParseDuration("0.000000001s"), 1ns);
  EXPECT_EQ(ParseDuration(".5s"), 500ms);
  EXPECT_EQ(ParseDuration("1.25h"), 75min);
  EXPECT_EQ(ParseDuration("0"), 0ns);
  EXPECT_EQ(ParseDuration("0ms"), 0ns);
}

TEST(config_values, BadDurations) {
  for (const char* bad : {"", "100", "ms", "1.5", "-1s", "+1s", "1 s", "1sec", "1d", "1.s5",
                          "1e3ms", "99999999999h", "1s ", ".s"}) {
    EXPECT_FALSE(ParseDuration(bad).has_value()) << '"' << bad << '"';
  }
}

TEST(config_values, FormatsDurationsExactly) {
  EXPECT_EQ(FormatDuration(0ns), "0s");
  EXPECT_EQ(FormatDuration(1ms), "1ms");
  EXPECT_EQ(FormatDuration(60s), "60s");
  EXPECT_EQ(FormatDuration(1500ms), "1500ms");
  EXPECT_EQ(FormatDuration(5min), "5m");
  EXPECT_EQ(FormatDuration(24h), "24h");
  EXPECT_EQ(FormatDuration(250us), "250us");
  EXPECT_EQ(FormatDuration(1001ns), "1001ns");
  EXPECT_EQ(FormatDuration(-2s), "-2s");
}

TEST(config_values, ByteSizes) {
  EXPECT_EQ(ParseByteSize("64MiB"), MiB(64));
  EXPECT_EQ(ParseByteSize("512KiB"), KiB(512));
  EXPECT_EQ(ParseByteSize("1000"), ByteSize{1000});
  EXPECT_EQ(ParseByteSize("1GB"), ByteSize{1'000'000'000});
  EXPECT_EQ(ParseByteSize("1kB"), ByteSize{1000});
  EXPECT_EQ(ParseByteSize("2B"), ByteSize{2});
  EXPECT_EQ(ParseByteSize("1.5GiB"), ByteSize{3ull << 29});
  EXPECT_EQ(ParseByteSize("64 MiB"), MiB(64));
  EXPECT_EQ(ParseByteSize("16gib"), GiB(16));
  EXPECT_EQ(ParseByteSize("1TiB"), ByteSize{1ull << 40});
}

TEST(config_values, BadByteSizes) {
  for (const char* bad : {"", "MiB", "-1", "1.5", "1.5B", "64XB", "64M", "64 ", "64  MiB",
                          "99999999999999999999", "20000000TiB", "1..5KiB"}) {
    EXPECT_FALSE(ParseByteSize(bad).has_value()) << '"' << bad << '"';
  }
}

TEST(config_values, FormatsByteSizes) {
  EXPECT_EQ(FormatByteSize(MiB(64)), "64MiB");
  EXPECT_EQ(FormatByteSize(GiB(16)), "16GiB");
  EXPECT_EQ(FormatByteSize(ByteSize{1536}), "1536B");
  EXPECT_EQ(FormatByteSize(ByteSize{3072}), "3KiB");
  EXPECT_EQ(FormatByteSize(ByteSize{1000}), "1000B");
  EXPECT_EQ(FormatByteSize(ByteSize{0}), "0B");
}

TEST(config_values, IpAddresses) {
  const std::optional<IpAddress> v4 = ParseIpAddress("198.18.0.1");
  ASSERT_TRUE(v4.has_value());
  EXPECT_TRUE(v4->is_v4());
  EXPECT_EQ(v4->ToString(), "198.18.0.1");
  EXPECT_EQ(v4->bytes[0], 198);
  EXPECT_EQ(v4->bytes[3], 1);

  const std::optional<IpAddress> v6 = ParseIpAddress("fd00:0::1");
  ASSERT_TRUE(v6.has_value());
  EXPECT_FALSE(v6->is_v4());
  EXPECT_EQ(v6->ToString(), "fd00::1");
  EXPECT_EQ(ParseIpAddress("fd00::1"), v6);
  EXPECT_NE(ParseIpAddress("198.18.0.2"), v4);
}

TEST(config_values, BadIpAddresses) {
  for (const char* bad : {"", "198.18.0.300", "198.18.0", "198.18.0.1.1", "host", "fe80::1%eth0",
                          "[fd00::1]", " 198.18.0.1", "fd00:::1"}) {
    EXPECT_FALSE(ParseIpAddress(bad).has_value()) << '"' << bad << '"';
  }
}

TEST(config_values, Endpoints) {
  EXPECT_EQ(ParseEndpoint("198.19.128.1:50051"), (Endpoint{"198.19.128.1", 50051}));
  EXPECT_EQ(ParseEndpoint("analyzer.example:50051"), (Endpoint{"analyzer.example", 50051}));
  EXPECT_EQ(ParseEndpoint("localhost:1"), (Endpoint{"localhost", 1}));
  EXPECT_EQ(ParseEndpoint("[fd00::1]:9100"), (Endpoint{"fd00::1", 9100}));
  EXPECT_EQ(ParseEndpoint("0.0.0.0:0"), (Endpoint{"0.0.0.0", 0}));
  EXPECT_EQ(ParseEndpoint("h-003:65535"), (Endpoint{"h-003", 65535}));
  EXPECT_EQ((Endpoint{"fd00::1", 9100}).ToString(), "[fd00::1]:9100");
  EXPECT_EQ((Endpoint{"10.0.0.1", 80}).ToString(), "10.0.0.1:80");
}

TEST(config_values, BadEndpoints) {
  for (const char* bad :
       {"", "10.0.0.1", ":50051", "10.0.0.1:", "10.0.0.1:65536", "10.0.0.1:-1", "10.0.0.1:+80",
        "10.0.0.300:80", "fd00::1:80", "[fd00::1]80", "[10.0.0.1]:80", "[fd00::1:80", "bad_host:80",
        "-host:80", "host.:80", "ho st:80", "10.0.0.1:8o"}) {
    EXPECT_FALSE(ParseEndpoint(bad).has_value()) << '"' << bad << '"';
  }
}

TEST(config_values, Numbers) {
  EXPECT_EQ(ParseInt64("-12"), -12);
  EXPECT_EQ(ParseInt64("+12"), 12);
  EXPECT_FALSE(ParseInt64("12a"));
  EXPECT_FALSE(ParseInt64("1.0"));
  EXPECT_FALSE(ParseInt64("+-1"));
  EXPECT_FALSE(ParseInt64("99999999999999999999"));
  EXPECT_EQ(ParseUint64("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(ParseUint64("-1"));
  EXPECT_EQ(ParseDouble("0.25"), 0.25);
  EXPECT_EQ(ParseDouble("1e3"), 1000.0);
  EXPECT_EQ(ParseDouble("-2"), -2.0);
  EXPECT_FALSE(ParseDouble("inf"));
  EXPECT_FALSE(ParseDouble("nan"));
  EXPECT_FALSE(ParseDouble("0.25x"));
  EXPECT_EQ(ParseBool("true"), true);
  EXPECT_EQ(ParseBool("False"), false);
  EXPECT_FALSE(ParseBool("yes"));
  EXPECT_FALSE(ParseBool("1"));
}

TEST(config_values, SpellingSuggestions) {
  EXPECT_EQ(EditDistance("interval", "interval"), 0u);
  EXPECT_EQ(EditDistance("intervl", "interval"), 1u);
  EXPECT_EQ(EditDistance("itnerval", "interval"), 1u);  // a swap is one edit
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  const std::vector<std::string> keys = {"interval", "timeout", "payload_bytes"};
  EXPECT_EQ(ClosestMatch("intervall", keys), "interval");
  EXPECT_EQ(ClosestMatch("timeuot", keys), "timeout");
  EXPECT_EQ(ClosestMatch("payload_size", keys), "payload_bytes");
  EXPECT_EQ(ClosestMatch("budget", keys), std::nullopt);
  EXPECT_EQ(ClosestMatch("x", keys), std::nullopt);
}

}  // namespace
}  // namespace hostmesh::config
