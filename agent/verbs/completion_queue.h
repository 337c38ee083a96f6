#pragma once

// One completion queue, extended (ibv_create_cq_ex, with NIC completion
// timestamps) when the device has them, plain (ibv_create_cq) when not, behind
// one poll call so the transport has a single completion path.

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "agent/verbs/verbs_handles.h"
#include "agent/verbs/verbs_status.h"

namespace hostmesh::agent::verbs {

// What a completion's NIC timestamp is, if any.
enum class CompletionTimestampMode : std::uint8_t {
  kNone,       // plain CQ: the transport stamps completions when it polls them
  kRawClock,   // IBV_WC_EX_WITH_COMPLETION_TIMESTAMP: NIC ticks, mapped by a ClockFit
  kWallclock,  // IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK: ns, real time (PHC)
};
const char* CompletionTimestampModeName(CompletionTimestampMode mode);

// The fields the transport needs from one work completion.
struct Completion {
  std::uint64_t wr_id = 0;
  ibv_wc_status status = IBV_WC_SUCCESS;
  std::uint32_t vendor_err = 0;
  std::uint32_t byte_len = 0;      // valid when status is success
  std::uint64_t raw_ts = 0;        // kRawClock (also filled in kWallclock when the NIC gives both)
  std::uint64_t wallclock_ns = 0;  // kWallclock
};

struct CqPollResult {
  std::size_t count = 0;  // completions written
  int error = 0;          // 0, or the errno of ibv_start_poll/next_poll/poll_cq (EBUSY: retry)
};

class CompletionQueue {
 public:
  CompletionQueue() = default;

  // Creates a CQ of at least `entries` entries signalling `channel` (may be
  // null). With `want_timestamps`, tries wall-clock plus raw timestamps, then
  // raw only, then falls back to a plain CQ; the mode says what it got.
  static VerbsResult<CompletionQueue> Create(ibv_context* context, ibv_comp_channel* channel,
                                             int entries, bool want_timestamps,
                                             const std::string& device_name);

  ibv_cq* cq() const;
  CompletionTimestampMode mode() const { return mode_; }
  // True when completions carry raw NIC ticks (kRawClock, or kWallclock with both).
  bool has_raw_timestamps() const { return has_raw_; }

  // Moves up to out.size() completions into `out`; never blocks.
  CqPollResult Poll(std::span<Completion> out);

 private:
  CqPollResult PollExtended(std::span<Completion> out);
  CqPollResult PollPlain(std::span<Completion> out);

  // Exactly one of the two is set.
  UniqueCqEx extended_;
  UniqueCq plain_;
  CompletionTimestampMode mode_ = CompletionTimestampMode::kNone;
  bool has_raw_ = false;
};

}  // namespace hostmesh::agent::verbs
