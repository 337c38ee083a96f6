// The built hostmeshctl's on-call commands against a fake analyzer API that
// serves fixture JSON: tables and exit codes end to end, --json printed as
// served, --analyzer and HOSTMESH_ANALYZER, and the failure exit codes: 2 for
// usage, an HTTP error or a body that is not the API's JSON, 3 for an
// analyzer that refuses or never answers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/ctl/ctl_runner.h"
#include "tests/ctl/fake_http_server.h"

namespace hostmesh::ctl::testing {
namespace {

using ::testing::HasSubstr;

const std::map<std::string, std::string> kBodies = {
    {"/api/v1/status",
     R"({"version":"t","uptime_seconds":10,"window_seconds":2,"grace_seconds":1,)"
     R"("inventory_loaded":false,"agents_known":1,"agents_present":1,"window":{"start_ns":1,)"
     R"("end_ns":2000000001,"results":24},"window_lag_seconds":3.5,"open_incidents":1})"
     "\n"},
    {"/api/v1/rnics",
     R"({"window":null,"rnics":[{"host":"h1","nic":2,"nic_name":"nic2","ip":"","rail":2,)"
     R"("state":"down","anomalous":true,"paper_anomalous":true,"anomalous_until_ns":0,)"
     R"("loss":1,"probes":12,"timeouts":12,"probes_to":12,"timeouts_to":12}]})"
     "\n"},
    {"/api/v1/links", R"({"window":null,"method":"m","links":[]})"
                      "\n"},
    {"/api/v1/links?suspicious", R"({"window":null,"method":"m","links":[]})"
                                 "\n"},
    {"/api/v1/incidents", R"({"open":[],"resolved":[]})"
                          "\n"},
    {"/api/v1/sla", R"({"window":null,"cluster":null,"rails":[],"hosts":[]})"
                    "\n"},
};

// Answers GET PATH with kBodies[PATH], 404 otherwise.
std::optional<std::string> Api(const std::string& line) {
  const auto first = line.find(' ');
  const std::string path = line.substr(first + 1, line.rfind(' ') - first - 1);
  const auto it = kBodies.find(path);
  if (it == kBodies.end()) return FakeHttpServer::Answer(404, "Not Found", "not found\n");
  return FakeHttpServer::Answer(200, "OK", it->second);
}

class OncallCli : public ::testing::Test {
 protected:
  RunResult Run(const std::string& args) { return RunShell(Ctl(args), dir_); }
  TempDir dir_;
};

TEST_F(OncallCli, TablesAndExitCodes) {
  FakeHttpServer server(Api);
  ASSERT_NE(server.port(), 0);
  const std::string at = " --analyzer " + server.url();

  RunResult r = Run("rnics" + at);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 RNIC, 1 not ok: h1/nic2 down"));
  EXPECT_EQ(r.err, "");

  r = Run("status" + at);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("analyzer:   " + server.url()));
  EXPECT_THAT(r.out, HasSubstr("1 open"));

  r = Run("links --suspicious" + at);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("no links to report"));

  r = Run("incidents" + at);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "no incidents\n");

  r = Run("sla" + at);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("no SLA figures yet"));

  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_THAT(requests[2], HasSubstr("GET /api/v1/links?suspicious HTTP/1.1"));
}

TEST_F(OncallCli, JsonIsPrintedAsServed) {
  FakeHttpServer server(Api);
  for (const std::string command : {"status", "rnics", "incidents", "sla"}) {
    const RunResult r = Run(command + " --json --analyzer " + server.url());
    EXPECT_EQ(r.out, kBodies.at("/api/v1/" + command)) << command;
    EXPECT_EQ(r.exit_code, command == "rnics" ? 1 : 0) << command << r.err;
  }
}

TEST_F(OncallCli, AnalyzerAddressFromTheEnvironment) {
  FakeHttpServer server(Api);
  const RunResult r =
      RunShell("HOSTMESH_ANALYZER=" + Quote(server.url()) + " " + Ctl("incidents"), dir_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(OncallCli, HttpErrorExitsTwo) {
  FakeHttpServer server(Api);
  const RunResult r = Run("rnics --analyzer " + server.url() + "/elsewhere");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("answered 404 Not Found for /api/v1/rnics"));
  EXPECT_EQ(r.out, "");
}

TEST_F(OncallCli, NotTheApiExitsTwo) {
  FakeHttpServer html([](const std::string&) -> std::optional<std::string> {
    return FakeHttpServer::Answer(200, "OK", "<html>hi</html>", "text/html");
  });
  RunResult r = Run("status --analyzer " + html.url());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("invalid JSON"));

  FakeHttpServer other([](const std::string&) -> std::optional<std::string> {
    return FakeHttpServer::Answer(200, "OK", R"({"hello":"world"})");
  });
  r = Run("rnics --analyzer " + other.url());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unexpected response: no 'rnics'"));

  FakeHttpServer garbage([](const std::string&) -> std::optional<std::string> {
    return std::string("SSH-2.0-OpenSSH_9.2\r\n");
  });
  r = Run("rnics --analyzer " + garbage.url());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("bad response from the analyzer at " + garbage.url()));
}

TEST_F(OncallCli, UnreachableExitsThreeNamingTheAddress) {
  const std::string url = "http://127.0.0.1:" + std::to_string(UnusedPort());
  for (const std::string command : {"status", "rnics", "links", "incidents", "sla"}) {
    const RunResult r = Run(command + " --analyzer " + url);
    EXPECT_EQ(r.exit_code, 3) << command;
    EXPECT_THAT(r.err, HasSubstr("analyzer unreachable at " + url));
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(OncallCli, SilentAnalyzerTimesOutWithThree) {
  FakeHttpServer silent([](const std::string&) -> std::optional<std::string> { return {}; });
  const RunResult r = Run("status --timeout-ms 300 --analyzer " + silent.url());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("no complete answer within 300 ms"));
}

TEST_F(OncallCli, UsageErrorsExitTwo) {
  EXPECT_EQ(Run("rnics --analyzer https://x:1").exit_code, 2);
  EXPECT_EQ(Run("rnics --bogus").exit_code, 2);
  EXPECT_EQ(Run("sla --max-drop-rate 2").exit_code, 2);
  EXPECT_EQ(Run("status --timeout-ms 0").exit_code, 2);
  for (const std::string command : {"status", "rnics", "links", "incidents", "sla"}) {
    const RunResult r = Run(command + " --help");
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_THAT(r.out, HasSubstr("--analyzer")) << command;
    EXPECT_THAT(r.out, HasSubstr("HOSTMESH_ANALYZER")) << command;
  }
}

}  // namespace
}  // namespace hostmesh::ctl::testing
