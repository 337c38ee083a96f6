// StreamsPerPeer: the count of Upload streams per certificate (pure logic).
#include "analyzer/ingest/streams_per_peer.h"

#include <gtest/gtest.h>

namespace hostmesh::analyzer::ingest {
namespace {

PeerIdentity Cert(std::vector<std::string> dns) {
  return PeerIdentity::FromSans(dns, {}, "gpu.example");
}

TEST(StreamsPerPeer, ACertificateOpensUpToItsLimitAndAgainAfterAClose) {
  StreamsPerPeer streams(2);
  const std::string h1 = StreamsPerPeer::KeyOf(Cert({"h1"}));
  const std::string h2 = StreamsPerPeer::KeyOf(Cert({"h2"}));
  EXPECT_TRUE(streams.TryOpen(h1));
  EXPECT_TRUE(streams.TryOpen(h1));
  EXPECT_FALSE(streams.TryOpen(h1));
  EXPECT_EQ(streams.Open(h1), 2u) << "a refused stream is not counted";
  EXPECT_TRUE(streams.TryOpen(h2)) << "another certificate has its own count";
  streams.Close(h1);
  EXPECT_TRUE(streams.TryOpen(h1));
  streams.Close(h1);
  streams.Close(h1);
  EXPECT_EQ(streams.Open(h1), 0u);
  streams.Close(h1);  // one close too many does not underflow
  EXPECT_EQ(streams.Open(h1), 0u);
  EXPECT_TRUE(streams.TryOpen(h1));
}

TEST(StreamsPerPeer, TheKeyIsTheSetOfNamesWhateverTheirOrder) {
  EXPECT_EQ(StreamsPerPeer::KeyOf(Cert({"a", "b"})), StreamsPerPeer::KeyOf(Cert({"b", "a"})));
  EXPECT_NE(StreamsPerPeer::KeyOf(Cert({"ab"})), StreamsPerPeer::KeyOf(Cert({"a", "b"})));
  EXPECT_NE(StreamsPerPeer::KeyOf(Cert({"a"})), StreamsPerPeer::KeyOf(Cert({"a", "b"})));
}

TEST(StreamsPerPeer, ACertificateWithoutNamesIsCountedThePlaintextOptInIsNot) {
  StreamsPerPeer streams(1);
  const std::string unnamed = StreamsPerPeer::KeyOf(Cert({}));
  EXPECT_FALSE(unnamed.empty());
  EXPECT_TRUE(streams.TryOpen(unnamed));
  EXPECT_FALSE(streams.TryOpen(unnamed));
  const std::string anyone = StreamsPerPeer::KeyOf(PeerIdentity::Anyone());
  EXPECT_TRUE(anyone.empty());
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(streams.TryOpen(anyone));
}

TEST(StreamsPerPeer, ALimitOfZeroIsNoLimit) {
  StreamsPerPeer streams(0);
  const std::string h1 = StreamsPerPeer::KeyOf(Cert({"h1"}));
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(streams.TryOpen(h1));
}

}  // namespace
}  // namespace hostmesh::analyzer::ingest
