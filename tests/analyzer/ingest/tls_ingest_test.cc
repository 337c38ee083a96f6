// The ingest perimeter over real gRPC on 127.0.0.1 with certificates made by
// openssl at test time (DESIGN 7): a client certificate names what its agent
// may speak for, nothing else gets in, rotated files are served without a
// restart, and garbage or overload ends a stream with a code that says so.
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/client_callback.h>
#include <grpcpp/support/proto_buffer_writer.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "agent/upload/uploader.h"
#include "hostmesh/v1/ingest.grpc.pb.h"
#include "tests/analyzer/ingest/analyzer_under_test.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"
#include "tests/common/tls/test_pki.h"

namespace hostmesh::analyzer::ingest {
namespace {

using analyzer::testing::AnalyzerUnderTest;
using analyzer::testing::Eventually;
using analyzer::testing::MakeBatch;
using analyzer::testing::MakeHello;
using analyzer::testing::TempDir;
using tls::TlsFiles;
using tls::testing::TestPki;
using namespace std::chrono_literals;

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh connection (its own subchannel: no reuse of an earlier handshake).
std::shared_ptr<grpc::Channel> Dial(const std::string& address,
                                    std::shared_ptr<grpc::ChannelCredentials> credentials) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetSslTargetNameOverride("hostmesh-analyzer");
  return grpc::CreateCustomChannel(address, std::move(credentials), args);
}

std::shared_ptr<grpc::ChannelCredentials> Mtls(const TlsFiles& client) {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = Read(client.ca);
  options.pem_private_key = Read(client.key);
  options.pem_cert_chain = Read(client.cert);
  return grpc::SslCredentials(options);
}

struct Fixture {
  Fixture(ingest::IngestOptions options = {})
      : pki(dir.path() / "pki"),
        server(pki.Issue("analyzer", "DNS:hostmesh-analyzer,IP:127.0.0.1", true)),
        analyzer(clock, dir.path() / "db", "127.0.0.1:0", std::move(options), Security(server)) {}

  static ServerSecurity Security(const TlsFiles& server) {
    ServerSecurity s;
    s.files = server;
    s.spiffe_trust_domain = "gpu.example";
    s.refresh_seconds = 1;  // rotation shows within a test's patience
    return s;
  }

  std::unique_ptr<v1::AgentIngest::Stub> As(const TlsFiles& client) {
    return v1::AgentIngest::NewStub(Dial(analyzer.address(), Mtls(client)));
  }

  TempDir dir;
  SystemClock clock;
  TestPki pki;
  TlsFiles server;
  AnalyzerUnderTest analyzer;
};

grpc::Status SayHello(v1::AgentIngest::Stub& stub, const v1::AgentHello& hello) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  v1::HelloReply reply;
  return stub.Hello(&context, hello, &reply);
}

// Writes the batches, half-closes, and returns the acks and the final status.
std::pair<std::vector<v1::UploadAck>, grpc::Status> Upload(
    v1::AgentIngest::Stub& stub, const std::vector<v1::UploadBatch>& batches) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 20s);
  auto stream = stub.Upload(&context);
  for (const v1::UploadBatch& b : batches) {
    if (!stream->Write(b)) break;
  }
  stream->WritesDone();
  std::vector<v1::UploadAck> acks;
  v1::UploadAck ack;
  while (stream->Read(&ack)) acks.push_back(ack);
  return {acks, stream->Finish()};
}

// A server rebuilt after gRPC dropped its listener (listener_recovery.h)
// keeps mutual TLS and what each certificate may speak for.
TEST(tls_ingest, ARebuiltServerKeepsMutualTlsAndTheHostsCertificatesName) {
  Fixture f;
  ASSERT_TRUE(f.analyzer.ok());
  const TlsFiles h1 = f.pki.Issue("h1", "DNS:h1", false);
  ASSERT_TRUE(SayHello(*f.As(h1), MakeHello("h1", 7)).ok());
  std::string error;
  ASSERT_TRUE(f.analyzer.server().Relisten(0s, error)) << error;
  EXPECT_TRUE(SayHello(*f.As(h1), MakeHello("h1", 7)).ok());
  EXPECT_EQ(SayHello(*f.As(f.pki.Issue("h2", "DNS:h2", false)), MakeHello("h1", 7)).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  grpc::SslCredentialsOptions no_certificate;
  no_certificate.pem_root_certs = Read(h1.ca);
  auto anonymous =
      v1::AgentIngest::NewStub(Dial(f.analyzer.address(), grpc::SslCredentials(no_certificate)));
  EXPECT_FALSE(SayHello(*anonymous, MakeHello("h1", 7)).ok());
}

TEST(tls_ingest, TheHostACertificateNamesUploadsAndNoOtherHostIsSpokenFor) {
  Fixture f;
  ASSERT_TRUE(f.analyzer.ok());
  auto h1 = f.As(f.pki.Issue("h1", "DNS:h1", false));
  ASSERT_TRUE(SayHello(*h1, MakeHello("h1", 7)).ok());
  const WallTime now = f.clock.RealtimeNow();
  auto [acks, status] = Upload(*h1, {MakeBatch("h1", 7, 1, 20, now)});
  EXPECT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].status(), v1::UploadAck::STATUS_ACCEPTED);

  // Forged timeouts for another host once opened an incident on a healthy NIC.
  grpc::Status denied = SayHello(*h1, MakeHello("h2", 8));
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(denied.error_message().find("host 'h2' from a certificate for 'h1'"), std::string::npos)
      << denied.error_message();
  v1::AgentHello renamed = MakeHello("h1", 9);
  renamed.set_host("h2");  // a new boot's Hello once renamed a host
  EXPECT_EQ(SayHello(*h1, renamed).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  v1::AgentHello other_id = MakeHello("h2", 9);
  other_id.set_host("h1");
  EXPECT_EQ(SayHello(*h1, other_id).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(f.analyzer.stats().hellos_denied.Value(), 3u);

  // A batch for another agent ends the stream; what came before it stands.
  auto h2 = f.As(f.pki.Issue("h2", "DNS:h2", false));
  ASSERT_TRUE(SayHello(*h2, MakeHello("h2", 8)).ok());
  std::tie(acks, status) =
      Upload(*h1, {MakeBatch("h1", 7, 2, 20, now), MakeBatch("h2", 8, 1, 20, now)});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(status.error_message().find("agent_id 'h2'"), std::string::npos)
      << status.error_message();
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].batch_seq(), 2u);
  EXPECT_EQ(f.analyzer.stats().streams_denied.Value(), 1u);
  EXPECT_EQ(f.analyzer.store().CountResultsByAgent().count("h2"), 0u);
  EXPECT_EQ(f.analyzer.store().CountResultsByAgent().at("h1"), 40u);
}

// A Hello for another host is refused after the refusal delay, as refused
// Upload streams are (refusal_tarpit.h). A lower bound on time only.
TEST(tls_ingest, AHelloForAnotherHostIsDeniedAfterTheRefusalDelay) {
  ingest::IngestOptions options;
  options.refusal_delay = std::chrono::milliseconds{300};
  Fixture f(options);
  ASSERT_TRUE(f.analyzer.ok());
  auto h1 = f.As(f.pki.Issue("h1", "DNS:h1", false));
  const auto start = std::chrono::steady_clock::now();
  const grpc::Status denied = SayHello(*h1, MakeHello("h2", 8));
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED) << denied.error_message();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds{300});
  EXPECT_TRUE(SayHello(*h1, MakeHello("h1", 7)).ok());
}

TEST(tls_ingest, ASpiffeIdInTheTrustDomainNamesItsHost) {
  Fixture f;
  ASSERT_TRUE(f.analyzer.ok());
  auto spiffe = f.As(f.pki.Issue("s7", "URI:spiffe://gpu.example/host/h7", false));
  EXPECT_TRUE(SayHello(*spiffe, MakeHello("h7", 1)).ok());
  auto foreign = f.As(f.pki.Issue("s8", "URI:spiffe://elsewhere.example/host/h8", false));
  EXPECT_EQ(SayHello(*foreign, MakeHello("h8", 1)).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST(tls_ingest, NoCertificateOrOneOfAnotherCaGetsNoFurtherThanTheHandshake) {
  Fixture f;
  ASSERT_TRUE(f.analyzer.ok());
  grpc::SslCredentialsOptions anonymous;
  anonymous.pem_root_certs = Read(f.pki.ca());
  auto stub = v1::AgentIngest::NewStub(Dial(f.analyzer.address(), grpc::SslCredentials(anonymous)));
  EXPECT_EQ(SayHello(*stub, MakeHello("h1", 1)).error_code(), grpc::StatusCode::UNAVAILABLE);

  const TestPki rogue(f.dir.path() / "rogue", "rogue-ca");
  TlsFiles forged = rogue.Issue("h1", "DNS:h1", false);
  forged.ca = f.pki.ca();  // it trusts the analyzer; the analyzer does not trust it
  EXPECT_EQ(SayHello(*f.As(forged), MakeHello("h1", 1)).error_code(),
            grpc::StatusCode::UNAVAILABLE);

  auto plaintext = v1::AgentIngest::NewStub(
      grpc::CreateChannel(f.analyzer.address(), grpc::InsecureChannelCredentials()));
  EXPECT_EQ(SayHello(*plaintext, MakeHello("h1", 1)).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(f.analyzer.stats().hellos.Value(), 0u);
}

// A stolen agent certificate, revoked by a CRL in grpc.tls.crl_dir, gets no
// further than the handshake; the CA's other certificates are unaffected.
TEST(tls_ingest, ARevokedCertificateGetsNoFurtherThanTheHandshake) {
  TempDir dir;
  const TestPki pki(dir.path() / "pki");
  const TlsFiles server = pki.Issue("analyzer", "DNS:hostmesh-analyzer,IP:127.0.0.1", true);
  const TlsFiles h1 = pki.Issue("h1", "DNS:h1", false);
  const TlsFiles h2 = pki.Issue("h2", "DNS:h2", false);
  pki.Revoke("h2", dir.path() / "crl");
  ServerSecurity security = Fixture::Security(server);
  security.crl_dir = (dir.path() / "crl").string();
  SystemClock clock;
  AnalyzerUnderTest analyzer(clock, dir.path() / "db", "127.0.0.1:0", {}, security);
  ASSERT_TRUE(analyzer.ok());
  const auto as = [&](const TlsFiles& client) {
    return v1::AgentIngest::NewStub(Dial(analyzer.address(), Mtls(client)));
  };
  EXPECT_TRUE(SayHello(*as(h1), MakeHello("h1", 1)).ok());
  EXPECT_EQ(SayHello(*as(h2), MakeHello("h2", 1)).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(analyzer.stats().hellos.Value(), 1u);
}

// cert-manager renews in place: new connections get the new certificate.
TEST(tls_ingest, ARotatedServerCertificateIsServedWithoutARestart) {
  Fixture f;
  ASSERT_TRUE(f.analyzer.ok());
  const TlsFiles client = f.pki.Issue("h1", "DNS:h1", false);
  const auto served = [&] {
    auto stub = f.As(client);
    grpc::ClientContext context;
    v1::HelloReply reply;
    if (!stub->Hello(&context, MakeHello("h1", 1), &reply).ok()) return std::string("failed");
    const auto pem = context.auth_context()->FindPropertyValues("x509_pem_cert");
    return pem.empty() ? std::string("none") : std::string(pem[0].data(), pem[0].size());
  };
  const std::string before = served();
  ASSERT_EQ(before, Read(f.server.cert));
  f.pki.Issue("analyzer", "DNS:hostmesh-analyzer,IP:127.0.0.1", true);  // same files, new pair
  const std::string renewed = Read(f.server.cert);
  ASSERT_NE(renewed, before);
  EXPECT_TRUE(Eventually([&] { return served() == renewed; }, 30s));
}

// The agent's own uploader, as configured by analyzer.tls.
TEST(tls_ingest, TheAgentsUploaderDeliversOverMutualTls) {
  Fixture f;
  ASSERT_TRUE(f.analyzer.ok());
  agent::upload::UploaderOptions options;
  options.analyzer_address = f.analyzer.address();
  options.security.files = f.pki.Issue("h003", "DNS:h003", false);
  options.security.server_name = "hostmesh-analyzer";
  options.engine.upload.batch_max_results = 10;
  options.engine.upload.batch_max_age = 20ms;
  options.engine.upload.backoff_initial = 10ms;
  options.engine.upload.backoff_max = 100ms;
  options.engine.upload.hello_timeout = 5s;
  options.jitter_seed = 1;
  agent::upload::Uploader uploader(f.clock, options, MakeHello("h003", 5));
  uploader.Start();
  for (std::uint64_t i = 0; i < 100; ++i) {
    v1::ProbeResult r;
    r.set_src_nic(static_cast<std::uint32_t>(i % 4));
    r.set_dst_nic(static_cast<std::uint32_t>((i + 1) % 4));
    r.set_sequence(i);
    r.set_send_time_ns(f.clock.RealtimeNow().time_since_epoch().count());
    uploader.Append(r);
  }
  EXPECT_TRUE(uploader.Shutdown(f.clock.MonotonicNow() + 20s));
  EXPECT_EQ(uploader.Counters().batches_acknowledged, 10u);
  EXPECT_EQ(f.analyzer.store().CountResultsByAgent().at("h003"), 100u);
}

// Bytes that are no UploadBatch once ended the stream with OK, like a half-close.
// The refusal comes after the tarpit's delay (refusal_tarpit.h): a peer that
// reopens refused streams gets a few refusals a second, not thousands. Only a
// lower bound on time, so a loaded machine cannot fail it.
TEST(tls_ingest, GarbageOnTheUploadStreamIsInvalidArgumentAfterTheRefusalDelay) {
  TempDir dir;
  SystemClock clock;
  ingest::IngestOptions options;
  options.refusal_delay = std::chrono::milliseconds{300};
  AnalyzerUnderTest analyzer(clock, dir.path() / "db", "127.0.0.1:0", options);
  ASSERT_TRUE(analyzer.ok());
  const auto start = std::chrono::steady_clock::now();
  auto channel = grpc::CreateChannel(analyzer.address(), grpc::InsecureChannelCredentials());
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> stream(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
          channel.get(),
          grpc::internal::RpcMethod("/hostmesh.v1.AgentIngest/Upload",
                                    grpc::internal::RpcMethod::BIDI_STREAMING),
          &context));
  const char junk[] = "\xff\xff\xff\xff\x0f garbage";
  grpc::Slice slice(junk, sizeof junk - 1);
  grpc::ByteBuffer buffer(&slice, 1);
  stream->Write(buffer);
  stream->WritesDone();
  grpc::ByteBuffer ack;
  while (stream->Read(&ack)) {
  }
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("is not a hostmesh.v1.UploadBatch"), std::string::npos);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds{300});
  EXPECT_EQ(analyzer.stats().streams_garbage.Value(), 1u);
}

// Past the global in-flight limit a stream ends with RESOURCE_EXHAUSTED, and
// the batch is not lost: the agent still holds it and resends it.
TEST(tls_ingest, OverTheInFlightLimitIsResourceExhausted) {
  TempDir dir;
  SystemClock clock;
  ingest::IngestOptions options;
  options.max_in_flight_bytes = 64;  // less than any batch
  AnalyzerUnderTest analyzer(clock, dir.path() / "db", "127.0.0.1:0", options);
  ASSERT_TRUE(analyzer.ok());
  auto stub = v1::AgentIngest::NewStub(
      grpc::CreateChannel(analyzer.address(), grpc::InsecureChannelCredentials()));
  ASSERT_TRUE(SayHello(*stub, MakeHello("h1", 7)).ok());
  auto [acks, status] = Upload(*stub, {MakeBatch("h1", 7, 1, 50, clock.RealtimeNow())});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_TRUE(acks.empty());
  EXPECT_EQ(analyzer.stats().streams_overloaded.Value(), 1u);
  EXPECT_EQ(analyzer.stats().in_flight_bytes.Value(), 0.0);
  EXPECT_EQ(analyzer.store().LastDurableBatchSeq("h1", 7), 0u);
}

// h1's next stream (carrying batch `seq`) is refused at its start for `key`,
// nothing of it taken, while h2's certificate is not held back.
void ExpectH1RefusedAtTheStart(Fixture& f, v1::AgentIngest::Stub& h1, v1::AgentIngest::Stub& h2,
                               std::uint64_t seq, const std::string& key) {
  const WallTime now = f.clock.RealtimeNow();
  auto [refused_acks, refused] = Upload(h1, {MakeBatch("h1", 7, seq, 5, now)});
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_NE(refused.error_message().find(key), std::string::npos) << refused.error_message();
  EXPECT_TRUE(refused_acks.empty());
  EXPECT_EQ(f.analyzer.stats().streams_refused.Value(), 1u);
  EXPECT_EQ(f.analyzer.store().LastDurableBatchSeq("h1", 7), seq - 1) << "nothing of it was taken";

  auto [other_acks, other] = Upload(h2, {MakeBatch("h2", 8, 1, 5, now)});
  EXPECT_TRUE(other.ok()) << "another certificate is not held back: " << other.error_message();
  EXPECT_EQ(other_acks.size(), 1u);
}

// One certificate holds at most max_streams_per_peer Upload streams open: a
// stolen one cannot pin the fleet's in-flight budget stream by stream. The
// next is refused at its start with RESOURCE_EXHAUSTED; other certificates
// are not held back; once one of its streams ends, it may open another.
TEST(tls_ingest, OneCertificateHoldsAtMostItsLimitOfUploadStreams) {
  ingest::IngestOptions options;
  options.max_streams_per_peer = 2;
  options.stream_opens_per_minute = 0;  // it reopens until the server has counted one out
  Fixture f(options);
  ASSERT_TRUE(f.analyzer.ok());
  auto h1 = f.As(f.pki.Issue("h1", "DNS:h1", false));
  auto h2 = f.As(f.pki.Issue("h2", "DNS:h2", false));
  ASSERT_TRUE(SayHello(*h1, MakeHello("h1", 7)).ok());
  ASSERT_TRUE(SayHello(*h2, MakeHello("h2", 8)).ok());
  const WallTime now = f.clock.RealtimeNow();

  // Two streams held open, each known to the analyzer by an acked batch.
  struct Open {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReaderWriter<v1::UploadBatch, v1::UploadAck>> stream;
  };
  std::vector<std::unique_ptr<Open>> held;
  for (std::uint64_t seq = 1; seq <= 2; ++seq) {
    auto open = std::make_unique<Open>();
    open->context.set_deadline(std::chrono::system_clock::now() + 30s);
    open->stream = h1->Upload(&open->context);
    ASSERT_TRUE(open->stream->Write(MakeBatch("h1", 7, seq, 5, now)));
    v1::UploadAck ack;
    ASSERT_TRUE(open->stream->Read(&ack)) << "stream " << seq;
    EXPECT_EQ(ack.status(), v1::UploadAck::STATUS_ACCEPTED);
    held.push_back(std::move(open));
  }

  ExpectH1RefusedAtTheStart(f, *h1, *h2, 3, "grpc.max_streams_per_agent");

  held.front()->stream->WritesDone();
  EXPECT_TRUE(held.front()->stream->Finish().ok());
  held.erase(held.begin());
  // The server counts the stream out when gRPC is done with it, a moment
  // after the client sees its status.
  grpc::Status again;
  std::vector<v1::UploadAck> again_acks;
  EXPECT_TRUE(Eventually([&] {
    std::tie(again_acks, again) = Upload(*h1, {MakeBatch("h1", 7, 3, 5, now)});
    return again.ok();
  })) << again.error_message();
  ASSERT_EQ(again_acks.size(), 1u);
  EXPECT_EQ(again_acks[0].status(), v1::UploadAck::STATUS_ACCEPTED);
  held.front()->stream->WritesDone();
  EXPECT_TRUE(held.front()->stream->Finish().ok());
}

// A certificate opens streams at a rate (a burst, then stream_opens_per_minute):
// a peer whose streams gRPC itself ends (a message over gRPC's size limit),
// which no refusal of the analyzer's sees, cannot reopen them at once.
TEST(tls_ingest, ACertificateOpeningStreamsFasterThanItsRateIsRefusedAtTheStart) {
  ingest::IngestOptions options;
  options.stream_opens_per_minute = 1;  // nothing refills within the test
  options.stream_open_burst = 3;
  Fixture f(options);
  ASSERT_TRUE(f.analyzer.ok());
  auto h1 = f.As(f.pki.Issue("h1", "DNS:h1", false));
  auto h2 = f.As(f.pki.Issue("h2", "DNS:h2", false));
  ASSERT_TRUE(SayHello(*h1, MakeHello("h1", 7)).ok());
  ASSERT_TRUE(SayHello(*h2, MakeHello("h2", 8)).ok());
  const WallTime now = f.clock.RealtimeNow();

  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    auto [acks, status] = Upload(*h1, {MakeBatch("h1", 7, seq, 5, now)});
    EXPECT_TRUE(status.ok()) << "stream " << seq << ": " << status.error_message();
    ASSERT_EQ(acks.size(), 1u) << "stream " << seq;
  }
  ExpectH1RefusedAtTheStart(f, *h1, *h2, 4, "grpc.stream_opens_per_minute");
}

// Bytes the analyzer throws away have an allowance of their own beside the
// quota (refused_burst_bytes): the batch that puts it in debt is still acked
// REJECTED (so an honest agent drops it, whatever its size), then the stream
// ends, and the certificate's next streams are refused at their start, before
// a byte of them is read, until the refill has paid for what was read
// (agent_quota_test: the paying).
TEST(tls_ingest, ACertificateSendingRefusedBatchesPastItsAllowanceIsRefusedAtTheStart) {
  ingest::IngestOptions options;
  options.quota.bytes_per_second = 1;  // nothing refills within the test
  options.refused_bytes_per_second = 1;
  options.refused_burst_bytes = 3000;
  Fixture f(options);
  ASSERT_TRUE(f.analyzer.ok());
  auto h1 = f.As(f.pki.Issue("h1", "DNS:h1", false));
  auto h2 = f.As(f.pki.Issue("h2", "DNS:h2", false));
  ASSERT_TRUE(SayHello(*h1, MakeHello("h1", 7)).ok());
  ASSERT_TRUE(SayHello(*h2, MakeHello("h2", 8)).ok());
  const WallTime now = f.clock.RealtimeNow();

  // Batches of a boot that never said Hello: each is REJECTED, up to the one
  // whose bytes pass the allowance (the third); the fourth is never read.
  std::vector<v1::UploadBatch> refused;
  for (std::uint64_t seq = 1; seq <= 4; ++seq) refused.push_back(MakeBatch("h1", 99, seq, 20, now));
  ASSERT_GT(refused[0].ByteSizeLong(), 1000u);
  ASSERT_LT(refused[0].ByteSizeLong(), 1500u);
  auto [acks, status] = Upload(*h1, refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_NE(status.error_message().find("refused batches"), std::string::npos)
      << status.error_message();
  ASSERT_EQ(acks.size(), 3u);
  for (const v1::UploadAck& ack : acks) EXPECT_EQ(ack.status(), v1::UploadAck::STATUS_REJECTED);

  // Its next stream ends at its start: nothing of it is read or stored.
  auto [next_acks, next] = Upload(*h1, {MakeBatch("h1", 7, 1, 5, now)});
  EXPECT_EQ(next.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << next.error_message();
  EXPECT_NE(next.error_message().find("over their byte quota"), std::string::npos)
      << next.error_message();
  EXPECT_TRUE(next_acks.empty());
  EXPECT_EQ(f.analyzer.store().LastDurableBatchSeq("h1", 7), 0u);

  auto [other_acks, other] = Upload(*h2, {MakeBatch("h2", 8, 1, 5, now)});
  EXPECT_TRUE(other.ok()) << "another certificate is not held back: " << other.error_message();
  ASSERT_EQ(other_acks.size(), 1u);
  EXPECT_EQ(other_acks[0].status(), v1::UploadAck::STATUS_ACCEPTED);
}

}  // namespace
}  // namespace hostmesh::analyzer::ingest
