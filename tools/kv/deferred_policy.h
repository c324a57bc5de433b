// Lets the key-value store append under its shard locks and wait for
// durability only after releasing them.
//
// CommitLog::append() runs the sync policy's producer hook and, for batch,
// group and adaptive, waits until the mutation is durable before returning.
// The store must append while it holds the lock of the key's shard (so the
// log's order of the writes to one key is the table's order), but a lock
// held through a flush would let only one write per flush reach a hot key.
//
// So the server opens the log with "kv:<name>", a policy that wraps the
// configured one and asks it everything, but answers the log's producer
// question with "return at once" whenever the wrapped policy says "wait":
//   kWaitDurable        -> kReturn, and the caller owes a wait;
//   kRequestSyncAndWait -> kReturn, the caller owes a wait, and the request
//                          is kept in a flag that the wrapper hands to the
//                          wrapped plan() as sync_requested until a plan
//                          starts a flush (the log's own flag is cleared the
//                          same way, when a flush starts);
//   kReturn, kWaitForSyncToCatchUp (periodic's back-pressure) -> unchanged.
// append_deferred() reports the owed wait; the store pays it with
// CommitLog::wait_durable() once its locks are released. The sync thread is
// woken by that wait (a waiting producer), and plan() sees the flag.
//
// One more change to the wrapped plan(): adaptive holds a sync back for
// producers it expects to append again (SyncReason::kAdaptive). The server's
// appenders are its worker threads, and each waits for its round's flush
// blocked (durability.h); once `appenders` producers wait, nobody is left to
// append, so the hold would only add latency: the flush starts at once.
//
// Thread-safety: register once before opening the log; append_deferred()
// from any thread or fiber.
#pragma once

#include <string>
#include <string_view>

#include "commitlog/commit_log.h"

namespace commitlog::kv {

// Registers "kv:<name>" wrapping the registered policy `name` (once per
// process; `appenders` is the number of threads that append, as above) and
// returns that name, for Options::sync_policy.
[[nodiscard]] Result<std::string> register_deferred_policy(const std::string& name,
                                                           size_t appenders);

struct DeferredAppend {
  Position position;
  bool must_wait = false;  // wait_durable(position) before acknowledging
};

// Appends one mutation to a log opened with a "kv:" policy.
[[nodiscard]] Result<DeferredAppend> append_deferred(CommitLog& log, uint32_t table,
                                                     std::string_view payload);

}  // namespace commitlog::kv
