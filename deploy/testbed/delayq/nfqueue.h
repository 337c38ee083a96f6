// Owner of one bound NFQUEUE (libnetfilter_queue), in the caller's network namespace.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

struct nfq_handle;
struct nfq_q_handle;
struct nfq_data;
struct nfgenmsg;

namespace hostmesh::delayq {

class NfQueue {
 public:
  // Called for every packet read, with its queue id.
  using OnPacket = std::function<void(uint32_t packet_id)>;

  // Binds queue `num`; throws std::runtime_error naming the failing step.
  NfQueue(uint16_t num, uint32_t max_len, int rcvbuf_bytes, OnPacket on_packet);
  ~NfQueue();
  NfQueue(const NfQueue&) = delete;
  NfQueue& operator=(const NfQueue&) = delete;

  int fd() const;

  // Reads every message waiting on the socket without blocking.
  void Drain();

  // Accepts packet `last_id` and every older packet still queued, in one message.
  void AcceptUpTo(uint32_t last_id);

  uint64_t overruns() const { return overruns_; }

 private:
  static int Callback(nfq_q_handle* qh, nfgenmsg* msg, nfq_data* nfa, void* self);

  nfq_handle* handle_ = nullptr;
  nfq_q_handle* queue_ = nullptr;
  OnPacket on_packet_;
  uint64_t overruns_ = 0;
};

}  // namespace hostmesh::delayq
