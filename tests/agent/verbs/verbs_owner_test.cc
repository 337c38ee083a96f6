#include "agent/verbs/verbs_owner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/verbs/address_handle_cache.h"
#include "agent/verbs/nic_resources.h"

namespace hostmesh::agent::verbs {
namespace {

// Fake C objects: each knows its kind, and the deleters append it to a log.
struct FakeObject {
  std::string kind;
};
std::vector<std::string>& ReleaseLog() {
  static std::vector<std::string> log;
  return log;
}
int g_fail_with = 0;  // the errno the next release reports

struct RecordingDeleter {
  static constexpr const char* kName = "fake";
  int operator()(FakeObject* object) const {
    ReleaseLog().push_back(object->kind);
    delete object;
    return std::exchange(g_fail_with, 0);
  }
};
using FakeOwner = UniqueHandle<FakeObject, RecordingDeleter>;

FakeOwner Make(const std::string& kind) {
  return FakeOwner(new FakeObject{kind});
}

// The registered buffer is not a verbs object but must also outlive the MR.
struct FakeBuffer {
  FakeBuffer() = default;
  FakeBuffer(FakeBuffer&& other) noexcept : live(std::exchange(other.live, false)) {}
  FakeBuffer& operator=(FakeBuffer&& other) noexcept {
    live = std::exchange(other.live, false);
    return *this;
  }
  ~FakeBuffer() {
    if (live) ReleaseLog().push_back("buffer");
  }
  bool live = false;
};

struct FakeTraits {
  using Context = FakeOwner;
  using CompChannel = FakeOwner;
  using Pd = FakeOwner;
  using Buffer = FakeBuffer;
  using Mr = FakeOwner;
  using Cq = FakeOwner;
  using Qp = FakeOwner;
  using AhCache = BasicAddressHandleCache<FakeOwner>;
};

class VerbsOwnerTest : public ::testing::Test {
 protected:
  void SetUp() override { ReleaseLog().clear(); }
};

TEST_F(VerbsOwnerTest, NicResourcesReleaseInExactReverseCreationOrder) {
  {
    // Created in the order VerbsTransport creates them.
    BasicNicResources<FakeTraits> res;
    res.context = Make("context");
    res.channel = Make("channel");
    res.pd = Make("pd");
    res.buffer.live = true;
    res.mr = Make("mr");
    res.cq = Make("cq");
    res.qp = Make("qp");
    res.ahs.Insert({1, 10}, Make("ah"));
    res.ahs.Insert({2, 20}, Make("ah"));
  }
  EXPECT_EQ(ReleaseLog(), (std::vector<std::string>{"ah", "ah", "qp", "cq", "mr", "buffer", "pd",
                                                    "channel", "context"}));
}

TEST_F(VerbsOwnerTest, PartiallyBuiltResourcesReleaseOnlyWhatExists) {
  {
    BasicNicResources<FakeTraits> res;
    res.context = Make("context");
    res.channel = Make("channel");
    res.pd = Make("pd");
    // ibv_reg_mr failed here: the error path just returns.
  }
  EXPECT_EQ(ReleaseLog(), (std::vector<std::string>{"pd", "channel", "context"}));
}

TEST_F(VerbsOwnerTest, MoveTransfersOwnershipWithoutRelease) {
  FakeOwner a = Make("a");
  FakeObject* raw = a.get();
  FakeOwner b = std::move(a);
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_EQ(b.get(), raw);
  EXPECT_TRUE(ReleaseLog().empty());
  b = Make("c");  // the old object goes when replaced
  EXPECT_EQ(ReleaseLog(), (std::vector<std::string>{"a"}));
}

TEST_F(VerbsOwnerTest, ReleaseReturnsTheDeletersErrnoOnce) {
  FakeOwner a = Make("a");
  g_fail_with = 16;  // EBUSY, as ibv_dealloc_pd says while a QP still uses the PD
  EXPECT_EQ(a.Release(), 16);
  EXPECT_FALSE(a);
  EXPECT_EQ(a.Release(), 0);  // empty: nothing more to release
  EXPECT_EQ(ReleaseLog().size(), 1u);
}

TEST_F(VerbsOwnerTest, OwnersAreMoveOnly) {
  static_assert(!std::is_copy_constructible_v<FakeOwner>);
  static_assert(!std::is_copy_assignable_v<FakeOwner>);
  static_assert(std::is_nothrow_move_constructible_v<FakeOwner>);
  static_assert(std::is_nothrow_move_assignable_v<FakeOwner>);
}

}  // namespace
}  // namespace hostmesh::agent::verbs
