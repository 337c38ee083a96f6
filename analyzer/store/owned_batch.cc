#include "analyzer/store/owned_batch.h"

#include <cstdlib>
#include <mutex>
#include <vector>

namespace hostmesh::analyzer::store {
namespace {

// Process-wide, like the heap it stands in front of.
struct BlockPool {
  std::mutex mu;
  std::vector<void*> free;
};
BlockPool& Pool() {
  static BlockPool* pool = new BlockPool;  // never destroyed: arenas may outlive statics
  return *pool;
}

void* TakeBlock(std::size_t size) {
  if (size == OwnedBatch::kBlockBytes) {
    BlockPool& pool = Pool();
    std::lock_guard lock(pool.mu);
    if (!pool.free.empty()) {
      void* block = pool.free.back();
      pool.free.pop_back();
      return block;
    }
  }
  return std::malloc(size);
}

void GiveBlock(void* block, std::size_t size) {
  if (size == OwnedBatch::kBlockBytes) {
    BlockPool& pool = Pool();
    std::lock_guard lock(pool.mu);
    if (pool.free.size() < OwnedBatch::kMaxPooledBlocks) {
      pool.free.push_back(block);
      return;
    }
  }
  std::free(block);
}

}  // namespace

OwnedBatch OwnedBatch::OnArena() {
  google::protobuf::ArenaOptions options;
  // Every block the same size, so every block can be pooled; an object larger
  // than a block gets a block of its own size from the heap.
  options.start_block_size = kBlockBytes;
  options.max_block_size = kBlockBytes;
  options.block_alloc = TakeBlock;
  options.block_dealloc = GiveBlock;
  OwnedBatch out;
  out.arena_ = std::make_unique<google::protobuf::Arena>(options);
  out.batch_ = google::protobuf::Arena::CreateMessage<v1::UploadBatch>(out.arena_.get());
  return out;
}

}  // namespace hostmesh::analyzer::store
