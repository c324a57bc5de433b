#include "tools/kv/durability.h"

namespace commitlog::kv {
namespace {

thread_local ThreadDurability* t_current = nullptr;

// ThreadDurability is touched only by fibers and the dispatcher of one
// thread, which never run at the same time: its condition variable needs no lock.
struct NoLock {
  void lock() {}
  void unlock() {}
};

bool covers(const std::optional<Position>& durable, Position position) {
  return durable && position <= *durable;
}

}  // namespace

DurabilityThread::DurabilityThread(CommitLog& log) : log_(log), thread_([this] { run(); }) {}

DurabilityThread::~DurabilityThread() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void DurabilityThread::add_worker(EpollScheduler* scheduler) {
  std::lock_guard lock(mu_);
  workers_.push_back(scheduler);
}

void DurabilityThread::request(Position position) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (covers(durable_, position) || (requested_ && position <= *requested_)) return;
    requested_ = position;
    wake = waiting_;
  }
  if (wake) cv_.notify_one();
}

DurabilityThread::Progress DurabilityThread::progress() const {
  std::lock_guard lock(mu_);
  return {durable_, error_, generation_.load(std::memory_order_relaxed)};
}

void DurabilityThread::run() {
  std::unique_lock lock(mu_);
  while (true) {
    waiting_ = true;
    cv_.wait(lock, [&] { return stopping_ || (error_.ok() && requested_ && !covers(durable_, *requested_)); });
    waiting_ = false;
    if (stopping_) return;
    const Position target = *requested_;
    lock.unlock();
    Status status = log_.wait_durable(target);
    lock.lock();
    if (status.ok()) {
      if (!covers(durable_, target)) durable_ = target;
    } else {
      error_ = status;
    }
    generation_.fetch_add(1, std::memory_order_release);
    const std::vector<EpollScheduler*> workers = workers_;
    lock.unlock();
    for (EpollScheduler* worker : workers) worker->wake();
    lock.lock();
  }
}

ThreadDurability::ThreadDurability(DurabilityThread& shared) : shared_(shared) {
  t_current = this;
  EpollScheduler* scheduler = EpollScheduler::current();
  scheduler->set_idle_hook([this] { refresh(); });
  shared_.add_worker(scheduler);
}

ThreadDurability* ThreadDurability::current() { return t_current; }

void ThreadDurability::refresh() {
  if (shared_.generation() == seen_generation_) return;
  known_ = shared_.progress();
  seen_generation_ = known_.generation;
  cv_.notify_all();
}

Status ThreadDurability::wait(Position position) {
  refresh();
  if (covers(known_.durable, position)) return {};
  shared_.request(position);
  NoLock lock;
  cv_.wait(lock, [&] { return !known_.error.ok() || covers(known_.durable, position); });
  return known_.error;
}

}  // namespace commitlog::kv
