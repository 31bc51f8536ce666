package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;

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
 * hangs the request.
 * <li><b>Coalescing.</b> Concurrent decisions for the same key are sent together: while one script call for a key
 * is in flight, later requests for that key queue and go as one call when it returns, decided one after the other
 * in arrival order by the script. Exactness is unchanged; a hot key costs fewer round trips.
 * </ul>
 *
 * @since 0.1.0
 */
public final class RedisRateLimitStore implements RateLimitStore, AutoCloseable {

	private static final byte[] EMPTY = new byte[0];

	private final ScriptExecutor executor;

	private final RedisKeys keys;

	private final long timeoutNanos;

	private final Duration timeout;

	private final @Nullable TimeSource clock;

	private final byte[] leastTtl;

	private final boolean coalesce;

	private final int maxBatchSize;

	private final ConcurrentHashMap<RateLimitPolicy, PolicyLanes> policies = new ConcurrentHashMap<>();

	private final LongAdder scriptCalls = new LongAdder();

	private final LongAdder decisions = new LongAdder();

	private RedisRateLimitStore(Builder builder) {
		this.executor = (builder.connectionFactory instanceof LettuceConnectionFactory lettuce)
				? new LettuceScriptExecutor(lettuce) : new ConnectionScriptExecutor(builder.connectionFactory,
						Math.max(4, 2 * Runtime.getRuntime().availableProcessors()));
		this.keys = new RedisKeys(builder.keyPrefix);
		this.timeout = builder.timeout;
		this.timeoutNanos = builder.timeout.toNanos();
		this.clock = builder.clock;
		this.leastTtl = bytes((builder.clock != null) ? Duration.ofHours(1).toMillis() : 0);
		this.coalesce = builder.coalesce;
		this.maxBatchSize = builder.maxBatchSize;
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
		Call call = new Call(cost);
		PolicyLanes lanes = this.policies.get(policy);
		if (lanes == null) {
			lanes = this.policies.computeIfAbsent(policy, PolicyLanes::new);
		}
		if (this.coalesce) {
			enqueue(lanes, key, call, start);
		}
		else {
			send(lanes, key, null, List.of(call), 0);
		}
		return await(policy, call, start);
	}

	private void enqueue(PolicyLanes lanes, String key, Call call, long now) {
		while (true) {
			Lane lane = lanes.lanes.get(key);
			if (lane == null) {
				Lane created = new Lane();
				lane = lanes.lanes.putIfAbsent(key, created);
				if (lane == null) {
					lane = created;
				}
			}
			List<Call> batch;
			int generation;
			synchronized (lane) {
				if (lane.retired) {
					continue;
				}
				if (lane.inFlight && now - lane.sentAt < this.timeoutNanos) {
					lane.waiting.add(call);
					return;
				}
				// Idle, or the call in flight is overdue (its callers have given up): send now.
				lane.waiting.add(call);
				batch = lane.drain(this.maxBatchSize);
				lane.inFlight = true;
				lane.sentAt = now;
				generation = ++lane.generation;
			}
			send(lanes, key, lane, batch, generation);
			return;
		}
	}

	private void send(PolicyLanes lanes, String key, @Nullable Lane lane, List<Call> batch, int generation) {
		byte[][] args = new byte[lanes.args.length + batch.size()][];
		System.arraycopy(lanes.args, 0, args, 0, lanes.args.length);
		args[0] = (this.clock != null) ? bytes(this.clock.currentTimeMillis()) : EMPTY;
		for (int i = 0; i < batch.size(); i++) {
			args[lanes.args.length + i] = bytes(batch.get(i).cost);
		}
		this.scriptCalls.increment();
		this.decisions.add(batch.size());
		CompletableFuture<List<Object>> result;
		try {
			result = this.executor.execute(lanes.script, this.keys.keys(lanes.policy, key), args);
		}
		catch (RuntimeException ex) {
			result = CompletableFuture.failedFuture(ex);
		}
		result.whenComplete((answers, failure) -> completed(lanes, key, lane, batch, generation, answers, failure));
	}

	private void completed(PolicyLanes lanes, String key, @Nullable Lane lane, List<Call> batch, int generation,
			@Nullable List<Object> answers, @Nullable Throwable failure) {
		long capacity = lanes.policy.capacity();
		for (int i = 0; i < batch.size(); i++) {
			Call call = batch.get(i);
			if (failure != null || answers == null) {
				call.result.completeExceptionally((failure != null) ? failure : new IllegalStateException("no reply"));
			}
			else {
				int offset = 1 + 4 * i;
				call.result.complete(new Decision(number(answers, offset) == 1, capacity, number(answers, offset + 1),
						number(answers, offset + 2), number(answers, offset + 3), Decision.Origin.STORE));
			}
		}
		if (lane == null) {
			return;
		}
		List<Call> next;
		int nextGeneration;
		synchronized (lane) {
			if (lane.generation != generation) {
				return; // superseded by a newer call after this one was overdue
			}
			next = lane.drain(this.maxBatchSize);
			if (next.isEmpty()) {
				lane.inFlight = false;
				lane.retired = true;
				lanes.lanes.remove(key, lane);
				return;
			}
			lane.sentAt = System.nanoTime();
			nextGeneration = ++lane.generation;
		}
		send(lanes, key, lane, next, nextGeneration);
	}

	private static long number(List<Object> answers, int index) {
		return ((Number) answers.get(index)).longValue();
	}

	private Decision await(RateLimitPolicy policy, Call call, long start) {
		long remaining = this.timeoutNanos - (System.nanoTime() - start);
		try {
			return call.result.get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			call.abandoned = true;
			throw new RateLimitStoreException(
					"Redis did not answer within " + this.timeout.toMillis() + "ms for policy '" + policy.name() + "'");
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
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

	/**
	 * Return how many script calls were sent to Redis.
	 * @return the number of script calls
	 */
	public long scriptCalls() {
		return this.scriptCalls.sum();
	}

	/**
	 * Return how many decisions were sent to Redis; more than {@link #scriptCalls()} when concurrent decisions for a
	 * key were coalesced.
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
		this.executor.close();
	}

	private static byte[] bytes(long value) {
		return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
	}

	/**
	 * The lanes of one policy, and the script arguments that do not change between its calls.
	 */
	private final class PolicyLanes {

		final RateLimitPolicy policy;

		final RateLimitScript script;

		final byte[][] args;

		final ConcurrentHashMap<String, Lane> lanes = new ConcurrentHashMap<>();

		PolicyLanes(RateLimitPolicy policy) {
			this.policy = policy;
			this.script = RateLimitScript.of(policy.algorithm());
			this.args = new byte[][] { EMPTY, bytes(policy.limit()), bytes(policy.windowMillis()), bytes(policy.burst()),
					bytes(policy.unitsPerToken()), bytes(policy.unitsPerMilli()), RedisRateLimitStore.this.leastTtl };
		}

	}

	/**
	 * The requests for one key: at most one script call in flight, the others waiting to go together after it.
	 * Guarded by its own monitor.
	 */
	private static final class Lane {

		boolean inFlight;

		long sentAt;

		int generation;

		boolean retired;

		List<Call> waiting = new ArrayList<>(4);

		List<Call> drain(int max) {
			List<Call> batch = new ArrayList<>(Math.min(this.waiting.size(), max));
			List<Call> rest = null;
			for (Call call : this.waiting) {
				if (call.abandoned) {
					continue; // its caller gave up before it was sent: it must not be counted
				}
				if (batch.size() < max) {
					batch.add(call);
				}
				else {
					if (rest == null) {
						rest = new ArrayList<>();
					}
					rest.add(call);
				}
			}
			this.waiting = (rest != null) ? rest : new ArrayList<>(4);
			return batch;
		}

	}

	/**
	 * One request waiting for its decision.
	 */
	private static final class Call {

		final long cost;

		final CompletableFuture<Decision> result = new CompletableFuture<>();

		volatile boolean abandoned;

		Call(long cost) {
			this.cost = cost;
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

		private Builder(RedisConnectionFactory connectionFactory) {
			this.connectionFactory = connectionFactory;
		}

		/**
		 * Set the prefix of every key; {@code ratelimit} by default.
		 * @param keyPrefix the prefix
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
			return this;
		}

		/**
		 * Set how long a decision may wait for Redis before it fails; 200ms by default.
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
		 * Set whether concurrent decisions for the same key are sent as one script call; on by default.
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
		 * Build the store.
		 * @return the store
		 */
		public RedisRateLimitStore build() {
			return new RedisRateLimitStore(this);
		}

	}

}
