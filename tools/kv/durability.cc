#include "tools/kv/durability.h"

#include <boost/fiber/fiber.hpp>

namespace commitlog::kv {
namespace {

thread_local ThreadDurability* t_current = nullptr;

// A ThreadDurability is touched only by fibers and the dispatcher of one
// thread, which never run at the same time: its condition variables need no lock.
struct NoLock {
  void lock() {}
  void unlock() {}
};

bool covers(const std::optional<Position>& durable, Position position) {
  return durable && position <= *durable;
}

void raise(std::optional<Position>& to, Position position) {
  if (!to || *to < position) to = position;
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

bool DurabilityThread::begin_direct() {
  int none = 0;
  return outstanding_.compare_exchange_strong(none, 1);
}

void DurabilityThread::end_direct(Position position, const Status& status) {
  {
    std::lock_guard lock(mu_);
    publish(position, status);
  }
  outstanding_.fetch_sub(1);
}

void DurabilityThread::request(Position position) {
  outstanding_.fetch_add(1);
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (requested_ && position <= *requested_) return;
    requested_ = position;
    wake = waiting_;
  }
  if (wake) cv_.notify_one();
}

DurabilityThread::Progress DurabilityThread::progress() const {
  std::lock_guard lock(mu_);
  return {durable_, error_, generation_.load(std::memory_order_relaxed)};
}

void DurabilityThread::publish(std::optional<Position> durable, const Status& status) {
  if (!status.ok()) {
    if (error_.ok()) error_ = status;
  } else if (durable) {
    raise(durable_, *durable);
  }
  generation_.fetch_add(1, std::memory_order_release);
}

void DurabilityThread::run() {
  std::unique_lock lock(mu_);
  while (true) {
    waiting_ = true;
    cv_.wait(lock, [&] {
      return stopping_ || (error_.ok() && requested_ && !covers(durable_, *requested_));
    });
    waiting_ = false;
    if (stopping_) return;
    const Position target = *requested_;
    lock.unlock();
    Status status = log_.wait_durable(target);
    lock.lock();
    publish(target, status);
    const std::vector<EpollScheduler*> workers = workers_;
    lock.unlock();
    for (EpollScheduler* worker : workers) worker->wake();
    lock.lock();
  }
}

ThreadDurability::ThreadDurability(DurabilityThread& shared) : shared_(shared) {
  t_current = this;
  EpollScheduler* scheduler = EpollScheduler::current();
  scheduler->set_hooks([this] { return before_sleep(); }, [this] { refresh(); });
  shared_.add_worker(scheduler);
  boost::fibers::fiber([this] { run_flusher(); }).detach();
}

ThreadDurability* ThreadDurability::current() { return t_current; }

bool ThreadDurability::covered(Position position) const {
  return !error_.ok() || covers(durable_, position);
}

Status ThreadDurability::wait(Position position) {
  refresh();
  if (!covered(position)) {
    raise(wanted_, position);
    NoLock lock;
    durable_cv_.wait(lock, [&] { return covered(position); });
  }
  return error_;
}

bool ThreadDurability::before_sleep() {
  if (flusher_busy_ || !wanted_ || covered(*wanted_)) return false;
  flusher_busy_ = true;
  flusher_cv_.notify_one();
  return true;
}

void ThreadDurability::refresh() {
  if (shared_.generation() == seen_generation_) return;
  const DurabilityThread::Progress progress = shared_.progress();
  seen_generation_ = progress.generation;
  if (progress.durable) raise(durable_, *progress.durable);
  if (!progress.error.ok()) error_ = progress.error;
  durable_cv_.notify_all();
}

void ThreadDurability::run_flusher() {
  NoLock lock;
  while (true) {
    flusher_cv_.wait(lock, [&] { return flusher_busy_; });
    const Position target = *wanted_;
    if (shared_.begin_direct()) {
      Status status = shared_.log().wait_durable(target);
      shared_.end_direct(target, status);
      refresh();
    } else {
      shared_.request(target);
      durable_cv_.wait(lock, [&] { return covered(target); });
      shared_.end_requested();
    }
    flusher_busy_ = false;
    durable_cv_.notify_all();
  }
}

}  // namespace commitlog::kv
