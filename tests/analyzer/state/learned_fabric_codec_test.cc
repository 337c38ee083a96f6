// The learned fabric's stored form: every field back as it was, and bytes
// that are not one refused.
#include "analyzer/state/learned_fabric_codec.h"

#include <gtest/gtest.h>

#include "hostmesh/v1/analyzer_state.pb.h"

namespace hostmesh::analyzer::state {
namespace {

using topology::Ipv4;

topology::LearnedFabric Sample() {
  topology::LearnedFabric f;
  f.devices = {{"h000", topology::Tier::kHost, -1, topology::kNone},
               {"198.18.0.0", topology::Tier::kRail, 0, topology::kNone},
               {"198.19.0.1", topology::Tier::kSpine, -1, topology::kNone},
               {"198.19.0.3", topology::Tier::kSpine, -1, 2}};
  f.ports = {{Ipv4{0xC6120000}, 1, "", -1},
             {Ipv4{0xC6120001}, 0, "nic0", 0},
             {Ipv4{0xC6130001}, 2, "", -1}};
  f.links = {{Ipv4{0xC6120001}, Ipv4{0xC6120000}, topology::LinkKind::kNic},
             {Ipv4{0xC6130000}, Ipv4{0xC6130001}, topology::LinkKind::kFabric}};
  return f;
}

TEST(LearnedFabricCodec, RoundTripsEveryField) {
  const auto decoded = DecodeLearnedFabric(EncodeLearnedFabric(Sample()));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, Sample());
}

TEST(LearnedFabricCodec, RefusesBytesThatAreNoneAndUnknownTiers) {
  EXPECT_FALSE(DecodeLearnedFabric("\xff\xff\xff"));
  v1::state::LearnedFabric bad;
  bad.add_devices()->set_tier(9);
  EXPECT_FALSE(DecodeLearnedFabric(bad.SerializeAsString()));
}

}  // namespace
}  // namespace hostmesh::analyzer::state
