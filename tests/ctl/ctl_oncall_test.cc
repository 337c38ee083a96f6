// hostmeshctl's on-call pieces without an analyzer: the HTTP client (libcurl)
// against an in-test server (status line, Content-Length, read-to-close,
// chunked, malformed answers, errors, timeouts), the JSON reader, and the tables and exit codes
// rendered from fixture JSON in the shape analyzer/api/render.cc serves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "ctl/http_client.h"
#include "ctl/json_reader.h"
#include "ctl/oncall_view.h"
#include "tests/ctl/fake_http_server.h"

namespace hostmesh::ctl::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

HttpEndpoint Local(std::uint16_t port) {
  HttpEndpoint ep;
  ep.host = "127.0.0.1";
  ep.port = port;
  return ep;
}

// --- endpoint parsing ---

TEST(HttpEndpoint, ParsesUrlsAndBareHostPort) {
  std::string error;
  auto ep = ParseHttpEndpoint("http://10.0.0.1:8080", &error);
  ASSERT_TRUE(ep) << error;
  EXPECT_EQ(ep->host, "10.0.0.1");
  EXPECT_EQ(ep->port, 8080);
  EXPECT_EQ(ep->prefix, "");
  EXPECT_EQ(ep->ToString(), "http://10.0.0.1:8080");

  ep = ParseHttpEndpoint("analyzer.mgmt:9000/hm/", &error);
  ASSERT_TRUE(ep) << error;
  EXPECT_EQ(ep->host, "analyzer.mgmt");
  EXPECT_EQ(ep->prefix, "/hm");

  ep = ParseHttpEndpoint("HTTP://[::1]:81", &error);
  ASSERT_TRUE(ep) << error;
  EXPECT_EQ(ep->host, "::1");
  EXPECT_EQ(ep->port, 81);
  EXPECT_EQ(ep->ToString(), "http://[::1]:81");

  ep = ParseHttpEndpoint("http://example", &error);
  ASSERT_TRUE(ep) << error;
  EXPECT_EQ(ep->port, 80);
}

TEST(HttpEndpoint, RejectsBadAddresses) {
  for (const char* bad : {"https://a:1", "http://:80", "http://a:0", "http://a:70000", "a:x",
                          "http://[::1", "http://a:"}) {
    std::string error;
    EXPECT_FALSE(ParseHttpEndpoint(bad, &error)) << bad;
    EXPECT_THAT(error, HasSubstr(bad));
  }
}

// --- answers as libcurl reads them off a socket ---

// The answer to one GET of a server that writes `bytes` and closes.
HttpResponse GetAnswer(const std::string& bytes) {
  FakeHttpServer server(
      [bytes](const std::string&) -> std::optional<std::string> { return bytes; });
  HttpOptions options;
  options.max_body_bytes = 1000;
  return HttpGet(Local(server.port()), "/", options);
}

TEST(HttpAnswer, BodyByContentLength) {
  const HttpResponse r = GetAnswer("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A:  b \r\n\r\nhello");
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.reason, "OK");
  EXPECT_EQ(r.body, "hello");
  EXPECT_EQ(r.Header("x-a"), "b");
  EXPECT_EQ(r.Header("content-length"), "5");
}

TEST(HttpAnswer, ReadsToCloseWithoutLength) {
  const HttpResponse r = GetAnswer("HTTP/1.0 503 Service Unavailable\r\n\r\nlater");
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.reason, "Service Unavailable");
  EXPECT_EQ(r.body, "later");
}

TEST(HttpAnswer, DecodesChunked) {
  const HttpResponse r = GetAnswer(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n6;x=y\r\npedia \r\n"
      "0\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.body, "Wikipedia ");
}

TEST(HttpAnswer, RejectsMalformedAnswers) {
  const struct {
    std::string bytes;
    const char* why;
  } cases[] = {
      {"", "without a response"},
      {"HTTP/1.1 200 OK\r\nContent-Le", "middle of the response headers"},
      {"SSH-2.0-OpenSSH_9.2\r\n\r\n", ""},
      {"HTTP/1.1 2x0 OK\r\n\r\n", ""},
      {"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", ""},
      {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "body truncated"},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", ""},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n", "larger than 1000"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", ""},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", ""},
      {"HTTP/1.1 200 OK\r\n\r\n" + std::string(2000, 'x'), "larger than 1000"},
  };
  for (const auto& c : cases) {
    const HttpResponse r = GetAnswer(c.bytes);
    EXPECT_EQ(r.error, HttpError::kBadResponse) << c.bytes << " -> " << r.message;
    EXPECT_THAT(r.message, HasSubstr(c.why)) << c.bytes;
    EXPECT_FALSE(r.message.empty()) << c.bytes;
  }
}

// --- HttpGet against a real socket ---

TEST(HttpGet, SendsAGetWithHostAndConnectionClose) {
  FakeHttpServer server([](const std::string& line) -> std::optional<std::string> {
    return FakeHttpServer::Answer(200, "OK", "{\"path\":\"" + line + "\"}");
  });
  ASSERT_NE(server.port(), 0);
  HttpEndpoint ep = Local(server.port());
  ep.prefix = "/pre";
  const HttpResponse r = HttpGet(ep, "/api/v1/links?suspicious");
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"path\":\"GET /pre/api/v1/links?suspicious HTTP/1.1\"}");
  EXPECT_EQ(r.Header("content-type"), "application/json");
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_THAT(requests[0], HasSubstr("\r\nHost: 127.0.0.1:" + std::to_string(server.port())));
  EXPECT_THAT(requests[0], HasSubstr("\r\nConnection: close\r\n"));
}

TEST(HttpGet, ReadsABodyDelimitedByTheClose) {
  const std::string big(300 * 1024, 'x');  // several reads
  FakeHttpServer server([&](const std::string&) -> std::optional<std::string> {
    return "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + big;
  });
  const HttpResponse r = HttpGet(Local(server.port()), "/");
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.body.size(), big.size());
}

TEST(HttpGet, ReportsNonOkStatusAsAnAnswer) {
  FakeHttpServer server([](const std::string&) -> std::optional<std::string> {
    return FakeHttpServer::Answer(404, "Not Found", "no such endpoint", "text/plain");
  });
  const HttpResponse r = HttpGet(Local(server.port()), "/api/v1/nope");
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.reason, "Not Found");
  EXPECT_EQ(r.body, "no such endpoint");
}

TEST(HttpGet, TruncatedBodyIsABadResponse) {
  FakeHttpServer server([](const std::string&) -> std::optional<std::string> {
    return "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"a\":";
  });
  const HttpResponse r = HttpGet(Local(server.port()), "/");
  EXPECT_EQ(r.error, HttpError::kBadResponse);
  EXPECT_THAT(r.message, HasSubstr("truncated"));
}

TEST(HttpGet, ConnectionRefusedIsUnreachable) {
  const HttpResponse r = HttpGet(Local(UnusedPort()), "/");
  EXPECT_EQ(r.error, HttpError::kUnreachable);
  EXPECT_THAT(r.message, HasSubstr("refused"));
}

TEST(HttpGet, UnresolvableNameIsUnreachable) {
  HttpEndpoint ep;
  ep.host = "no-such-host.invalid";
  const HttpResponse r = HttpGet(ep, "/");
  EXPECT_EQ(r.error, HttpError::kUnreachable);
  EXPECT_THAT(r.message, HasSubstr("no-such-host.invalid"));
}

TEST(HttpGet, SilentServerTimesOut) {
  FakeHttpServer server([](const std::string&) -> std::optional<std::string> { return {}; });
  HttpOptions options;
  options.timeout = 200ms;
  const auto start = std::chrono::steady_clock::now();
  const HttpResponse r = HttpGet(Local(server.port()), "/", options);
  EXPECT_EQ(r.error, HttpError::kUnreachable);
  EXPECT_THAT(r.message, HasSubstr("within 200 ms"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

// --- JSON reader ---

TEST(JsonReader, TypedGetters) {
  std::string error;
  const auto j = ParseJson(
      R"({"s":"x","n":1.5e3,"i":-7,"t":true,"f":false,"z":null,"a":[{"k":1},{"k":2}],"e":[],)"
      R"("o":{"p":{"q":"deep"}}})",
      &error);
  ASSERT_TRUE(j) << error;
  EXPECT_EQ(JsonString(*j, "s"), "x");
  EXPECT_EQ(JsonNumber(*j, "n"), 1500.0);
  EXPECT_EQ(JsonInt(*j, "i"), -7);
  EXPECT_EQ(JsonInt(*j, "n"), 1500);
  EXPECT_EQ(JsonBool(*j, "t"), true);
  EXPECT_EQ(JsonBool(*j, "f"), false);
  EXPECT_TRUE(JsonIsNull(*j, "z"));
  EXPECT_TRUE(JsonIsNull(*j, "missing"));
  EXPECT_FALSE(JsonIsNull(*j, "s"));
  EXPECT_EQ(JsonString(*j, "z"), std::nullopt);
  EXPECT_EQ(JsonNumber(*j, "s"), std::nullopt);
  ASSERT_EQ(JsonArray(*j, "a").size(), 2u);
  EXPECT_EQ(JsonInt(*JsonArray(*j, "a")[1], "k"), 2);
  EXPECT_TRUE(JsonArray(*j, "e").empty());
  EXPECT_TRUE(JsonArray(*j, "o").empty());  // an object is not an array
  EXPECT_EQ(JsonString(*j, "o.p.q"), "deep");
}

TEST(JsonReader, ReportsInvalidJson) {
  std::string error;
  EXPECT_FALSE(ParseJson("{\"a\":\n  [1, }", &error));
  EXPECT_THAT(error, HasSubstr("line 2"));
  EXPECT_FALSE(ParseJson("<html>", &error));
}

// --- views from fixture JSON ---

JsonNode Json(const std::string& text) {
  std::string error;
  auto j = ParseJson(text, &error);
  EXPECT_TRUE(j) << error << "\n" << text;
  return j.value_or(JsonNode());
}

constexpr std::int64_t kStart = 1714564800'000000000;  // 2024-05-01 12:00:00Z
const std::string kWindow =
    R"("window":{"start_ns":1714564800000000000,"end_ns":1714564820000000000,"results":4800})";

std::string Rnic(const std::string& host, int nic, int rail, const std::string& state, bool paper,
                 double loss) {
  const bool anomalous = state != "ok";
  return R"({"host":")" + host + R"(","nic":)" + std::to_string(nic) + R"(,"nic_name":"nic)" +
         std::to_string(nic) + R"(","ip":"198.18.)" + std::to_string(rail) + ".1" +
         std::to_string(nic) + R"(","rail":)" + std::to_string(rail) + R"(,"state":")" + state +
         R"(","anomalous":)" + (anomalous ? "true" : "false") + R"(,"paper_anomalous":)" +
         (paper ? "true" : "false") + R"(,"anomalous_until_ns":0,"loss":)" + std::to_string(loss) +
         R"(,"probes":400,"timeouts":)" + std::to_string(static_cast<int>(loss * 400)) +
         R"(,"probes_to":400,"timeouts_to":0})";
}

// The line of `text` that contains `needle` ("" if none).
std::string LineWith(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  if (at == std::string::npos) return "";
  const auto begin = text.rfind('\n', at) + 1;  // npos + 1 == 0
  return text.substr(begin, text.find('\n', at) - begin);
}

TEST(OncallView, RnicsAllOkExitsZero) {
  const auto body = Json("{" + kWindow + R"(,"rnics":[)" + Rnic("h000", 0, 0, "ok", false, 0) +
                         "," + Rnic("h000", 1, 1, "ok", false, 0.001) + "]}");
  const OncallView v = RenderOncall(OncallCommand::kRnics, body);
  EXPECT_EQ(v.exit_code, 0) << v.text;
  EXPECT_THAT(v.text, HasSubstr("window: 2024-05-01 12:00:00Z + 20 s, 4800 results"));
  EXPECT_THAT(v.text, HasSubstr("2 RNICs, 0 not ok"));
  EXPECT_THAT(v.text, HasSubstr("RNIC  HOST  RAIL  IP"));
  EXPECT_EQ(LineWith(v.text, "0.10%"),
            "nic1  h000     1  198.18.1.11  ok     0.10%     0/400  ok     -");
}

TEST(OncallView, RnicsShowTheWindowsCounterDeltasBesideTheVerdict) {
  std::string down = Rnic("h001", 2, 2, "down", true, 1.0);
  down.insert(down.size() - 1, R"(,"send_failures":400,"telemetry":{"samples":2,"counters":)"
                               R"({"link_downed":2,"symbol_error":0,"carrier_changes":4}})");
  std::string quiet = Rnic("h000", 0, 0, "ok", false, 0);
  quiet.insert(quiet.size() - 1, R"(,"telemetry":{"samples":2,"counters":{"symbol_error":0}})");
  const std::string none = Rnic("h000", 1, 1, "ok", false, 0);  // no "telemetry": older analyzer
  const auto body = Json("{" + kWindow + R"(,"telemetry":"window","rnics":[)" + quiet + "," + none +
                         "," + down + "]}");
  const OncallView v = RenderOncall(OncallCommand::kRnics, body);
  EXPECT_THAT(v.text, HasSubstr("COUNTERS (WINDOW)"));
  EXPECT_THAT(LineWith(v.text, "h001"), ::testing::EndsWith("carrier_changes +4, link_downed +2"));
  EXPECT_THAT(LineWith(v.text, "nic0"), ::testing::EndsWith("none moved"));
  EXPECT_THAT(LineWith(v.text, "nic1  h000"), ::testing::EndsWith("  -"));
}

TEST(OncallView, RnicDownExitsOneAndIsNamed) {
  const auto body = Json("{" + kWindow + R"(,"rnics":[)" + Rnic("h000", 0, 0, "ok", false, 0) +
                         "," + Rnic("h001", 2, 2, "down", true, 1.0) + "," +
                         Rnic("h002", 3, 3, "ok", true, 0.25) + "]}");
  const OncallView v = RenderOncall(OncallCommand::kRnics, body);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_THAT(LineWith(v.text, "h001"), HasSubstr("down"));
  EXPECT_THAT(LineWith(v.text, "h001"), HasSubstr("100.00%"));
  EXPECT_THAT(LineWith(v.text, "h001"), HasSubstr("anomalous"));
  EXPECT_THAT(v.text, HasSubstr("3 RNICs, 1 not ok: h001/nic2 down"));
  // The paper's rule blames h002 as well; ours does not, and says so.
  EXPECT_THAT(v.text, HasSubstr("1 more RNIC crosses the paper's 10% rule"));
  // Columns line up: every row starts its STATE column at the header's offset.
  const auto column = LineWith(v.text, "RNIC").find("STATE");
  EXPECT_EQ(LineWith(v.text, "h001").find("down"), column);
  EXPECT_EQ(LineWith(v.text, "h000").find("ok"), column);
}

TEST(OncallView, LossyCountsAsNotOk) {
  const auto body =
      Json("{" + kWindow + R"(,"rnics":[)" + Rnic("h000", 0, 0, "lossy", true, 0.2) + "]}");
  EXPECT_EQ(RenderOncall(OncallCommand::kRnics, body).exit_code, 1);
}

TEST(OncallView, NoWindowYetIsNothingToReport) {
  const OncallView v = RenderOncall(OncallCommand::kRnics, Json(R"({"window":null,"rnics":[]})"));
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_THAT(v.text, HasSubstr("none judged yet"));
  EXPECT_THAT(v.text, HasSubstr("no RNICs reported"));
}

TEST(OncallView, WrongShapeIsABadResponse) {
  for (const auto command : {OncallCommand::kStatus, OncallCommand::kRnics, OncallCommand::kLinks,
                             OncallCommand::kIncidents, OncallCommand::kSla}) {
    const OncallView v = RenderOncall(command, Json(R"({"unrelated":1})"));
    EXPECT_EQ(v.exit_code, 2);
    EXPECT_THAT(v.error, HasSubstr("unexpected response"));
  }
}

const std::string kLinks =
    "{" + kWindow +
    R"(,"method":"greedy","links":[)"
    R"({"rank":1,"link":7,"name":"p0r1-s01","ends":[{"ip":"198.19.0.6","device":"p0r1","port":"s01"},)"
    R"({"ip":"198.19.0.7","device":"s01","port":"p0r1"}],"culprit":true,"loss":0.5,"score":3.0,)"
    R"("failures":120,"good":118,"votes":120},)"
    R"({"rank":2,"link":9,"name":"link 9","ends":null,"culprit":false,"loss":0.0,"score":0.0,)"
    R"("failures":3,"good":500,"votes":3}]})";

TEST(OncallView, LinksShowsDevicesIpsAndVotes) {
  const OncallView v = RenderOncall(OncallCommand::kLinks, Json(kLinks));
  EXPECT_EQ(v.exit_code, 1);
  const std::string first = LineWith(v.text, "p0r1-s01");
  EXPECT_THAT(first, HasSubstr("p0r1:s01 - s01:p0r1"));
  EXPECT_THAT(first, HasSubstr("198.19.0.6 - 198.19.0.7"));
  EXPECT_THAT(first, HasSubstr("50.00%"));
  EXPECT_THAT(first, HasSubstr("120/118"));
  EXPECT_THAT(first, HasSubstr("suspect"));
  EXPECT_THAT(LineWith(v.text, "link 9"), Not(HasSubstr("suspect")));
  EXPECT_THAT(v.text, HasSubstr("1 suspect link: p0r1-s01"));
}

TEST(OncallView, LinksLimitAndNoSuspects) {
  OncallViewOptions options;
  options.links_limit = 1;
  const OncallView v = RenderOncall(OncallCommand::kLinks, Json(kLinks), options);
  EXPECT_THAT(v.text, HasSubstr("... 1 more"));
  EXPECT_EQ(LineWith(v.text, "link 9"), "");

  const OncallView none =
      RenderOncall(OncallCommand::kLinks, Json("{" + kWindow + R"(,"links":[]})"));
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_THAT(none.text, HasSubstr("no links to report"));
}

const std::string kIncidents =
    R"({"open":[{"id":3,"kind":"rnic_down","summary":"h001 nic2 down","suspect":{"host":"h001",)"
    R"("nic":2,"nic_name":"nic2","ip":"198.18.2.12","rail":2},"confidence":0.97,"open":true,)"
    R"("first_seen_ns":1714564800000000000,"last_seen_ns":1714564860000000000,"resolved_ns":0,)"
    R"("windows":3,"evidence":{"failures":10,"good":0,"votes":0,"loss":1.0,"example_paths":[]},)"
    R"("diagnosis":{"type":"corruption","rule":"corruption: symbol, FCS or receive errors rose )"
    R"(with probe loss","evidence":"RNIC h001 nic2 losing 4.0% of probes; symbol errors +4,210 )"
    R"(in the window: likely a dirty optic or bad cable","counters":{"symbol_error":4210},)"
    R"("window_start_ns":1714564840000000000}}],)"
    R"("resolved":[{"id":1,"kind":"link_loss","summary":"","suspect":{"link":7,"name":"p0r1-s01",)"
    R"("ends":null},"confidence":0.8,"open":false,"first_seen_ns":1714564000000000000,)"
    R"("last_seen_ns":1714564100000000000,"resolved_ns":1714564200000000000,"windows":5,)"
    R"("evidence":{"failures":1,"good":2,"votes":3,"loss":0.1,"example_paths":[[1,2]]}},)"
    R"({"id":2,"kind":"host_processing","suspect":{"host":"h005"},"confidence":0.5,"open":false,)"
    R"("first_seen_ns":0,"last_seen_ns":0,"resolved_ns":0},)"
    R"({"id":4,"kind":"switch","suspect":{"switch":12,"name":"s01","tier":"spine","pod":-1,)"
    R"("rail":-1},"confidence":0.6,"open":false,"first_seen_ns":0,"last_seen_ns":0}]})";

TEST(OncallView, IncidentsOpenExitsOne) {
  const OncallView v = RenderOncall(OncallCommand::kIncidents, Json(kIncidents));
  EXPECT_EQ(v.exit_code, 1);
  const std::string open = LineWith(v.text, "rnic_down");
  EXPECT_THAT(open, HasSubstr("h001/nic2"));
  EXPECT_THAT(open, HasSubstr("0.97"));
  EXPECT_THAT(open, HasSubstr("2024-05-01 12:00:00Z  2024-05-01 12:01:00Z  open"));
  EXPECT_THAT(LineWith(v.text, "link_loss"), HasSubstr("p0r1-s01"));
  EXPECT_THAT(LineWith(v.text, "link_loss"), HasSubstr("resolved 2024-05-01"));
  EXPECT_THAT(LineWith(v.text, "host_processing"), HasSubstr("h005"));
  EXPECT_THAT(LineWith(v.text, "switch "), HasSubstr("switch s01"));
  EXPECT_THAT(v.text, HasSubstr("1 open, 3 resolved"));
  // Open first.
  EXPECT_LT(v.text.find("rnic_down"), v.text.find("link_loss"));
  // The diagnosis: its type in the table ("-" where none), its evidence under it.
  EXPECT_THAT(open, HasSubstr(" corruption "));
  EXPECT_THAT(LineWith(v.text, "link_loss"), HasSubstr(" - "));
  EXPECT_THAT(LineWith(v.text, "link_loss"), Not(HasSubstr("corruption")));
  EXPECT_THAT(v.text,
              HasSubstr("\n#3 corruption: RNIC h001 nic2 losing 4.0% of probes; symbol "
                        "errors +4,210 in the window: likely a dirty optic or bad cable\n"));
}

TEST(OncallView, OnlyResolvedIncidentsExitZero) {
  const OncallView v =
      RenderOncall(OncallCommand::kIncidents, Json(R"({"open":[],"resolved":[]})"));
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.text, "no incidents\n");
  std::string only_resolved = kIncidents;
  only_resolved.replace(only_resolved.find("\"open\":["),
                        only_resolved.find("\"resolved\"") - only_resolved.find("\"open\":["),
                        "\"open\":[],");
  EXPECT_EQ(RenderOncall(OncallCommand::kIncidents, Json(only_resolved)).exit_code, 0);
}

std::string SlaRow(double rnic, double net, int count) {
  return R"("probes":1000,"timeouts":5,"rnic_drops":1,"network_drops":4,"rnic_drop_rate":)" +
         std::to_string(rnic) + R"(,"network_drop_rate":)" + std::to_string(net) +
         R"(,"latency_ns":{"count":)" + std::to_string(count) +
         R"(,"p50":5200,"p90":8000,"p99":12500,"p999":2500000},"processing_ns":{"count":)" +
         std::to_string(count) + R"(,"p50":3000,"p90":3500,"p99":4100,"p999":900}})";
}

TEST(OncallView, SlaTableAndDropThreshold) {
  const std::string text = "{" + kWindow + R"(,"cluster":{)" + SlaRow(0.0001, 0.0004, 995) +
                           R"(,"rails":[{"rail":0,)" + SlaRow(0, 0, 0) +
                           R"(],"hosts":[{"host":"h003",)" + SlaRow(0.0, 0.02, 995) + "]}";
  const OncallView v = RenderOncall(OncallCommand::kSla, Json(text));
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_THAT(
      v.text,
      HasSubstr("SCOPE      PROBES  RNIC DROP  NET DROP  LAT P50  LAT P99  LAT P99.9  PROC P99\n"));
  const std::string cluster = LineWith(v.text, "cluster");
  EXPECT_THAT(cluster, HasSubstr("0.01%"));
  EXPECT_THAT(cluster, HasSubstr("0.04%"));
  EXPECT_THAT(cluster, HasSubstr("5.2us"));
  EXPECT_THAT(cluster, HasSubstr("12.5us"));
  EXPECT_THAT(cluster, HasSubstr("2.50ms"));
  EXPECT_THAT(cluster, HasSubstr("4.1us"));
  EXPECT_THAT(LineWith(v.text, "rail 0"), HasSubstr("-"));  // no latency samples
  EXPECT_THAT(v.text, HasSubstr("drop rate above 0.10%: host h003"));

  OncallViewOptions lenient;
  lenient.max_drop_rate = 0.05;
  const OncallView ok = RenderOncall(OncallCommand::kSla, Json(text), lenient);
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_THAT(ok.text, HasSubstr("drop rates within 5.00%"));

  const OncallView empty = RenderOncall(
      OncallCommand::kSla, Json(R"({"window":null,"cluster":null,"rails":[],"hosts":[]})"));
  EXPECT_EQ(empty.exit_code, 0);
  EXPECT_THAT(empty.text, HasSubstr("no SLA figures yet"));
}

std::string Status(double lag, int known, int present, int open) {
  return R"({"version":"0.1.0","uptime_seconds":3725.2,"window_seconds":20,"grace_seconds":5,)"
         R"("inventory_loaded":true,"agents_known":)" +
         std::to_string(known) + R"(,"agents_present":)" + std::to_string(present) + "," + kWindow +
         R"(,"window_lag_seconds":)" + std::to_string(lag) + R"(,"open_incidents":)" +
         std::to_string(open) + "}";
}

TEST(OncallView, StatusHealthyDespiteOpenIncidents) {
  const OncallView v = RenderOncall(OncallCommand::kStatus, Json(Status(27.5, 8, 8, 2)));
  EXPECT_EQ(v.exit_code, 0) << v.text;
  EXPECT_THAT(v.text, HasSubstr("version:    0.1.0, up 1h02m05s"));
  EXPECT_THAT(v.text, HasSubstr("agents:     8 present of 8 known"));
  EXPECT_THAT(v.text, HasSubstr("incidents:  2 open (hostmeshctl incidents)"));
  EXPECT_THAT(v.text, HasSubstr("lag:        27.5 s"));
  EXPECT_THAT(v.text, HasSubstr("health:     healthy"));
}

TEST(OncallView, StatusNamesHostsSheddingLoadAndStaysHealthy) {
  std::string body = Status(20, 8, 8, 0);
  body.insert(body.size() - 1,
              R"(,"hosts_shedding":[{"host":"h006","rate_fraction":0.1,)"
              R"("lowest_fraction":0.1,"since_ns":5,"cause":"cgroup cpu throttled 99%"}])");
  const OncallView v = RenderOncall(OncallCommand::kStatus, Json(body));
  EXPECT_EQ(v.exit_code, 0) << v.text;
  EXPECT_THAT(v.text,
              HasSubstr("shedding:   h006 probes at 0.1 of its rate (cgroup cpu throttled 99%)"));
}

TEST(OncallView, StatusStaleOrBlindExitsOne) {
  // 2 x (20 + 5) + 10 = 60 s.
  OncallView v = RenderOncall(OncallCommand::kStatus, Json(Status(61, 8, 8, 0)));
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_THAT(v.text, HasSubstr("stale"));
  v = RenderOncall(OncallCommand::kStatus, Json(Status(25, 8, 0, 0)));
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_THAT(v.text, HasSubstr("no agent reported"));
  // A fresh analyzer with no agent yet has nothing to report.
  v = RenderOncall(OncallCommand::kStatus,
                   Json(R"({"version":"x","uptime_seconds":1,"window_seconds":20,)"
                        R"("grace_seconds":5,"inventory_loaded":false,"agents_known":0,)"
                        R"("agents_present":0,"window":null,"window_lag_seconds":null,)"
                        R"("open_incidents":0})"));
  EXPECT_EQ(v.exit_code, 0) << v.text;
  EXPECT_THAT(v.text, HasSubstr("none judged yet"));
}

TEST(Format, Units) {
  EXPECT_EQ(FormatPercent(0.125), "12.50%");
  EXPECT_EQ(FormatNanoseconds(800), "800ns");
  EXPECT_EQ(FormatNanoseconds(1500), "1.5us");
  EXPECT_EQ(FormatNanoseconds(2'500'000), "2.50ms");
  EXPECT_EQ(FormatNanoseconds(3e9), "3.00s");
  EXPECT_EQ(FormatWallTime(kStart), "2024-05-01 12:00:00Z");
  EXPECT_EQ(FormatWallTime(0), "-");
  EXPECT_EQ(FormatSeconds(20), "20 s");
  EXPECT_EQ(FormatSeconds(0.5), "0.5 s");
  EXPECT_EQ(FormatSeconds(125), "2m05s");
}

TEST(TextTable, AlignsLeftAndRight) {
  TextTable t({"NAME", "N"}, {false, true});
  t.Add({"a", "100"});
  t.Add({"longer", "2"});
  EXPECT_EQ(t.Render(), "NAME      N\na       100\nlonger    2\n");
}

}  // namespace
}  // namespace hostmesh::ctl::testing
