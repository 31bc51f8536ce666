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
import java.util.concurrent.locks.LockSupport;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * Sends concurrent calls to Redis together: the one batching layer under every script call of the store. A lane
 * carries either the decisions of one policy (its algorithm's script), or the groups of the all-or-nothing script
 * (several limits of one request, a decision of a request without waiting, refunds and charges), one lane per
 * Cluster hash slot when keys may live on different nodes. While {@code maxInFlight} script calls of a lane are in
 * flight, later calls wait in it and go as one script call when one returns, or as soon as half a batch is waiting.
 * The script decides them one after the other, in arrival order, each atomically, so exactness is unchanged; a busy
 * policy or a hot key costs far fewer round trips, and no call ever takes more than one.
 * <p>
 * Waiting callers have no timer of their own, which would cost each decision a kernel timer: a {@link Watchdog}
 * thread fails the overdue ones, looking only at the lanes that have something waiting or in flight. Should that
 * thread not run (not started yet, or ended by an error), callers wait with a deadline of their own instead, so
 * nothing ever waits forever. The thread starts with the first decision or {@link #start()}, and stops on
 * {@link #close()}.
 */
final class Coalescer implements AutoCloseable {

	/** Sends one batch of a policy's decisions; the future completes once every decision of it is completed. */
	interface Sender {

		CompletableFuture<?> send(PolicyScript script, List<PendingDecision> batch);

	}

	/** Sends one batch of a lane; the future completes once every call of the batch is completed. */
	interface BatchSender<P extends Pending> {

		CompletableFuture<?> send(List<P> batch);

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
	private final ConcurrentLinkedQueue<Lane<?>> allLanes = new ConcurrentLinkedQueue<>();

	/** The lanes with something waiting or in flight, for the {@link Watchdog}; idle lanes leave it. */
	private final ConcurrentLinkedQueue<Lane<?>> busyLanes = new ConcurrentLinkedQueue<>();

	private final Watchdog watchdog;

	private volatile boolean closed;

	/** Held while the calls of one request are queued in their lanes: see {@link #submitTogether}. */
	private final Object queuedTogether = new Object();

	Coalescer(Sender sender, boolean perSlot, long timeoutNanos, int maxBatchSize, int maxInFlight,
			String threadName) {
		this.sender = sender;
		this.perSlot = perSlot;
		this.timeoutNanos = timeoutNanos;
		this.maxBatchSize = maxBatchSize;
		this.maxInFlight = maxInFlight;
		this.watchdog = new Watchdog(threadName);
	}

	/** The lanes of one policy's decisions, sent with its algorithm's script. */
	Lanes<PendingDecision> lanes(PolicyScript script) {
		return new Lanes<>((batch) -> this.sender.send(script, batch), batchSize(script.policy), this.maxInFlight,
				MAX_IN_FLIGHT_WHEN_BUSY);
	}

	/**
	 * Lanes of calls that the sender packs into one script call, at most {@code maxBatchSize} of weight each. With
	 * {@code inOrder}, a lane has one call in flight at a time, whatever {@code maxInFlight}: calls in flight together
	 * may reach Redis in another order than they were sent (a Cluster node's connection still being made runs what
	 * waits for it last first), and the groups of one request on two hash slots must be decided in the same order on
	 * both, or concurrent requests at a limit each take one slot's last units and reject one another.
	 */
	<P extends Pending> Lanes<P> lanes(BatchSender<P> sender, boolean inOrder) {
		return inOrder ? new Lanes<>(sender, this.maxBatchSize, 1, 1)
				: new Lanes<>(sender, this.maxBatchSize, this.maxInFlight, MAX_IN_FLIGHT_WHEN_BUSY);
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
	Decision decide(Lanes<PendingDecision> lanes, PendingDecision call)
			throws ExecutionException, InterruptedException, TimeoutException {
		boolean watched = submit(lanes, call);
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
	 * Queue a call in its lane and send what the lane may send, without waiting: its future completes on the thread
	 * that receives the answer, or fails as {@link #OVERDUE} once the timeout passed (while the watchdog runs; else
	 * the caller times out with a deadline of its own).
	 * @return whether the watchdog ran when the call joined
	 */
	<P extends Pending> boolean submit(Lanes<P> lanes, P call) {
		boolean watched = this.watchdog.running;
		if (!watched) {
			this.watchdog.start();
		}
		Lane<P> lane = lanes.lane(call.keys[0]);
		lane.waiting.offer(call);
		lane.waitingCount.incrementAndGet();
		lane.watch(this.busyLanes);
		dispatch(lanes, lane, call.start);
		if (this.closed) {
			call.fail(CLOSED); // closed as this call joined: close() may not have seen it
		}
		return watched;
	}

	/**
	 * Queue calls in their lanes as {@link #submit} does, all at once with respect to other calls queued together:
	 * the calls of one request in several lanes (hash slots) then stand in every lane in the same order as those of
	 * the other requests queued so.
	 */
	<P extends Pending> void submitTogether(Lanes<P> lanes, List<P> calls) {
		if (calls.size() == 1) {
			submit(lanes, calls.get(0));
			return;
		}
		if (!this.watchdog.running) {
			this.watchdog.start();
		}
		List<Lane<P>> joined = new ArrayList<>(calls.size());
		synchronized (this.queuedTogether) { // a few queue insertions: never held while anything is sent
			for (P call : calls) {
				Lane<P> lane = lanes.lane(call.keys[0]);
				lane.waiting.offer(call);
				lane.waitingCount.incrementAndGet();
				joined.add(lane);
			}
		}
		for (int i = 0; i < joined.size(); i++) {
			Lane<P> lane = joined.get(i);
			lane.watch(this.busyLanes);
			dispatch(lanes, lane, calls.get(i).start);
		}
		if (this.closed) {
			calls.forEach((call) -> call.fail(CLOSED));
		}
	}

	/**
	 * Send what waits in the lane, as long as fewer than {@code maxInFlight} calls are in flight. Called after a
	 * request joins the lane and after a call of the lane returns, so that one of them always sends what waits.
	 */
	private <P extends Pending> void dispatch(Lanes<P> lanes, Lane<P> lane, long now) {
		// One thread at a time drains and sends a lane, so that its calls reach Redis in the order they joined: the
		// groups of one request on two hash slots are then decided in the same order on both, and concurrent
		// requests at a limit do not each take one slot's last units and reject one another. Another thread (or a
		// call that failed at once, re-entering from its completion) finds the lane taken and leaves what it queued
		// to the sender, which looks again once it has let go.
		while (lane.sending.compareAndSet(false, true)) {
			try {
				dispatchWaiting(lanes, lane, now);
			}
			finally {
				lane.sending.set(false);
			}
			if (!mayGo(lanes, lane, lane.inFlight.get())) {
				return;
			}
		}
	}

	/** Whether a call of the lane may go now: fewer than {@code maxInFlight} in flight, or a busy lane's batch. */
	private static boolean mayGo(Lanes<?> lanes, Lane<?> lane, int inFlight) {
		int waiting = lane.waitingCount.get();
		// Up to maxInFlight calls go out at once; beyond that, only full batches, so that a busy lane keeps Redis fed
		// without paying a round trip per decision.
		return waiting > 0 && (inFlight < lanes.maxInFlight
				|| (inFlight < lanes.maxInFlightWhenBusy && waiting >= Math.max(1, lanes.maxWeight / 2)));
	}

	private <P extends Pending> void dispatchWaiting(Lanes<P> lanes, Lane<P> lane, long now) {
		int maxBatchSize = lanes.maxWeight;
		while (lane.waitingCount.get() > 0) {
			int inFlight = lane.inFlight.get();
			if (!mayGo(lanes, lane, inFlight)) {
				if (inFlight >= lanes.maxInFlight && lane.forgetOverdueFlight(now, this.timeoutNanos)) {
					continue;
				}
				return; // a call in flight will dispatch when it returns
			}
			if (!lane.inFlight.compareAndSet(inFlight, inFlight + 1)) {
				continue;
			}
			List<P> batch = lane.drain(maxBatchSize);
			if (batch.isEmpty()) {
				lane.inFlight.decrementAndGet();
				continue;
			}
			Lane.Flight<P> flight = new Lane.Flight<>(now, batch);
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
				sent = lanes.sender.send(batch);
			}
			catch (RuntimeException ex) {
				flight.fail(ex);
				sent = CompletableFuture.completedFuture(null);
			}
			sent.whenComplete((ignored, failure) -> completed(lanes, lane, flight));
		}
	}

	/**
	 * The most decisions of the policy one call may carry: a sliding log decision may read its whole log inside the
	 * script, so a call carries no more than {@code MAX_SLIDING_LOG_ENTRIES} entries' worth of them, which keeps one
	 * call to what one decision may cost at most.
	 */
	private int batchSize(RateLimitPolicy policy) {
		if (!policy.algorithm().keepsLog()) {
			return this.maxBatchSize;
		}
		long entries = Math.min(policy.limit(), policy.windowMillis());
		return (int) Math.max(1, Math.min(this.maxBatchSize, RateLimitPolicy.MAX_SLIDING_LOG_ENTRIES / entries));
	}

	/**
	 * How much of a call's budget one decision of the policy takes in a lane of several policies: as much as keeps a
	 * call within what {@link #batchSize} allows each.
	 */
	int weight(RateLimitPolicy policy) {
		return Math.max(1, this.maxBatchSize / batchSize(policy));
	}

	private <P extends Pending> void completed(Lanes<P> lanes, Lane<P> lane, Lane.Flight<P> flight) {
		lane.flights.remove(flight);
		if (flight.complete()) {
			lane.inFlight.decrementAndGet();
		}
		dispatch(lanes, lane, System.nanoTime());
	}

	/**
	 * Stop the watchdog and fail every decision still waiting or in flight.
	 */
	@Override
	public void close() {
		// Callers that join or are sent from now on see 'closed' and fail themselves; these are the others.
		this.closed = true;
		this.watchdog.stop();
		for (Lane<?> lane : this.allLanes) {
			lane.failWaitingAndInFlight((call) -> true, CLOSED);
		}
	}

	/**
	 * Return whether every call queued so far ends by its deadline without a timer of its caller's: the watchdog runs,
	 * and fails what it finds overdue, or everything still waiting when it stops.
	 */
	boolean isWatchdogRunning() {
		return this.watchdog.running;
	}

	/**
	 * The lanes of one kind of call: one, or one per Cluster hash slot that their keys have used.
	 */
	final class Lanes<P extends Pending> {

		final BatchSender<P> sender;

		/** The most weight one script call carries. */
		final int maxWeight;

		/** How many calls of a lane may be in flight, and how many when it is busy (each then half a batch). */
		final int maxInFlight;

		final int maxInFlightWhenBusy;

		private final @Nullable Lane<P> single;

		private final @Nullable ConcurrentHashMap<Integer, Lane<P>> bySlot;

		Lanes(BatchSender<P> sender, int maxWeight, int maxInFlight, int maxInFlightWhenBusy) {
			this.sender = sender;
			this.maxWeight = maxWeight;
			this.maxInFlight = maxInFlight;
			this.maxInFlightWhenBusy = maxInFlightWhenBusy;
			this.single = Coalescer.this.perSlot ? null : newLane();
			this.bySlot = Coalescer.this.perSlot ? new ConcurrentHashMap<>() : null;
		}

		Lane<P> lane(byte[] firstKey) {
			Lane<P> single = this.single;
			if (single != null) {
				return single;
			}
			ConcurrentHashMap<Integer, Lane<P>> bySlot = Objects.requireNonNull(this.bySlot);
			Integer slot = RedisKeys.slot(firstKey);
			Lane<P> lane = bySlot.get(slot);
			return (lane != null) ? lane : bySlot.computeIfAbsent(slot, (s) -> newLane());
		}

		private Lane<P> newLane() {
			Lane<P> lane = new Lane<>();
			Coalescer.this.allLanes.offer(lane);
			return lane;
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
				for (Lane<?> lane : Coalescer.this.allLanes) {
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
				for (Iterator<Lane<?>> lanes = Coalescer.this.busyLanes.iterator(); lanes.hasNext();) {
					Lane<?> lane = lanes.next();
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
