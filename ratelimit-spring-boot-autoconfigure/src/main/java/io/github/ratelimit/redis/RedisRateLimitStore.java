package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A {@link RateLimitStore} on Redis (standalone, Sentinel or Cluster) through the application's
 * {@link RedisConnectionFactory}.
 * <ul>
 * <li><b>One round trip per decision.</b> Each algorithm is one Lua script, sent with EVALSHA (EVAL when Redis lost
 * it), that reads the state, decides, writes and sets the expiry atomically, and returns what the headers need. No
 * state is read into Java and written back, so instances sharing a Redis never lose or double a count.
 * <li><b>Time from Redis.</b> The script reads {@code TIME}, so instances with skewed clocks agree on windows.
 * <li><b>Cluster-ready keys.</b> All keys of one decision share a hash tag (see {@code docs/reliability.md}).
 * <li><b>Expiry, not sweeps.</b> Every key carries a {@code PEXPIRE} until its state is back to fresh.
 * <li><b>Bounded waits.</b> A decision fails with {@link RateLimitStoreException} after {@code timeout}; it never
 * hangs the request. (Coalesced callers wait without a timer of their own, which a decision would pay for in kernel
 * time: one thread per store fails the overdue ones, at most a twentieth of the timeout late, 1 ms to 50 ms.
 * Closing the store fails the coalesced callers that still wait.)
 * <li><b>Coalescing.</b> Concurrent decisions of a policy are sent together: while {@code maxInFlight} script calls
 * of a policy are in flight (per Cluster hash slot), later requests queue and go as one call when one returns, or as
 * soon as half a batch is waiting. The
 * script decides them one after the other, in arrival order, each atomically, so exactness is unchanged; a busy
 * policy or a hot key costs far fewer round trips, and no decision ever takes more than one.
 * </ul>
 *
 * @since 0.1.0
 */
public final class RedisRateLimitStore implements RateLimitStore, AutoCloseable {

	private static final byte[] EMPTY = new byte[0];

	private static final byte[] ONE = bytes(1);

	private static final int SLOTS = 16384;

	private static final IllegalStateException CLOSED = new IllegalStateException("Redis rate limit store is closed") {

		@Override
		public synchronized Throwable fillInStackTrace() {
			return this; // shared: a stack trace would name whoever loaded the class
		}

	};

	private static final ThreadLocal<Boolean> DISPATCHING = ThreadLocal.withInitial(() -> false);

	/**
	 * How many calls a busy lane may have in flight: beyond {@code maxInFlight}, only calls carrying at least half
	 * a full batch.
	 */
	private static final int MAX_IN_FLIGHT_WHEN_BUSY = 8;

	private final ScriptExecutor executor;

	private final RedisKeys keys;

	private final boolean cluster;

	private final long timeoutNanos;

	private final Duration timeout;

	private final @Nullable TimeSource clock;

	private final byte[] leastTtl;

	private final boolean coalesce;

	private final int maxBatchSize;

	private final int maxInFlight;

	private final ConcurrentHashMap<RateLimitPolicy, PolicyLanes> policies = new ConcurrentHashMap<>();

	/** Every lane of every policy, for the {@link Watchdog} to look through. */
	private final ConcurrentLinkedQueue<Lane> lanes = new ConcurrentLinkedQueue<>();

	private final @Nullable Watchdog watchdog;

	private volatile boolean closed;

	private final LongAdder scriptCalls = new LongAdder();

	private final LongAdder decisions = new LongAdder();

	private RedisRateLimitStore(Builder builder) {
		this.keys = new RedisKeys(builder.keyPrefix);
		if (builder.connectionFactory instanceof LettuceConnectionFactory lettuce) {
			this.executor = new LettuceScriptExecutor(lettuce);
			this.cluster = lettuce.isClusterAware();
		}
		else {
			this.executor = new ConnectionScriptExecutor(builder.connectionFactory,
					Math.max(4, 2 * Runtime.getRuntime().availableProcessors()));
			this.cluster = true; // unknown topology: keep every call within one hash slot, which is always safe
		}
		this.timeout = builder.timeout;
		this.timeoutNanos = builder.timeout.toNanos();
		this.clock = builder.clock;
		this.leastTtl = bytes((builder.clock != null) ? Duration.ofHours(1).toMillis() : 0);
		this.coalesce = builder.coalesce;
		this.maxBatchSize = builder.maxBatchSize;
		this.maxInFlight = builder.maxInFlight;
		this.watchdog = this.coalesce ? new Watchdog("ratelimit-redis-timeouts-" + builder.keyPrefix) : null;
		this.executor.warmUp(RateLimitScript.all());
		if (this.watchdog != null) {
			this.watchdog.start();
		}
	}

	/**
	 * Start building a store on the given connection factory.
	 * @param connectionFactory the connection factory, usually the application's
	 * @return a builder
	 */
	public static Builder builder(RedisConnectionFactory connectionFactory) {
		return new Builder(connectionFactory);
	}

	@Override
	public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
		if (cost < 1) {
			throw new IllegalArgumentException("'cost' must be at least 1 but was " + cost);
		}
		long start = System.nanoTime();
		PolicyLanes lanes = this.policies.get(policy);
		if (lanes == null) {
			lanes = this.policies.computeIfAbsent(policy, PolicyLanes::new);
		}
		Call call = new Call(lanes.layout.keys(key), cost, start);
		if (!this.coalesce) {
			send(lanes, null, null, List.of(call));
			return await(policy, call, true);
		}
		Lane lane = lanes.lane(this.cluster ? RedisKeys.slot(call.keys[0]) : 0);
		lane.waiting.offer(call);
		lane.waitingCount.incrementAndGet();
		dispatch(lanes, lane, start);
		if (this.closed) {
			call.fail(CLOSED); // closed as this call joined: close() may not have seen it
		}
		return await(policy, call, false);
	}

	/**
	 * Send what waits in the lane, as long as fewer than {@code maxInFlight} calls are in flight. Called after a
	 * request joins the lane and after a call of the lane returns, so that one of them always sends what waits.
	 */
	private void dispatch(PolicyLanes lanes, Lane lane, long now) {
		if (DISPATCHING.get()) {
			// A call that failed at once re-enters from its completion: the dispatch below this frame goes on
			// sending, without one stack frame per batch.
			return;
		}
		DISPATCHING.set(true);
		try {
			dispatchWaiting(lanes, lane, now);
		}
		finally {
			DISPATCHING.set(false);
		}
	}

	private void dispatchWaiting(PolicyLanes lanes, Lane lane, long now) {
		while (lane.waitingCount.get() > 0) {
			int inFlight = lane.inFlight.get();
			// Up to maxInFlight calls go out at once; beyond that, only full batches, so that a busy lane keeps Redis
			// fed without paying a round trip per decision.
			boolean mayGo = inFlight < this.maxInFlight || (inFlight < MAX_IN_FLIGHT_WHEN_BUSY
					&& lane.waitingCount.get() >= Math.max(1, this.maxBatchSize / 2));
			if (!mayGo) {
				if (inFlight >= this.maxInFlight && lane.forgetOverdueFlight(now, this.timeoutNanos)) {
					continue;
				}
				return; // a call in flight will dispatch when it returns
			}
			if (!lane.inFlight.compareAndSet(inFlight, inFlight + 1)) {
				continue;
			}
			List<Call> batch = lane.drain(this.maxBatchSize);
			if (batch.isEmpty()) {
				lane.inFlight.decrementAndGet();
				continue;
			}
			Flight flight = new Flight(now, batch);
			lane.flights.offer(flight);
			if (this.closed) {
				flight.fail(CLOSED); // closed as this call was drained: close() may not have seen it
			}
			send(lanes, lane, flight, batch);
		}
	}

	private void send(PolicyLanes lanes, @Nullable Lane lane, @Nullable Flight flight, List<Call> batch) {
		int keysPerCall = batch.get(0).keys.length;
		byte[][] keys = new byte[batch.size() * keysPerCall][];
		byte[][] args = new byte[lanes.args.length + batch.size()][];
		System.arraycopy(lanes.args, 0, args, 0, lanes.args.length);
		args[0] = (this.clock != null) ? bytes(this.clock.currentTimeMillis()) : EMPTY;
		for (int i = 0; i < batch.size(); i++) {
			Call call = batch.get(i);
			System.arraycopy(call.keys, 0, keys, i * keysPerCall, keysPerCall);
			args[lanes.args.length + i] = (call.cost == 1) ? ONE : bytes(call.cost);
		}
		this.scriptCalls.increment();
		this.decisions.add(batch.size());
		CompletableFuture<List<Object>> result;
		try {
			result = this.executor.execute(lanes.script, keys, args);
		}
		catch (RuntimeException ex) {
			result = CompletableFuture.failedFuture(ex);
		}
		result.whenComplete((answers, failure) -> completed(lanes, lane, flight, batch, answers, failure));
	}

	private void completed(PolicyLanes lanes, @Nullable Lane lane, @Nullable Flight flight, List<Call> batch,
			@Nullable List<Object> answers, @Nullable Throwable failure) {
		long capacity = lanes.policy.capacity();
		for (int i = 0; i < batch.size(); i++) {
			Call call = batch.get(i);
			if (failure != null || answers == null || answers.size() < 4 * batch.size()) {
				call.result.completeExceptionally((failure != null) ? failure
						: new IllegalStateException("unexpected reply from the rate limit script: " + answers));
			}
			else {
				int offset = 4 * i;
				call.result.complete(new Decision(number(answers, offset) == 1, capacity, number(answers, offset + 1),
						number(answers, offset + 2), number(answers, offset + 3), Decision.Origin.STORE));
			}
		}
		if (lane != null && flight != null) {
			lane.flights.remove(flight);
			if (flight.complete()) {
				lane.inFlight.decrementAndGet();
			}
			dispatch(lanes, lane, System.nanoTime());
		}
	}

	private static long number(List<Object> answers, int index) {
		return ((Number) answers.get(index)).longValue();
	}

	/**
	 * Wait for the decision: with a timer of its own when {@code timed}, else until the {@link Watchdog} fails the
	 * call as overdue.
	 */
	private Decision await(RateLimitPolicy policy, Call call, boolean timed) {
		try {
			if (timed) {
				long remaining = this.timeoutNanos - (System.nanoTime() - call.start);
				return call.result.get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
			}
			return call.result.get();
		}
		catch (TimeoutException ex) {
			call.abandoned = true;
			throw timedOut(policy);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			if (cause == Watchdog.OVERDUE) {
				throw timedOut(policy);
			}
			throw new RateLimitStoreException(
					"Redis failed to decide for policy '" + policy.name() + "': " + cause.getMessage(), cause);
		}
		catch (InterruptedException ex) {
			call.abandoned = true;
			Thread.currentThread().interrupt();
			throw new RateLimitStoreException("Interrupted while waiting for Redis for policy '" + policy.name() + "'",
					ex);
		}
	}

	private RateLimitStoreException timedOut(RateLimitPolicy policy) {
		return new RateLimitStoreException(
				"Redis did not answer within " + this.timeout.toMillis() + "ms for policy '" + policy.name() + "'");
	}

	/**
	 * Return how many script calls were sent to Redis.
	 * @return the number of script calls
	 */
	public long scriptCalls() {
		return this.scriptCalls.sum();
	}

	/**
	 * Return how many decisions were sent to Redis; more than {@link #scriptCalls()} when concurrent decisions were
	 * coalesced.
	 * @return the number of decisions
	 */
	public long decisions() {
		return this.decisions.sum();
	}

	/**
	 * Release the connection and threads of this store; the connection factory is left open.
	 */
	@Override
	public void close() {
		// Callers that join or are sent from now on see 'closed' and fail themselves; these are the others.
		this.closed = true;
		if (this.watchdog != null) {
			this.watchdog.stop();
		}
		for (Lane lane : this.lanes) {
			lane.failWaitingAndInFlight((call) -> true, CLOSED);
		}
		this.executor.close();
	}

	private static byte[] bytes(long value) {
		return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
	}

	/**
	 * The lanes of one policy (one, or one per Cluster hash slot), and the script arguments that do not change
	 * between its calls.
	 */
	private final class PolicyLanes {

		final RateLimitPolicy policy;

		final RateLimitScript script;

		final RedisKeys.Layout layout;

		final byte[][] args;

		private final AtomicReferenceArray<Lane> lanes;

		PolicyLanes(RateLimitPolicy policy) {
			this.policy = policy;
			this.script = RateLimitScript.of(policy.algorithm());
			this.layout = RedisRateLimitStore.this.keys.layout(policy);
			this.args = new byte[][] { EMPTY, bytes(policy.limit()), bytes(policy.windowMillis()), bytes(policy.burst()),
					bytes(policy.unitsPerToken()), bytes(policy.unitsPerMilli()), RedisRateLimitStore.this.leastTtl };
			this.lanes = new AtomicReferenceArray<>(RedisRateLimitStore.this.cluster ? SLOTS : 1);
		}

		Lane lane(int slot) {
			Lane lane = this.lanes.get(slot);
			if (lane == null) {
				Lane created = new Lane();
				if (this.lanes.compareAndSet(slot, null, created)) {
					RedisRateLimitStore.this.lanes.offer(created);
				}
				lane = this.lanes.get(slot);
			}
			return lane;
		}

	}

	/**
	 * The requests of one policy (and hash slot): at most {@code maxInFlight} script calls in flight, the others
	 * waiting to go together when one returns. Lock-free, since every request of a busy policy passes through it.
	 */
	private static final class Lane {

		final AtomicInteger inFlight = new AtomicInteger();

		final ConcurrentLinkedQueue<Flight> flights = new ConcurrentLinkedQueue<>();

		final ConcurrentLinkedQueue<Call> waiting = new ConcurrentLinkedQueue<>();

		final AtomicInteger waitingCount = new AtomicInteger();

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
				oldest.fail(Watchdog.OVERDUE);
				return true;
			}
			return false;
		}

		/**
		 * Fail the calls of this lane, waiting or in flight, that {@code overdue} selects.
		 */
		void failWaitingAndInFlight(Predicate<Call> overdue, Throwable failure) {
			for (Flight flight : this.flights) {
				for (Call call : flight.batch) {
					if (!call.result.isDone() && overdue.test(call)) {
						call.fail(failure);
					}
				}
			}
			for (Call call : this.waiting) {
				if (!call.result.isDone() && overdue.test(call)) {
					call.fail(failure);
				}
			}
		}

		boolean isIdle() {
			return this.waitingCount.get() == 0 && this.flights.isEmpty();
		}

		List<Call> drain(int max) {
			List<Call> batch = new ArrayList<>(Math.min(max, 16));
			Call call;
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
	private static final class Flight {

		final long sentAt;

		final List<Call> batch;

		private final AtomicBoolean done = new AtomicBoolean();

		Flight(long sentAt, List<Call> batch) {
			this.sentAt = sentAt;
			this.batch = batch;
		}

		void fail(Throwable failure) {
			for (Call call : this.batch) {
				call.fail(failure);
			}
		}

		boolean complete() {
			return this.done.compareAndSet(false, true);
		}

	}

	/**
	 * One request waiting for its decision.
	 */
	private static final class Call {

		final byte[][] keys;

		final long cost;

		/** When the caller asked, from {@link System#nanoTime()}. */
		final long start;

		final CompletableFuture<Decision> result = new CompletableFuture<>();

		volatile boolean abandoned;

		Call(byte[][] keys, long cost, long start) {
			this.keys = keys;
			this.cost = cost;
			this.start = start;
		}

		/**
		 * Give up on this call: its caller fails, and it is not sent if it has not been yet (a caller that gave up
		 * must not be counted).
		 */
		void fail(Throwable failure) {
			this.abandoned = true;
			this.result.completeExceptionally(failure);
		}

	}

	/**
	 * Fails the coalesced calls whose callers have waited longer than the timeout, so that those callers can wait
	 * without a timer: a timed wait arms a kernel timer on every decision, which costs measurably more than one
	 * thread looking through the busy lanes every twentieth of the timeout (1 ms to 50 ms), and through none while
	 * nothing waits.
	 */
	private final class Watchdog implements Runnable {

		/** The failure of an overdue call, told apart by identity; it carries no stack trace. */
		static final Exception OVERDUE = new Exception("overdue", null, false, false) {
		};

		private final long timeoutNanos = RedisRateLimitStore.this.timeoutNanos;

		private final long tickNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1),
				Math.min(this.timeoutNanos / 20, TimeUnit.MILLISECONDS.toNanos(50)));

		private final Thread thread;

		Watchdog(String name) {
			this.thread = new Thread(this, name);
			this.thread.setDaemon(true);
		}

		void start() {
			this.thread.start();
		}

		@Override
		public void run() {
			boolean busy = false;
			while (!RedisRateLimitStore.this.closed) {
				// Idle, a call that arrives just after this parks is looked at when it is at most a tick overdue.
				LockSupport.parkNanos(this, busy ? this.tickNanos : Math.max(this.tickNanos, this.timeoutNanos));
				Thread.interrupted(); // only close() wakes this thread early, and it says so with 'closed'
				busy = false;
				long now = System.nanoTime();
				for (Lane lane : RedisRateLimitStore.this.lanes) {
					if (lane.isIdle()) {
						continue;
					}
					busy = true;
					try {
						lane.failWaitingAndInFlight((call) -> now - call.start > this.timeoutNanos, OVERDUE);
					}
					catch (Throwable ex) {
						// Nothing here is expected to fail; were it to, the other lanes must still be looked at.
					}
				}
			}
		}

		void stop() {
			LockSupport.unpark(this.thread);
		}

	}

	/**
	 * Builder for {@link RedisRateLimitStore}.
	 */
	public static final class Builder {

		private final RedisConnectionFactory connectionFactory;

		private String keyPrefix = "ratelimit";

		private Duration timeout = Duration.ofMillis(200);

		private @Nullable TimeSource clock;

		private boolean coalesce = true;

		private int maxBatchSize = 64;

		private int maxInFlight = 4;

		private Builder(RedisConnectionFactory connectionFactory) {
			this.connectionFactory = connectionFactory;
		}

		/**
		 * Set the prefix of every key; {@code ratelimit} by default. It must not contain braces, which would change
		 * the Cluster hash tag.
		 * @param keyPrefix the prefix
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
			return this;
		}

		/**
		 * Set how long a decision may wait for Redis before it fails; 200ms by default. A coalesced decision may
		 * wait up to a twentieth longer (at most 50ms): the store's watchdog fails overdue ones at that interval.
		 * @param timeout the timeout
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			this.timeout = timeout;
			return this;
		}

		/**
		 * Drive the scripts with this clock instead of Redis {@code TIME}. <b>For tests only</b>: instances with
		 * skewed clocks would disagree on windows. Keys then live at least an hour, since their expiry still runs
		 * on Redis time.
		 * @param clock the clock
		 * @return this builder
		 */
		public Builder clock(TimeSource clock) {
			this.clock = clock;
			return this;
		}

		/**
		 * Set whether concurrent decisions of a policy are sent together; on by default.
		 * @param coalesce whether to coalesce
		 * @return this builder
		 */
		public Builder coalesce(boolean coalesce) {
			this.coalesce = coalesce;
			return this;
		}

		/**
		 * Set the most decisions sent in one script call; 64 by default.
		 * @param maxBatchSize the maximum, at least 1
		 * @return this builder
		 */
		public Builder maxBatchSize(int maxBatchSize) {
			if (maxBatchSize < 1) {
				throw new IllegalArgumentException("'maxBatchSize' must be at least 1 but was " + maxBatchSize);
			}
			this.maxBatchSize = maxBatchSize;
			return this;
		}

		/**
		 * Set how many script calls of one policy (per Cluster hash slot) may be in flight at once before further
		 * decisions wait to be sent together; 4 by default. (A busy lane may have up to 8, each carrying at least half
		 * a batch.)
		 * @param maxInFlight the maximum, at least 1
		 * @return this builder
		 */
		public Builder maxInFlight(int maxInFlight) {
			if (maxInFlight < 1) {
				throw new IllegalArgumentException("'maxInFlight' must be at least 1 but was " + maxInFlight);
			}
			this.maxInFlight = maxInFlight;
			return this;
		}

		/**
		 * Build the store.
		 * @return the store
		 */
		public RedisRateLimitStore build() {
			return new RedisRateLimitStore(this);
		}

	}

}
