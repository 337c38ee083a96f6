#include "agent/verbs/completion_queue.h"

#include <algorithm>
#include <array>
#include <cerrno>

#include "agent/verbs/poll_chunks.h"

namespace hostmesh::agent::verbs {

const char* CompletionTimestampModeName(CompletionTimestampMode mode) {
  switch (mode) {
    case CompletionTimestampMode::kNone:
      return "none";
    case CompletionTimestampMode::kRawClock:
      return "raw NIC clock";
    case CompletionTimestampMode::kWallclock:
      return "NIC wall clock";
  }
  return "?";
}

VerbsResult<CompletionQueue> CompletionQueue::Create(ibv_context* context,
                                                     ibv_comp_channel* channel, int entries,
                                                     bool want_timestamps,
                                                     const std::string& device_name) {
  CompletionQueue queue;
  if (want_timestamps) {
    // Wall-clock stamps need the PHC in real-time mode; providers refuse the
    // flag otherwise, so each richer combination is tried first.
    struct Attempt {
      std::uint64_t flags;
      CompletionTimestampMode mode;
      bool raw;
    };
    constexpr std::array<Attempt, 3> kAttempts{{
        {IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
         CompletionTimestampMode::kWallclock, true},
        {IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, CompletionTimestampMode::kWallclock, false},
        {IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, CompletionTimestampMode::kRawClock, true},
    }};
    for (const Attempt& attempt : kAttempts) {
      ibv_cq_init_attr_ex attr{};
      attr.cqe = static_cast<std::uint32_t>(entries);
      attr.channel = channel;
      attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | attempt.flags;
      if (ibv_cq_ex* cq = ibv_create_cq_ex(context, &attr)) {
        queue.extended_ = UniqueCqEx(cq);
        queue.mode_ = attempt.mode;
        queue.has_raw_ = attempt.raw;
        return queue;
      }
    }
  }
  errno = 0;
  ibv_cq* cq = ibv_create_cq(context, entries, nullptr, channel, 0);
  if (cq == nullptr) return ErrnoError("ibv_create_cq(" + device_name + ")", errno ? errno : EIO);
  queue.plain_ = UniqueCq(cq);
  return queue;
}

ibv_cq* CompletionQueue::cq() const {
  return extended_ ? ibv_cq_ex_to_cq(extended_.get()) : plain_.get();
}

CqPollResult CompletionQueue::Poll(std::span<Completion> out) {
  if (out.empty()) return {};
  return extended_ ? PollExtended(out) : PollPlain(out);
}

CqPollResult CompletionQueue::PollExtended(std::span<Completion> out) {
  ibv_cq_ex* cq = extended_.get();
  ibv_poll_cq_attr attr{};
  const auto read = [&](Completion& c) {
    c = Completion{};
    c.wr_id = cq->wr_id;
    c.status = cq->status;
    c.vendor_err = ibv_wc_read_vendor_err(cq);
    // Only wr_id, status and vendor_err are defined for a failed completion.
    if (c.status == IBV_WC_SUCCESS) {
      c.byte_len = ibv_wc_read_byte_len(cq);
      if (has_raw_) c.raw_ts = ibv_wc_read_completion_ts(cq);
      if (mode_ == CompletionTimestampMode::kWallclock) {
        c.wallclock_ns = ibv_wc_read_completion_wallclock_ns(cq);
      }
    }
  };
  return PollCursor(
      out, [&] { return ibv_start_poll(cq, &attr); }, [&] { return ibv_next_poll(cq); }, read,
      [&] { ibv_end_poll(cq); });
}

CqPollResult CompletionQueue::PollPlain(std::span<Completion> out) {
  std::array<ibv_wc, 16> wcs{};
  // The caller reads "fewer than asked" as drained: poll chunk after chunk.
  return PollInChunks(out, wcs.size(), [&](std::span<Completion> chunk) {
    const int got = ibv_poll_cq(plain_.get(), static_cast<int>(chunk.size()), wcs.data());
    // Providers return -1 or -errno; -1 says nothing more specific than EIO.
    if (got < 0) return CqPollResult{0, got == -1 ? EIO : -got};
    for (int i = 0; i < got; ++i) {
      const ibv_wc& wc = wcs[static_cast<std::size_t>(i)];
      chunk[static_cast<std::size_t>(i)] =
          Completion{wc.wr_id, wc.status, wc.vendor_err, wc.byte_len, 0, 0};
    }
    return CqPollResult{static_cast<std::size_t>(got), 0};
  });
}

}  // namespace hostmesh::agent::verbs
