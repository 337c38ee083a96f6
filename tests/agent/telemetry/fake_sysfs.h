#pragma once

// Fake sysfs trees in a temp dir, laid out as Linux documents them for the
// two RDMA drivers that matter here: mlx5 (ConnectX; IB PMA counters/ plus
// hw_counters/, a PCI function with AER) and rxe (soft-RoCE; hw_counters/
// only, no PCI function). Every file the driver has is written, not only the
// ones the agent reads, so a reader picking the wrong file shows.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace hostmesh::agent::telemetry::testing {

class FakeSysfs {
 public:
  FakeSysfs() {
    std::string pattern = ::testing::TempDir() + "hm_sysfs_XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) root_ = pattern;
  }
  ~FakeSysfs() {
    std::error_code ignored;
    if (!root_.empty()) std::filesystem::remove_all(root_, ignored);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  const std::filesystem::path& root() const { return root_; }

  void Write(const std::string& relative, const std::string& content) {
    const std::filesystem::path path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << content;
  }
  void Remove(const std::string& relative) { std::filesystem::remove_all(root_ / relative); }
  // A directory in place of the file: open works, read fails (EISDIR), even
  // for root, whom chmod 000 would not stop.
  void MakeUnreadable(const std::string& relative) {
    Remove(relative);
    std::filesystem::create_directories(root_ / relative);
  }
  // `relative` becomes a symlink to `target` (relative to the link's folder, as sysfs does).
  void Link(const std::string& relative, const std::string& target) {
    const std::filesystem::path path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::filesystem::create_directory_symlink(target, path);
  }

 private:
  std::filesystem::path root_;
};

// Counts the opens of the entries of one directory of a tree (inotify
// IN_OPEN, queued by the kernel before open() returns, so no waiting): the
// proof that a value was, or was not, read.
class OpenCounter {
 public:
  OpenCounter(const FakeSysfs& fs, const std::string& dir)
      : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    EXPECT_GE(fd_, 0);
    // IN_CLOSE_NOWRITE too, so that two opens of one file are two events
    // (inotify merges an event identical to the one queued last).
    EXPECT_GE(::inotify_add_watch(fd_, (fs.root() / dir).c_str(), IN_OPEN | IN_CLOSE_NOWRITE), 0);
  }
  ~OpenCounter() {
    if (fd_ >= 0) ::close(fd_);
  }
  OpenCounter(const OpenCounter&) = delete;
  OpenCounter& operator=(const OpenCounter&) = delete;

  // Opens of each entry since the last call.
  std::map<std::string, int> Take() {
    std::map<std::string, int> opens;
    alignas(inotify_event) char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n <= 0) break;
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        if ((event->mask & IN_OPEN) != 0 && event->len > 0) ++opens[event->name];
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
    return opens;
  }

 private:
  int fd_;
};

// Counter values of one mlx5 port; every other documented file reads 0.
struct Mlx5Port {
  std::map<std::string, std::uint64_t> counters;     // counters/<name>
  std::map<std::string, std::uint64_t> hw_counters;  // hw_counters/<name>
  std::string state = "4: ACTIVE";
  std::string phys_state = "5: LinkUp";
};

inline constexpr const char* kMlx5Counters[] = {"VL15_dropped",
                                                "excessive_buffer_overrun_errors",
                                                "link_downed",
                                                "link_error_recovery",
                                                "local_link_integrity_errors",
                                                "multicast_rcv_packets",
                                                "multicast_xmit_packets",
                                                "port_rcv_constraint_errors",
                                                "port_rcv_data",
                                                "port_rcv_errors",
                                                "port_rcv_packets",
                                                "port_rcv_remote_physical_errors",
                                                "port_rcv_switch_relay_errors",
                                                "port_xmit_constraint_errors",
                                                "port_xmit_data",
                                                "port_xmit_discards",
                                                "port_xmit_packets",
                                                "port_xmit_wait",
                                                "symbol_error",
                                                "unicast_rcv_packets",
                                                "unicast_xmit_packets"};
inline constexpr const char* kMlx5HwCounters[] = {"duplicate_request",
                                                  "implied_nak_seq_err",
                                                  "lifespan",
                                                  "local_ack_timeout_err",
                                                  "np_cnp_sent",
                                                  "np_ecn_marked_roce_packets",
                                                  "out_of_buffer",
                                                  "out_of_sequence",
                                                  "packet_seq_err",
                                                  "req_cqe_error",
                                                  "req_cqe_flush_error",
                                                  "req_remote_access_errors",
                                                  "req_remote_invalid_request",
                                                  "resp_cqe_error",
                                                  "resp_cqe_flush_error",
                                                  "resp_local_length_error",
                                                  "resp_remote_access_errors",
                                                  "rnr_nak_retry_err",
                                                  "roce_adp_retrans",
                                                  "roce_adp_retrans_to",
                                                  "roce_slow_restart",
                                                  "roce_slow_restart_cnps",
                                                  "roce_slow_restart_trans",
                                                  "rp_cnp_handled",
                                                  "rp_cnp_ignored",
                                                  "rx_atomic_requests",
                                                  "rx_icrc_encapsulated",
                                                  "rx_read_requests",
                                                  "rx_write_requests"};
inline constexpr const char* kRxeHwCounters[] = {"sent_pkts",           "rcvd_pkts",
                                                 "duplicate_request",   "out_of_seq_request",
                                                 "rcvd_rnr_err",        "send_rnr_err",
                                                 "rcvd_seq_err",        "ack_deferred",
                                                 "retry_exceeded_err",  "retry_rnr_exceeded_err",
                                                 "completer_retry_err", "send_err",
                                                 "link_downed",         "rdma_sends",
                                                 "rdma_recvs"};

inline std::string Value(const std::map<std::string, std::uint64_t>& values,
                         const std::string& name) {
  const auto it = values.find(name);
  return std::to_string(it == values.end() ? 0 : it->second) + "\n";
}

// mlx5 device `dev` port 1 with netdev `netdev` on PCI function `bdf`.
inline void AddMlx5(FakeSysfs& fs, const std::string& dev, const std::string& netdev,
                    const std::string& bdf, const Mlx5Port& port) {
  const std::string ports = "class/infiniband/" + dev + "/ports/1/";
  for (const char* name : kMlx5Counters) {
    fs.Write(ports + "counters/" + name, Value(port.counters, name));
  }
  for (const char* name : kMlx5HwCounters) {
    fs.Write(ports + "hw_counters/" + name, Value(port.hw_counters, name));
  }
  fs.Write(ports + "state", port.state + "\n");
  fs.Write(ports + "phys_state", port.phys_state + "\n");
  fs.Write(ports + "rate", "100 Gb/sec (4X EDR)\n");
  fs.Write(ports + "link_layer", "Ethernet\n");
  const std::string pci = "devices/pci0000:3a/0000:3a:00.0/" + bdf;
  fs.Write(pci + "/vendor", "0x15b3\n");
  fs.Link("class/infiniband/" + dev + "/device", "../../../" + pci);
  fs.Link("class/net/" + netdev + "/device", "../../../" + pci);
  fs.Write("class/net/" + netdev + "/carrier_changes", "2\n");
  fs.Write("class/net/" + netdev + "/carrier", "1\n");
  fs.Write("class/net/" + netdev + "/operstate", "up\n");
}

// The PCIe link and AER files of a function, as the kernel prints them.
inline void SetPcie(FakeSysfs& fs, const std::string& bdf, const std::string& current_width,
                    const std::string& current_speed, std::uint64_t aer_correctable) {
  const std::string pci = "devices/pci0000:3a/0000:3a:00.0/" + bdf + "/";
  fs.Write(pci + "current_link_width", current_width + "\n");
  fs.Write(pci + "max_link_width", "16\n");
  fs.Write(pci + "current_link_speed", current_speed + "\n");
  fs.Write(pci + "max_link_speed", "16.0 GT/s PCIe\n");
  fs.Write(pci + "aer_dev_correctable",
           "RxErr " + std::to_string(aer_correctable) +
               "\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\n"
               "HeaderOF 0\nTOTAL_ERR_COR " +
               std::to_string(aer_correctable) + "\n");
  fs.Write(pci + "aer_dev_nonfatal",
           "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\n"
           "RxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nTOTAL_ERR_NONFATAL 0\n");
  fs.Write(pci + "aer_dev_fatal", "Undefined 0\nDLP 0\nTOTAL_ERR_FATAL 0\n");
}

// rxe device `dev` port 1 over `netdev`: hw_counters only, no PCI function.
inline void AddRxe(FakeSysfs& fs, const std::string& dev, const std::string& netdev,
                   const std::map<std::string, std::uint64_t>& hw_counters) {
  const std::string ports = "class/infiniband/" + dev + "/ports/1/";
  for (const char* name : kRxeHwCounters) {
    fs.Write(ports + "hw_counters/" + name, Value(hw_counters, name));
  }
  fs.Write(ports + "state", "4: ACTIVE\n");
  fs.Write(ports + "phys_state", "5: LinkUp\n");
  fs.Write("class/infiniband/" + dev + "/parent", netdev + "\n");
  fs.Write("class/net/" + netdev + "/carrier_changes", "1\n");
  fs.Write("class/net/" + netdev + "/operstate", "up\n");
}

}  // namespace hostmesh::agent::telemetry::testing
