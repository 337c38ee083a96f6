#include "agent/udp/tx_stamp_fifo.h"

namespace hostmesh::agent::udp {

std::uint32_t TxStampFifo::Push(const PendingSend& send) {
  if (entries_.empty()) front_id_ = next_id_;
  entries_.push_back(Entry{send, false});
  ++pending_;
  return next_id_++;
}

std::optional<PendingSend> TxStampFifo::Take(std::uint32_t opt_id) {
  // Unsigned difference: correct across the 2^32 wrap.
  const std::uint32_t index = opt_id - front_id_;
  if (index >= entries_.size() || entries_[index].taken) return std::nullopt;
  entries_[index].taken = true;
  --pending_;
  const PendingSend send = entries_[index].send;
  PopTaken();
  return send;
}

std::size_t TxStampFifo::Expire(MonoTime cutoff) {
  std::size_t expired = 0;
  // Sends are pushed in time order, so the old ones are at the front.
  while (!entries_.empty() && entries_.front().send.sent_at < cutoff) {
    if (!entries_.front().taken) {
      ++expired;
      --pending_;
    }
    entries_.pop_front();
    ++front_id_;
  }
  PopTaken();
  return expired;
}

void TxStampFifo::PopTaken() {
  while (!entries_.empty() && entries_.front().taken) {
    entries_.pop_front();
    ++front_id_;
  }
}

}  // namespace hostmesh::agent::udp
