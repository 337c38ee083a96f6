#include "agent/upload/upload_channel.h"

#include <utility>

namespace hostmesh::agent::upload {

ChannelEvent ChannelEvent::Opened(std::uint64_t connection, v1::HelloReply reply) {
  ChannelEvent event;
  event.kind = Kind::kOpened;
  event.connection = connection;
  event.hello_reply = std::move(reply);
  return event;
}

ChannelEvent ChannelEvent::OpenFailed(std::uint64_t connection, std::string error,
                                      bool deadline_exceeded) {
  ChannelEvent event;
  event.kind = Kind::kOpenFailed;
  event.connection = connection;
  event.ok = false;
  event.error = std::move(error);
  event.deadline_exceeded = deadline_exceeded;
  return event;
}

ChannelEvent ChannelEvent::WriteDone(std::uint64_t connection, bool ok) {
  ChannelEvent event;
  event.kind = Kind::kWriteDone;
  event.connection = connection;
  event.ok = ok;
  return event;
}

ChannelEvent ChannelEvent::Ack(std::uint64_t connection, v1::UploadAck ack) {
  ChannelEvent event;
  event.kind = Kind::kAck;
  event.connection = connection;
  event.ack = std::move(ack);
  return event;
}

ChannelEvent ChannelEvent::Closed(std::uint64_t connection, std::string error) {
  ChannelEvent event;
  event.kind = Kind::kClosed;
  event.connection = connection;
  event.ok = false;
  event.error = std::move(error);
  return event;
}

}  // namespace hostmesh::agent::upload
