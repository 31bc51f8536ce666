package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * Sends concurrent decisions of a policy together. While {@code maxInFlight} script calls of a policy are in flight
 * (per Cluster hash slot, when keys may live on different nodes), later requests wait in the policy's lane and go as
 * one call when one returns, or as soon as half a batch is waiting. The script decides them one after the other, in
 * arrival order, each atomically, so exactness is unchanged; a busy policy or a hot key costs far fewer round trips,
 * and no decision ever takes more than one.
 * <p>
 * Waiting callers have no timer of their own, which would cost each decision a kernel timer: a {@link Watchdog}
 * thread fails the overdue ones, looking only at the lanes that have something waiting or in flight. Should that
 * thread not run (not started yet, or ended by an error), callers wait with a deadline of their own instead, so
 * nothing ever waits forever. The thread starts with the first decision or {@link #start()}, and stops on
 * {@link #close()}.
 */
final class Coalescer implements AutoCloseable {

	/** Sends one batch; the future completes once every decision of the batch is completed. */
	interface Sender {

		CompletableFuture<?> send(PolicyScript script, List<PendingDecision> batch);

	}

	static final IllegalStateException CLOSED = new IllegalStateException("Redis rate limit store is closed") {

		@Override
		public synchronized Throwable fillInStackTrace() {
			return this; // shared: a stack trace would name whoever loaded the class
		}

	};

	/** The failure of an overdue decision, told apart by identity; it carries no stack trace. */
	static final Exception OVERDUE = new Exception("overdue", null, false, false) {
	};

	private static final ThreadLocal<Boolean> DISPATCHING = ThreadLocal.withInitial(() -> false);

	/**
	 * How many calls a busy lane may have in flight: beyond {@code maxInFlight}, only calls carrying at least half
	 * a full batch.
	 */
	private static final int MAX_IN_FLIGHT_WHEN_BUSY = 8;

	private final Sender sender;

	private final boolean perSlot;

	private final long timeoutNanos;

	private final int maxBatchSize;

	private final int maxInFlight;

	/** Every lane, for {@link #close()} to release what waits in it. */
	private final ConcurrentLinkedQueue<Lane> allLanes = new ConcurrentLinkedQueue<>();

	/** The lanes with something waiting or in flight, for the {@link Watchdog}; idle lanes leave it. */
	private final ConcurrentLinkedQueue<Lane> busyLanes = new ConcurrentLinkedQueue<>();

	private final Watchdog watchdog;

	private volatile boolean closed;

	Coalescer(Sender sender, boolean perSlot, long timeoutNanos, int maxBatchSize, int maxInFlight,
			String threadName) {
		this.sender = sender;
		this.perSlot = perSlot;
		this.timeoutNanos = timeoutNanos;
		this.maxBatchSize = maxBatchSize;
		this.maxInFlight = maxInFlight;
		this.watchdog = new Watchdog(threadName);
	}

	Lanes lanes(PolicyScript script) {
		return new Lanes(script);
	}

	/**
	 * Start the watchdog thread, if it has not started yet.
	 */
	void start() {
		this.watchdog.start();
	}

	/**
	 * Queue a decision in its lane, send what the lane may send, and wait for the answer.
	 * @throws ExecutionException with {@link #OVERDUE} or {@link #CLOSED} as its cause, or the store's failure
	 * @throws TimeoutException when the watchdog does not run and the caller's own deadline passed
	 */
	Decision decide(Lanes lanes, PendingDecision call) throws ExecutionException, InterruptedException, TimeoutException {
		boolean watched = this.watchdog.running;
		if (!watched) {
			this.watchdog.start();
		}
		Lane lane = lanes.lane(call.keys[0]);
		lane.waiting.offer(call);
		lane.waitingCount.incrementAndGet();
		lane.watch(this.busyLanes);
		dispatch(lanes.script, lane, call.start);
		if (this.closed) {
			call.fail(CLOSED); // closed as this call joined: close() may not have seen it
		}
		if (watched && this.watchdog.running) {
			return call.result.get();
		}
		long remaining = this.timeoutNanos - (System.nanoTime() - call.start);
		try {
			return call.result.get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			call.abandoned = true;
			throw ex;
		}
	}

	/**
	 * Send what waits in the lane, as long as fewer than {@code maxInFlight} calls are in flight. Called after a
	 * request joins the lane and after a call of the lane returns, so that one of them always sends what waits.
	 */
	private void dispatch(PolicyScript script, Lane lane, long now) {
		if (DISPATCHING.get()) {
			// A call that failed at once re-enters from its completion: the dispatch below this frame goes on
			// sending, without one stack frame per batch.
			return;
		}
		DISPATCHING.set(true);
		try {
			dispatchWaiting(script, lane, now);
		}
		finally {
			DISPATCHING.set(false);
		}
	}

	private void dispatchWaiting(PolicyScript script, Lane lane, long now) {
		int maxBatchSize = batchSize(script);
		while (lane.waitingCount.get() > 0) {
			int inFlight = lane.inFlight.get();
			// Up to maxInFlight calls go out at once; beyond that, only full batches, so that a busy lane keeps Redis
			// fed without paying a round trip per decision.
			boolean mayGo = inFlight < this.maxInFlight || (inFlight < MAX_IN_FLIGHT_WHEN_BUSY
					&& lane.waitingCount.get() >= Math.max(1, maxBatchSize / 2));
			if (!mayGo) {
				if (inFlight >= this.maxInFlight && lane.forgetOverdueFlight(now, this.timeoutNanos)) {
					continue;
				}
				return; // a call in flight will dispatch when it returns
			}
			if (!lane.inFlight.compareAndSet(inFlight, inFlight + 1)) {
				continue;
			}
			List<PendingDecision> batch = lane.drain(maxBatchSize);
			if (batch.isEmpty()) {
				lane.inFlight.decrementAndGet();
				continue;
			}
			Flight flight = new Flight(now, batch);
			lane.flights.offer(flight);
			if (this.closed) {
				// Closed as this call was drained: close() may not have seen it, and it must not reach Redis, where it
				// would be counted while its callers fail.
				flight.fail(CLOSED);
				lane.flights.remove(flight);
				if (flight.complete()) {
					lane.inFlight.decrementAndGet();
				}
				continue;
			}
			CompletableFuture<?> sent;
			try {
				sent = this.sender.send(script, batch);
			}
			catch (RuntimeException ex) {
				flight.fail(ex);
				sent = CompletableFuture.completedFuture(null);
			}
			sent.whenComplete((ignored, failure) -> completed(script, lane, flight));
		}
	}

	/**
	 * The most decisions of the policy one call may carry: a sliding log decision may read its whole log inside the
	 * script, so a call carries no more than {@code MAX_SLIDING_LOG_ENTRIES} entries' worth of them, which keeps one
	 * call to what one decision may cost at most.
	 */
	private int batchSize(PolicyScript script) {
		RateLimitPolicy policy = script.policy;
		if (policy.algorithm() != Algorithm.SLIDING_LOG) {
			return this.maxBatchSize;
		}
		long entries = Math.min(policy.limit(), policy.windowMillis());
		return (int) Math.max(1, Math.min(this.maxBatchSize, RateLimitPolicy.MAX_SLIDING_LOG_ENTRIES / entries));
	}

	private void completed(PolicyScript script, Lane lane, Flight flight) {
		lane.flights.remove(flight);
		if (flight.complete()) {
			lane.inFlight.decrementAndGet();
		}
		dispatch(script, lane, System.nanoTime());
	}

	/**
	 * Stop the watchdog and fail every decision still waiting or in flight.
	 */
	@Override
	public void close() {
		// Callers that join or are sent from now on see 'closed' and fail themselves; these are the others.
		this.closed = true;
		this.watchdog.stop();
		for (Lane lane : this.allLanes) {
			lane.failWaitingAndInFlight((call) -> true, CLOSED);
		}
	}

	boolean isWatchdogRunning() {
		return this.watchdog.running;
	}

	/**
	 * The lanes of one policy: one, or one per Cluster hash slot that its keys have used.
	 */
	final class Lanes {

		final PolicyScript script;

		private final @Nullable Lane single;

		private final @Nullable ConcurrentHashMap<Integer, Lane> bySlot;

		Lanes(PolicyScript script) {
			this.script = script;
			this.single = Coalescer.this.perSlot ? null : newLane();
			this.bySlot = Coalescer.this.perSlot ? new ConcurrentHashMap<>() : null;
		}

		Lane lane(byte[] firstKey) {
			Lane single = this.single;
			if (single != null) {
				return single;
			}
			ConcurrentHashMap<Integer, Lane> bySlot = Objects.requireNonNull(this.bySlot);
			Integer slot = RedisKeys.slot(firstKey);
			Lane lane = bySlot.get(slot);
			return (lane != null) ? lane : bySlot.computeIfAbsent(slot, (s) -> newLane());
		}

		private Lane newLane() {
			Lane lane = new Lane();
			Coalescer.this.allLanes.offer(lane);
			return lane;
		}

	}

	/**
	 * The requests of one policy (and hash slot): at most {@code maxInFlight} script calls in flight, the others
	 * waiting to go together when one returns. Lock-free, since every request of a busy policy passes through it.
	 */
	static final class Lane {

		final AtomicInteger inFlight = new AtomicInteger();

		final ConcurrentLinkedQueue<Flight> flights = new ConcurrentLinkedQueue<>();

		final ConcurrentLinkedQueue<PendingDecision> waiting = new ConcurrentLinkedQueue<>();

		final AtomicInteger waitingCount = new AtomicInteger();

		/** Whether this lane is in the watchdog's queue of busy lanes. */
		final AtomicBoolean watched = new AtomicBoolean();

		/**
		 * Make sure the watchdog looks at this lane; called after a request joined it.
		 */
		void watch(ConcurrentLinkedQueue<Lane> busyLanes) {
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
			Flight oldest = this.flights.peek();
			if (oldest != null && now - oldest.sentAt > timeoutNanos && oldest.complete()) {
				this.flights.remove(oldest);
				this.inFlight.decrementAndGet();
				oldest.fail(OVERDUE);
				return true;
			}
			return false;
		}

		/**
		 * Fail the calls of this lane, waiting or in flight, that {@code overdue} selects.
		 */
		void failWaitingAndInFlight(Predicate<PendingDecision> overdue, Throwable failure) {
			for (Flight flight : this.flights) {
				for (PendingDecision call : flight.batch) {
					if (!call.result.isDone() && overdue.test(call)) {
						call.fail(failure);
					}
				}
			}
			for (PendingDecision call : this.waiting) {
				if (!call.result.isDone() && overdue.test(call)) {
					call.fail(failure);
				}
			}
		}

		boolean isIdle() {
			// inFlight is taken before a batch is drained and given back once its flight is done, so no call is ever
			// out of sight between the waiting queue and the flights.
			return this.waitingCount.get() == 0 && this.inFlight.get() == 0 && this.flights.isEmpty();
		}

		List<PendingDecision> drain(int max) {
			List<PendingDecision> batch = new ArrayList<>(Math.min(max, 16));
			PendingDecision call;
			while (batch.size() < max && (call = this.waiting.poll()) != null) {
				this.waitingCount.decrementAndGet();
				if (!call.abandoned) { // a caller that gave up before its request was sent must not be counted
					batch.add(call);
				}
			}
			return batch;
		}

	}

	/**
	 * A script call in flight, completed once: by its reply, or by being forgotten as overdue.
	 */
	static final class Flight {

		final long sentAt;

		final List<PendingDecision> batch;

		private final AtomicBoolean done = new AtomicBoolean();

		Flight(long sentAt, List<PendingDecision> batch) {
			this.sentAt = sentAt;
			this.batch = batch;
		}

		void fail(Throwable failure) {
			for (PendingDecision call : this.batch) {
				call.fail(failure);
			}
		}

		boolean complete() {
			return this.done.compareAndSet(false, true);
		}

	}

	/**
	 * Fails the coalesced calls whose callers have waited longer than the timeout, every twentieth of the timeout
	 * (1 ms to 50 ms), looking only through the busy lanes, and sleeping a whole timeout while none is busy.
	 */
	private final class Watchdog implements Runnable {

		private final long tickNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1),
				Math.min(Coalescer.this.timeoutNanos / 20, TimeUnit.MILLISECONDS.toNanos(50)));

		private final Thread thread;

		private final AtomicBoolean started = new AtomicBoolean();

		/** Whether the thread runs: set before it starts, cleared when it ends, however it ends. */
		volatile boolean running;

		Watchdog(String name) {
			this.thread = new Thread(this, name);
			this.thread.setDaemon(true);
		}

		void start() {
			if (!Coalescer.this.closed && !this.started.get() && this.started.compareAndSet(false, true)) {
				this.running = true; // before the thread runs, whose end clears it
				try {
					this.thread.start();
				}
				catch (Throwable ex) {
					// No thread (out of native threads, say): callers wait with deadlines of their own.
					this.running = false;
				}
			}
		}

		@Override
		public void run() {
			try {
				watch();
			}
			finally {
				// From now on callers wait with deadlines of their own; those already waiting without one joined
				// their lane before this flag changed, so they are found here.
				this.running = false;
				for (Lane lane : Coalescer.this.allLanes) {
					lane.failWaitingAndInFlight((call) -> true, Coalescer.this.closed ? CLOSED : OVERDUE);
				}
			}
		}

		private void watch() {
			long timeoutNanos = Coalescer.this.timeoutNanos;
			boolean busy = false;
			while (!Coalescer.this.closed) {
				// Idle, a call that arrives just after this parks is looked at when it is at most a tick overdue.
				LockSupport.parkNanos(this, busy ? this.tickNanos : Math.max(this.tickNanos, timeoutNanos));
				Thread.interrupted(); // only close() wakes this thread early, and it says so with 'closed'
				busy = false;
				long now = System.nanoTime();
				for (Iterator<Lane> lanes = Coalescer.this.busyLanes.iterator(); lanes.hasNext();) {
					Lane lane = lanes.next();
					if (lane.isIdle()) {
						lanes.remove();
						lane.watched.set(false);
						// A request that joined meanwhile saw 'watched' still set and did not queue the lane.
						if (!lane.isIdle()) {
							lane.watch(Coalescer.this.busyLanes);
						}
						continue;
					}
					busy = true;
					try {
						lane.failWaitingAndInFlight((call) -> now - call.start > timeoutNanos, OVERDUE);
					}
					catch (RuntimeException ex) {
						// Nothing here is expected to fail; were it to, the other lanes must still be looked at.
					}
				}
			}
		}

		void stop() {
			LockSupport.unpark(this.thread);
		}

	}

}
