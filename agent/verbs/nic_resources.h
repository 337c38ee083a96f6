#pragma once

// The verbs objects of one opened RNIC, declared in the order they are
// created so that the implicit destructor releases them in exact reverse
// order: AHs, QP, CQ, MR, buffer, PD, completion channel, context.
//
// The layout is a template over the owner types so a test can instantiate it
// with recording deleters and check that order on the real member list.

namespace hostmesh::agent::verbs {

template <typename Traits>
struct BasicNicResources {
  typename Traits::Context context;
  typename Traits::CompChannel channel;
  typename Traits::Pd pd;
  typename Traits::Buffer buffer;  // registered below: must outlive the MR
  typename Traits::Mr mr;
  typename Traits::Cq cq;  // send and receive completions of the QP
  typename Traits::Qp qp;
  typename Traits::AhCache ahs;  // built ahead on a thread, after the QP
};

}  // namespace hostmesh::agent::verbs
