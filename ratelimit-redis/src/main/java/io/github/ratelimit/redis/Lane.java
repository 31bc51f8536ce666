package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * The requests of one policy (and hash slot): at most {@code maxInFlight} script calls in flight, the others
 * waiting to go together when one returns. Lock-free, since every request of a busy policy passes through it.
 */
final class Lane<P extends Pending> {

	final AtomicInteger inFlight = new AtomicInteger();

	final ConcurrentLinkedQueue<Flight<P>> flights = new ConcurrentLinkedQueue<>();

	final ConcurrentLinkedQueue<P> waiting = new ConcurrentLinkedQueue<>();

	final AtomicInteger waitingCount = new AtomicInteger();

	/** Whether this lane is in the watchdog's queue of busy lanes. */
	final AtomicBoolean watched = new AtomicBoolean();

	/** Whether a thread drains and sends this lane: one at a time, so that calls go in the order they joined. */
	final AtomicBoolean sending = new AtomicBoolean();

	/**
	 * Make sure the watchdog looks at this lane; called after a request joined it.
	 */
	void watch(ConcurrentLinkedQueue<Lane<?>> busyLanes) {
		if (!this.watched.get() && this.watched.compareAndSet(false, true)) {
			busyLanes.offer(this);
		}
	}

	/**
	 * Forget the oldest call in flight if it has been in flight for longer than the timeout: its callers give
	 * up, and a Redis that lost it must not block the lane.
	 * @return whether a call was forgotten
	 */
	boolean forgetOverdueFlight(long now, long timeoutNanos) {
		Flight<P> oldest = this.flights.peek();
		if (oldest != null && now - oldest.sentAt > timeoutNanos && oldest.complete()) {
			this.flights.remove(oldest);
			this.inFlight.decrementAndGet();
			oldest.fail(Coalescer.OVERDUE);
			return true;
		}
		return false;
	}

	/**
	 * Fail the calls of this lane, waiting or in flight, that {@code overdue} selects.
	 */
	void failWaitingAndInFlight(Predicate<Pending> overdue, Throwable failure) {
		for (Flight<P> flight : this.flights) {
			for (P call : flight.batch) {
				if (!call.isDone() && overdue.test(call)) {
					call.fail(failure);
				}
			}
		}
		for (P call : this.waiting) {
			if (!call.isDone() && overdue.test(call)) {
				call.fail(failure);
			}
		}
	}

	boolean isIdle() {
		// inFlight is taken before a batch is drained and given back once its flight is done, so no call is ever
		// out of sight between the waiting queue and the flights.
		return this.waitingCount.get() == 0 && this.inFlight.get() == 0 && this.flights.isEmpty();
	}

	/** Take waiting calls of at most {@code maxWeight} in all, or the first whatever its weight. */
	List<P> drain(int maxWeight) {
		List<P> batch = new ArrayList<>(Math.min(maxWeight, 16));
		int weight = 0;
		P call;
		while (weight < maxWeight && (call = this.waiting.peek()) != null) {
			if (weight > 0 && weight + call.weight > maxWeight) {
				break;
			}
			if (!this.waiting.remove(call)) {
				continue; // taken by another dispatcher meanwhile
			}
			this.waitingCount.decrementAndGet();
			if (!call.abandoned && !call.isDone()) { // a caller that gave up before it was sent is not counted
				batch.add(call);
				weight += call.weight;
			}
		}
		return batch;
	}

	/**
	 * A script call in flight, completed once: by its reply, or by being forgotten as overdue.
	 */
	static final class Flight<P extends Pending> {

		final long sentAt;

		final List<P> batch;

		private final AtomicBoolean done = new AtomicBoolean();

		Flight(long sentAt, List<P> batch) {
			this.sentAt = sentAt;
			this.batch = batch;
		}

		void fail(Throwable failure) {
			for (P call : this.batch) {
				call.fail(failure);
			}
		}

		boolean complete() {
			return this.done.compareAndSet(false, true);
		}

	}

}
