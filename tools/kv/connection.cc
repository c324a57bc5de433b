// SPDX-License-Identifier: Apache-2.0
#include "tools/kv/connection.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "tools/kv/commands.h"

namespace commitlog::kv {
namespace {

constexpr size_t kReadChunk = 16u << 10;
// Replies buffered beyond this are sent before more requests are executed.
constexpr size_t kMaxPendingReplies = 1u << 20;
// Reads that found data without waiting before the fiber lets others run.
constexpr int kGreedyReads = 8;

class Connection {
 public:
  Connection(int fd, std::unique_ptr<ClientRegistry::Handle> client, const ConnectionEnv& env,
             Worker& worker)
      : socket_(worker.scheduler, fd, /*owned=*/true),
        client_(std::move(client)),
        env_(env),
        worker_(worker),
        context_{env.store, &env.hooks, {}, false, client_->id(), {}, client_.get()} {}

  void run() {
    if (!socket_.status().ok()) return;
    bool open = true;
    while (open) {
      if (!read()) return;  // the client left, or the connection broke
      open = execute_all();
      if (!flush()) return;
      if (open && socket_.reads_without_wait() >= kGreedyReads) yield_for_io(worker_.scheduler);
    }
  }

 private:
  // Appends what the client sent to in_; false when it is gone.
  bool read() {
    if (begin_ == end_) {
      begin_ = end_ = 0;
      if (in_.size() > (1u << 20)) {  // after a large request, give the memory back
        in_.resize(4 * kReadChunk);
        in_.shrink_to_fit();
      }
    }
    if (in_.size() - end_ < kReadChunk) {
      std::memmove(in_.data(), in_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      if (in_.size() - end_ < kReadChunk) {
        const size_t grown = std::max(in_.size() * 2, end_ + kReadChunk);
        // Counted before it is taken: a client disconnected for it never takes it.
        if (!client_->set_memory(grown + out_.capacity())) return false;
        in_.resize(grown);
      }
    }
    account();
    auto n = socket_.read_some(std::span(in_.data() + end_, in_.size() - end_));
    if (!n.ok() || *n == 0) return false;
    client_->touch();
    end_ += *n;
    return true;
  }

  // Tells the registry what the buffers hold, when that changed.
  void account() {
    const uint64_t bytes = in_.capacity() + out_.capacity();
    if (bytes == accounted_) return;
    accounted_ = bytes;
    // Disconnected or not, the socket's end tells the loop.
    [[maybe_unused]] const bool connected = client_->set_memory(bytes);
  }

  // Executes the complete requests in in_; false to close after replying.
  bool execute_all() {
    while (true) {
      const std::string_view unparsed(in_.data() + begin_, end_ - begin_);
      const resp::Limits limits = env_.auth.limits(env_.limits, authenticated_);
      resp::parse_request(unparsed, limits, &request_);
      if (request_.state == resp::Request::State::kIncomplete) {
        if (unparsed.size() <= limits.max_request + (64u << 10)) return true;
        request_.state = resp::Request::State::kError;
        request_.error = "Protocol error: request too large";
      }
      if (request_.state == resp::Request::State::kError) {
        env_.counters.protocol_errors.fetch_add(1, std::memory_order_relaxed);
        resp::error(&out_, "ERR " + request_.error);
        return false;
      }
      begin_ += request_.consumed;
      if (request_.args.empty()) continue;
      env_.counters.commands.fetch_add(1, std::memory_order_relaxed);
      if (!env_.auth.admit(request_.args, &authenticated_, &out_)) continue;
      context_.request_bytes = in_.capacity();
      execute(request_.args, context_, &out_);
      if (context_.quit) return false;
      if (out_.size() >= kMaxPendingReplies && !flush()) return false;
    }
  }

  // Waits for the fence, then sends the replies; false when the connection
  // must close (log failure, or the client is gone).
  bool flush() {
    bool ok = true;
    if (context_.fence.position()) {
      Status durable = worker_.durability->wait(*context_.fence.position(), released_by_);
      context_.fence.clear();
      if (!durable.ok()) {
        env_.counters.durability_failures.fetch_add(1, std::memory_order_relaxed);
        out_.clear();
        resp::error(&out_, "ERR commit log: " + durable.to_string());
        ok = false;
      }
    }
    if (!out_.empty()) {
      account();
      ok = socket_.write_all(out_).ok() && ok;
      client_->touch();
      out_.clear();
      if (out_.capacity() > kMaxPendingReplies) std::string().swap(out_);  // after a large reply
      account();
    }
    return ok;
  }

  Socket socket_;
  std::unique_ptr<ClientRegistry::Handle> client_;  // before socket_ closes the fd
  const ConnectionEnv& env_;
  Worker& worker_;
  CommandContext context_;
  std::string in_;  // in_[begin_, end_) is received and not yet executed
  size_t begin_ = 0;
  size_t end_ = 0;
  std::string out_;
  resp::Request request_;
  uint64_t released_by_ = 0;  // see ThreadDurability::wait()
  bool authenticated_ = false;
  uint64_t accounted_ = 0;  // what client_ was last told the buffers hold
};

}  // namespace

void serve_connection(int fd, std::unique_ptr<ClientRegistry::Handle> client,
                      const ConnectionEnv& env, Worker& worker) {
  env.counters.connections_received.fetch_add(1, std::memory_order_relaxed);
  env.counters.connected.fetch_add(1, std::memory_order_relaxed);
  {
    Connection connection(fd, std::move(client), env, worker);
    connection.run();
  }
  env.counters.connected.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace commitlog::kv
