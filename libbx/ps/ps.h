/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * ps-lite's API over bx: a program written for ps-lite includes this
 * header, links with libbx (pkg-config bx-pslite) and runs over bx,
 * launched as ps-lite's are (DMLC_ROLE, DMLC_NUM_SERVER,
 * DMLC_NUM_WORKER, DMLC_PS_ROOT_URI, DMLC_PS_ROOT_PORT).
 * Documentation/pslite.rst maps each name to bxps's C call.
 */
#ifndef BX_PS_PS_H_
#define BX_PS_PS_H_

#include <functional>

#include "ps/base.h"
#include "ps/internal/logging.h"
#include "ps/internal/postoffice.h"
#include "ps/kv_app.h"
#include "ps/range.h"
#include "ps/sarray.h"
#include "ps/simple_app.h"

namespace ps {

inline int NumWorkers() { return Postoffice::Get()->num_workers(); }
inline int NumServers() { return Postoffice::Get()->num_servers(); }
inline bool IsWorker() { return Postoffice::Get()->is_worker(); }
inline bool IsServer() { return Postoffice::Get()->is_server(); }
inline bool IsScheduler() { return Postoffice::Get()->is_scheduler(); }
/* This node's rank among the nodes of its role. */
inline int MyRank() { return Postoffice::Get()->my_rank(); }

/* Join the job and meet every node (ps-lite's Start). */
inline void Start(int customer_id, const char* argv0 = nullptr) {
  Postoffice::Get()->Start(customer_id, argv0, true);
}
inline void Start(const char* argv0 = nullptr) { Start(0, argv0); }
/* Join without the barrier. */
inline void StartAsync(int customer_id, const char* argv0 = nullptr) {
  Postoffice::Get()->Start(customer_id, argv0, false);
}
inline void StartAsync(const char* argv0 = nullptr) { StartAsync(0, argv0); }

/* Meet every node (@do_barrier), run the exit callback, leave. */
inline void Finalize(int customer_id, const bool do_barrier = true) {
  Postoffice::Get()->Finalize(customer_id, do_barrier);
}
inline void Finalize(const bool do_barrier = true) { Finalize(0, do_barrier); }

/* Called by Finalize() before the node goes (delete a server, say). */
inline void RegisterExitCallback(const std::function<void()>& cb) {
  Postoffice::Get()->RegisterExitCallback(cb);
}

}  // namespace ps

#endif  // BX_PS_PS_H_
