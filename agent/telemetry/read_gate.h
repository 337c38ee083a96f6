#pragma once

// The seam between the sysfs readers and the collector's policy: before each
// value the readers ask whether they may read it now (the exclusion list and
// the back-off of values that failed say no), and after each read they report
// how it went. The readers stay plain file readers; the policy stays pure.

#include <string_view>

#include "agent/telemetry/nic_reading.h"

namespace hostmesh::agent::telemetry {

class ReadGate {
 public:
  virtual ~ReadGate() = default;
  // `item` names the value within its source: "" for the device itself (the
  // RDMA port's or netdev's directory, the ethtool ioctl), else the file
  // below it ("hw_counters/out_of_sequence", "operstate", "aer_dev_fatal")
  // or "link" for the four PCIe link files. No means the value is not read
  // at all (no open, no stat) and is no failure.
  virtual bool MayRead(Source source, std::string_view item) = 0;
  // After a read MayRead allowed: `error` is empty when it worked or the
  // value does not exist, else why it could not be read.
  virtual void Done(Source source, std::string_view item, std::string_view error) = 0;
};

// Reads everything, remembers nothing.
class OpenGate final : public ReadGate {
 public:
  bool MayRead(Source, std::string_view) override { return true; }
  void Done(Source, std::string_view, std::string_view) override {}
};

}  // namespace hostmesh::agent::telemetry
