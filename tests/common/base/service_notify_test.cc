// sd_notify through a real AF_UNIX datagram socket standing in for systemd's
// NOTIFY_SOCKET, and the watchdog pacing in virtual time.
#include "common/base/service_notify.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string>

#include "common/base/unique_fd.h"

namespace hostmesh {
namespace {

using namespace std::chrono_literals;

TEST(WatchdogPacer, PingsAtOnceThenEveryHalfPeriod) {
  WatchdogPacer pacer(10s);
  const MonoTime t0{};
  EXPECT_TRUE(pacer.Due(t0));
  EXPECT_FALSE(pacer.Due(t0 + 1s));
  EXPECT_FALSE(pacer.Due(t0 + 4999ms));
  EXPECT_TRUE(pacer.Due(t0 + 5s));
  EXPECT_FALSE(pacer.Due(t0 + 9s));  // counted from the last ping, not from t0
  EXPECT_TRUE(pacer.Due(t0 + 30s));  // a late turn pings at once
}

// A bound datagram socket at a fresh path, as systemd listens on.
class FakeSystemd : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("hostmesh-notify-" + std::to_string(::getpid()) + ".sock");
    std::filesystem::remove(path_);
    fd_ = UniqueFd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(fd_.valid());
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::setenv("NOTIFY_SOCKET", path_.c_str(), 1);
    ::unsetenv("WATCHDOG_PID");
  }
  void TearDown() override {
    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("WATCHDOG_USEC");
    std::filesystem::remove(path_);
  }
  // The next message, or "" when none is waiting (sd_notify sends synchronously).
  std::string Next() {
    char buf[512];
    const ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
  }

  std::filesystem::path path_;
  UniqueFd fd_;
};

TEST_F(FakeSystemd, ReadyCarriesTheStatusLine) {
  ServiceNotifier notifier;
  EXPECT_FALSE(notifier.watchdog_period());
  notifier.Ready("judging windows");
  EXPECT_EQ(Next(), "READY=1\nSTATUS=judging windows");
  notifier.Alive(MonoTime{});  // no watchdog asked for: no ping
  EXPECT_EQ(Next(), "");
}

TEST_F(FakeSystemd, WatchdogPingsAtHalfThePeriodSystemdAsksFor) {
  ::setenv("WATCHDOG_USEC", "2000000", 1);
  ServiceNotifier notifier;
  ASSERT_TRUE(notifier.watchdog_period());
  EXPECT_EQ(*notifier.watchdog_period(), 2s);
  const MonoTime t0{};
  notifier.Alive(t0);
  EXPECT_EQ(Next(), "WATCHDOG=1");
  for (auto t = 100ms; t < 1s; t += 100ms) notifier.Alive(t0 + t);  // a busy loop
  EXPECT_EQ(Next(), "");
  notifier.Alive(t0 + 1s);
  EXPECT_EQ(Next(), "WATCHDOG=1");
}

TEST_F(FakeSystemd, AWatchdogForAnotherProcessIsNotOurs) {
  ::setenv("WATCHDOG_USEC", "2000000", 1);
  ::setenv("WATCHDOG_PID", std::to_string(::getpid() + 1).c_str(), 1);
  ServiceNotifier notifier;
  EXPECT_FALSE(notifier.watchdog_period());
  notifier.Alive(MonoTime{});
  EXPECT_EQ(Next(), "");
}

TEST_F(FakeSystemd, MalformedWatchdogSettingsMeanNoPings) {
  for (const char* usec : {"", "2s", "-5", "0"}) {
    ::setenv("WATCHDOG_USEC", usec, 1);
    ServiceNotifier notifier;
    EXPECT_FALSE(notifier.watchdog_period()) << usec;
    notifier.Alive(MonoTime{});
    EXPECT_EQ(Next(), "") << usec;
  }
  ::setenv("WATCHDOG_USEC", "2000000", 1);
  ::setenv("WATCHDOG_PID", "self", 1);
  EXPECT_FALSE(ServiceNotifier().watchdog_period());
  ::unsetenv("WATCHDOG_PID");
}

// systemd may hand an abstract socket: '@' stands for the leading NUL.
TEST(ServiceNotifier, ReachesAnAbstractSocket) {
  const std::string name = "hostmesh-notify-" + std::to_string(::getpid());
  UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(fd.valid());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  ASSERT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr),
                   static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())),
            0);
  ::setenv("NOTIFY_SOCKET", ("@" + name).c_str(), 1);
  ::unsetenv("WATCHDOG_USEC");
  ServiceNotifier().Ready("up");
  ::unsetenv("NOTIFY_SOCKET");
  char buf[64];
  const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<std::size_t>(n)), "READY=1\nSTATUS=up");
}

TEST(ServiceNotifier, OutsideSystemdEveryCallIsANoOp) {
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  ServiceNotifier notifier;
  EXPECT_FALSE(notifier.watchdog_period());
  notifier.Ready("x");
  notifier.Alive(MonoTime{});
}

}  // namespace
}  // namespace hostmesh
