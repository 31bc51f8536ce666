package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.ResetListener;
import io.github.ratelimit.store.SharedChanges;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.Reservation;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * A {@link RateLimitStore} on Redis (standalone, Sentinel or Cluster) through the application's
 * {@link RedisConnectionFactory}.
 * <ul>
 * <li><b>One round trip per decision.</b> Each algorithm is one Lua script, sent with EVALSHA (EVAL when Redis lost
 * it), that reads the state, decides, writes and sets the expiry atomically, and returns what the headers need. No
 * state is read into Java and written back, so instances sharing a Redis never lose or double a count.
 * <li><b>Time from Redis.</b> The script reads {@code TIME}, so instances with skewed clocks agree on windows. A
 * calendar window is counted at the instance's time instead, as Redis knows no time zone.
 * <li><b>Cluster-ready keys.</b> All keys of one decision share a hash tag (see {@code docs/reliability.md}).
 * <li><b>Expiry, not sweeps.</b> Every key carries a {@code PEXPIRE} until its state is back to fresh.
 * <li><b>Bounded waits.</b> A decision fails with {@link RateLimitStoreException} after {@code timeout}; it never
 * hangs the request. (Coalesced callers wait without a timer of their own, which a decision would pay for in kernel
 * time: one thread per store fails the overdue ones, at most a twentieth of the timeout late, 1 ms to 50 ms.)
 * <li><b>Configuration changes.</b> State is kept per set of counting parameters, and while instances decide a
 * policy with different ones (a rolling deploy), a request passes only if it passes under each set in use, so
 * together they never admit more than the larger configuration would (see {@code docs/reliability.md}).
 * <li><b>Coalescing.</b> Concurrent decisions of a policy are sent together, in one script call that decides them
 * one after the other, each atomically: a busy policy or a hot key costs far fewer round trips, and no decision ever
 * takes more than one.
 * </ul>
 * Whoever builds the store owns it: {@link #start()} connects, loads the scripts and starts the timeout thread ahead
 * of the first decision (which does it otherwise), and {@link #close()} stops them.
 *
 * @since 0.1.0
 */
public final class RedisRateLimitStore implements RateLimitStore, AutoCloseable {

	/** The prefix of every key, by default. */
	public static final String DEFAULT_KEY_PREFIX = "ratelimit";

	/** How long a decision may wait for Redis, by default, in milliseconds. */
	public static final long DEFAULT_TIMEOUT_MILLIS = 200;

	/** The most decisions sent in one script call, by default. */
	public static final int DEFAULT_MAX_BATCH_SIZE = 64;

	/**
	 * How many script calls of one lane (a policy's decisions, or the groups of several limits, refunds and charges;
	 * per Cluster hash slot) may be in flight, by default: one, so that what arrives meanwhile goes together in the
	 * next call.
	 */
	public static final int DEFAULT_MAX_IN_FLIGHT = 1;

	private static final boolean JEDIS_PRESENT = ClassUtils.isPresent(
			"org.springframework.data.redis.connection.jedis.JedisConnectionFactory",
			RedisRateLimitStore.class.getClassLoader());

	private final ScriptExecutor executor;

	private final Duration timeout;

	private final long timeoutNanos;

	private final @Nullable TimeSource clock;

	/** Other instances' parameters for the same policies. */
	private final PolicyVersions versions;

	private final PolicyScripts scripts;

	private final ScriptCalls calls;

	private final AllOrNothing allOrNothing;

	/** On a Lettuce Cluster: which master holds a slot, for a circuit breaker per master. */
	private final @Nullable ClusterNodes clusterNodes;

	private final PrefixedKeys prefixedKeys;

	private final ResetBroadcast resets;

	private final StateLossWatch stateLossWatch;

	private final RedisSharedChanges sharedChanges;

	private RedisRateLimitStore(Builder builder) {
		RedisKeys keys = new RedisKeys(builder.keyPrefix);
		boolean cluster;
		if (builder.connectionFactory instanceof LettuceConnectionFactory lettuce) {
			LettuceScriptExecutor executor = new LettuceScriptExecutor(lettuce);
			this.executor = executor;
			cluster = lettuce.isClusterAware();
			this.clusterNodes = cluster ? new ClusterNodes(lettuce, executor::isConnected) : null;
		}
		else {
			this.clusterNodes = null;
			this.executor = new ConnectionScriptExecutor(builder.connectionFactory,
					Math.max(4, 2 * Runtime.getRuntime().availableProcessors()));
			cluster = mayBeCluster(builder.connectionFactory);
		}
		this.prefixedKeys = new PrefixedKeys(builder.connectionFactory, builder.keyPrefix);
		this.resets = new ResetBroadcast(builder.connectionFactory, builder.keyPrefix);
		this.stateLossWatch = new StateLossWatch(builder.connectionFactory, builder.keyPrefix);
		this.sharedChanges = new RedisSharedChanges(builder.connectionFactory, builder.keyPrefix);
		this.timeout = builder.timeout;
		this.timeoutNanos = builder.timeout.toNanos();
		this.clock = builder.clock;
		byte[] leastTtl = PolicyScript.bytes((builder.clock != null) ? Duration.ofHours(1).toMillis() : 0);
		Deadlines deadlines = new Deadlines("ratelimit-redis-deadlines-" + builder.keyPrefix);
		this.versions = new PolicyVersions(this.executor, keys, builder.clock, leastTtl, deadlines);
		// On a Cluster, or where the topology is unknown, one script call holds keys of one hash slot only.
		this.calls = new ScriptCalls(this.executor, keys, this.versions, cluster, builder.clock, leastTtl,
				builder.timeout, deadlines,
				builder.coalesce ? new ScriptCalls.Batching(builder.maxBatchSize, builder.maxInFlight,
						"ratelimit-redis-timeouts-" + builder.keyPrefix) : null);
		this.scripts = this.calls.scripts();
		this.allOrNothing = new AllOrNothing(this.calls, this.scripts, this.versions, this.timeoutNanos);
	}

	private static boolean mayBeCluster(RedisConnectionFactory connectionFactory) {
		if (JEDIS_PRESENT && connectionFactory instanceof JedisConnectionFactory jedis) {
			return jedis.isRedisClusterAware();
		}
		return true; // unknown topology: keep every call within one hash slot, which is always safe
	}

	/**
	 * Start building a store on the given connection factory.
	 * @param connectionFactory the connection factory, usually the application's
	 * @return a builder
	 */
	public static Builder builder(RedisConnectionFactory connectionFactory) {
		return new Builder(connectionFactory);
	}

	/**
	 * Connect and load the scripts in the background, and start the thread that times coalesced decisions out, so
	 * that the first decisions do not wait for them. Optional: the first decision does what was not done. Idempotent.
	 */
	public void start() {
		this.executor.warmUp(RateLimitScript.all());
		this.calls.start();
	}

	@Override
	public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
		if (cost < 1) {
			throw new IllegalArgumentException("'cost' must be at least 1 but was " + cost);
		}
		long start = System.nanoTime();
		PolicyScript script = this.scripts.used(policy, start);
		List<RateLimitPolicy> others = this.versions.others(script.versions, start + this.timeoutNanos);
		if (!others.isEmpty()) {
			return this.allOrNothing
				.decideWithOthers(List.of(new Acquisition(policy, key, cost)), List.of(others), start)
				.decisions()
				.get(0);
		}
		return this.calls.decide(script, key, cost, start);
	}

	/**
	 * Decide the acquisitions in one script call, all or nothing inside it; on a Cluster, one call per hash slot,
	 * sent together, and when a slot rejects, the others give back what they took.
	 */
	@Override
	public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
		return this.allOrNothing.decide(acquisitions, System.nanoTime());
	}

	/**
	 * Decide as {@link #tryAcquireAll} does without waiting: the stage completes on the thread that receives the
	 * last answer (a client's I/O thread), or with a timeout after {@link Builder#timeout(Duration)}. No thread
	 * waits, here or in the client.
	 */
	@Override
	public CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions) {
		try {
			return this.allOrNothing.decideAsync(acquisitions, System.nanoTime());
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Give the units back to the key's state, and to its state under the policy's other parameter sets that took
	 * them.
	 */
	@Override
	public void refund(Acquisition acquisition, long countedAtMillis) {
		refundAll(List.of(acquisition), new long[] { countedAtMillis });
	}

	/**
	 * Give the units back in one script call (on a Cluster, one per hash slot, sent together), to each key's state
	 * and to its state under the policy's other parameter sets that took them.
	 */
	@Override
	public void refundAll(List<Acquisition> acquisitions, long[] countedAtMillis) {
		this.allOrNothing.settle(ScriptCalls.REFUND, acquisitions, countedAtMillis);
	}

	/**
	 * Take the extra units in one script call, from the key's state and from its state under the policy's other
	 * parameter sets that took the admission's units.
	 */
	@Override
	public void charge(Acquisition acquisition, long countedAtMillis) {
		this.allOrNothing.settle(ScriptCalls.CHARGE, List.of(acquisition), new long[] { countedAtMillis });
	}

	/**
	 * Give the units back as {@link #refundAll} does, without waiting.
	 */
	@Override
	public CompletionStage<Void> refundAllAsync(List<Acquisition> acquisitions, long[] countedAtMillis) {
		try {
			return this.allOrNothing.refundAsync(acquisitions, countedAtMillis);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	@Override
	public long currentTimeMillis() {
		return (this.clock != null) ? this.clock.currentTimeMillis() : System.currentTimeMillis();
	}

	/**
	 * Delete every key under this store's prefix (and nothing else: never {@code FLUSHDB}), on every master of a
	 * Cluster: what tests do between cases. Decisions made meanwhile may keep a key. Caches of denials in front of
	 * the store are not this method's: {@code RateLimiter.clearDenyCache()} clears them.
	 * @throws RateLimitStoreException if Redis cannot be reached
	 */
	@Override
	public void clear() {
		this.prefixedKeys.deleteAll();
		this.resets.clear();
	}

	/**
	 * Return whether decisions go to several masters of a Redis Cluster, which fail on their own (known on Lettuce;
	 * on other clients the Cluster counts as one part).
	 */
	@Override
	public boolean isPartitioned() {
		return this.clusterNodes != null;
	}

	/**
	 * Return the id of the Cluster master that holds the key's slot, as the client's topology last said.
	 */
	@Override
	public String partitionOf(RateLimitPolicy policy, String key) {
		ClusterNodes nodes = this.clusterNodes;
		return (nodes != null) ? nodes.nodeOf(RedisKeys.slot(this.scripts.own(policy).layout.keys(key)[0])) : "";
	}

	/**
	 * Delete the key's state under this policy, and under the policy's other parameter sets in use (every Redis key
	 * of the decision, in one {@code DEL}).
	 */
	@Override
	public void reset(RateLimitPolicy policy, String key) {
		PolicyScript script = this.scripts.own(policy);
		List<byte[]> all = new ArrayList<>(List.of(script.layout.keys(key)));
		// Asked, not remembered: an instance that never decided the policy (one an operator calls) learns them.
		for (RateLimitPolicy other : this.versions.others(script.versions, System.nanoTime() + this.timeoutNanos)) {
			Collections.addAll(all, this.scripts.of(other).layout.keys(key));
		}
		byte[][] keys = all.toArray(new byte[0][]);
		try {
			this.executor.delete(keys).get(this.timeoutNanos, TimeUnit.NANOSECONDS);
			this.resets.reset(policy, key);
		}
		catch (TimeoutException ex) {
			throw new RateLimitStoreException("Redis did not answer within " + this.timeout.toMillis()
					+ "ms to reset a key of policy '" + policy.name() + "'");
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new RateLimitStoreException(
					"Redis failed to reset a key of policy '" + policy.name() + "': " + cause.getMessage(), cause);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RateLimitStoreException("Interrupted while resetting a key of policy '" + policy.name() + "'",
					ex);
		}
	}

	/** How many policies the store keeps scripts for, its own and other instances' parameter sets. */
	int policies() {
		return this.scripts.size();
	}

	/**
	 * Return how many script calls were sent to Redis.
	 * @return the number of script calls
	 */
	public long scriptCalls() {
		return this.calls.scriptCalls();
	}

	/**
	 * Return how many decisions were sent to Redis; more than {@link #scriptCalls()} when concurrent decisions were
	 * coalesced.
	 * @return the number of decisions
	 */
	public long decisions() {
		return this.calls.decisions();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Over Redis pub/sub, on the channel {@code <key prefix>:resets}: every instance sharing the prefix hears of a
	 * reset or clear made through any of them, subscribed from the first listener on. A Redis that lost its data
	 * (restarted without persistence, failed over to an empty replica) is a clear, told within about a second.
	 */
	@Override
	public void addResetListener(ResetListener listener) {
		this.resets.addListener(listener);
		this.stateLossWatch.addListener(listener);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * In one hash, {@code <prefix>:changes}, that {@link #clear()} keeps.
	 */
	@Override
	public SharedChanges sharedChanges() {
		return this.sharedChanges;
	}

	/**
	 * Fail the decisions still waiting, stop the timeout thread and release the connection; the connection factory
	 * is left open.
	 */
	@Override
	public void close() {
		this.calls.close();
		this.resets.close();
		this.stateLossWatch.close();
		this.executor.close();
	}

	/**
	 * Builder for {@link RedisRateLimitStore}.
	 */
	public static final class Builder {

		private final RedisConnectionFactory connectionFactory;

		private String keyPrefix = DEFAULT_KEY_PREFIX;

		private Duration timeout = Duration.ofMillis(DEFAULT_TIMEOUT_MILLIS);

		private @Nullable TimeSource clock;

		private boolean coalesce = true;

		private int maxBatchSize = DEFAULT_MAX_BATCH_SIZE;

		private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;

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
		 * Set whether concurrent calls are sent together (decisions, refunds and charges); on by default.
		 * @param coalesce whether to coalesce
		 * @return this builder
		 */
		public Builder coalesce(boolean coalesce) {
			this.coalesce = coalesce;
			return this;
		}

		/**
		 * Set the most decisions sent in one script call (a sliding log's may count for more); 64 by default.
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
		 * Set how many script calls of one lane (a policy's decisions, or the groups of several limits, refunds and
		 * charges; per Cluster hash slot) may be in flight at once before further calls wait to be sent together; 1 by
		 * default. (A busy lane may have up to 8, each carrying at least half a batch.)
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
