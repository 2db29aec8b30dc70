/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * ps-lite's basic names over bx (Documentation/pslite.rst): Key,
 * kMaxKey, the node groups, and the logging and check macros.
 */
#ifndef BX_PS_BASE_H_
#define BX_PS_BASE_H_

#include <cstdint>
#include <limits>

#include "ps/internal/logging.h"

namespace ps {

/* A key; keys of a request are sorted and unique. */
typedef uint64_t Key;
/* Larger than any key: the servers split [0, kMaxKey). */
static const Key kMaxKey = std::numeric_limits<Key>::max();

/* Node ids of the groups (bxps.h's BXPS_SCHEDULER, ...). */
static const int kScheduler = 1;
static const int kServerGroup = 2;
static const int kWorkerGroup = 4;

}  // namespace ps

#endif  // BX_PS_BASE_H_
