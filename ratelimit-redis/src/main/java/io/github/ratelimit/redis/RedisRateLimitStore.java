package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.OneByOne;
import io.github.ratelimit.store.PartialStoreFailureException;
import io.github.ratelimit.store.PolicyNames;
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
 * <li><b>Time from Redis.</b> The script reads {@code TIME}, so instances with skewed clocks agree on windows.
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

	/** How many script calls of one policy (per Cluster hash slot) may be in flight, by default. */
	public static final int DEFAULT_MAX_IN_FLIGHT = 4;

	private static final byte[] ONE = PolicyScript.bytes(1);

	private static final byte[] ZERO = PolicyScript.bytes(0);

	static final byte[] TAKE = RedisKeys.bytes("take");

	/** Past how many policies the store looks for idle ones to drop when it meets a new one. */
	static final int SWEEP_ABOVE_POLICIES = 1_024;

	/** How long a policy stays unused before the store drops what it keeps for it: ten minutes. */
	static final long IDLE_POLICY_MILLIS = 600_000;

	static final byte[] REFUND = RedisKeys.bytes("refund");

	static final byte[] CHARGE = RedisKeys.bytes("charge");

	/** The all-or-nothing script's name of each algorithm, by ordinal. */
	private static final byte[][] ALGORITHM_CODES = algorithmCodes();

	/** Other instances' parameters for the same policies. */
	private final PolicyVersions versions;

	private final PolicyNames names = new PolicyNames();

	private final ResetBroadcast resets;

	private final RedisSharedChanges sharedChanges;

	private static final boolean JEDIS_PRESENT = ClassUtils.isPresent(
			"org.springframework.data.redis.connection.jedis.JedisConnectionFactory",
			RedisRateLimitStore.class.getClassLoader());

	private final ScriptExecutor executor;

	private final RedisKeys keys;

	private final long timeoutNanos;

	private final Duration timeout;

	private final @Nullable TimeSource clock;

	private final byte[] leastTtl;

	private final @Nullable Coalescer coalescer;

	/** On a Lettuce Cluster: which master holds a slot, for a circuit breaker per master. */
	private final @Nullable ClusterNodes clusterNodes;

	/** Whether one script call may only hold keys of one hash slot (a Cluster, or a topology not known). */
	private final boolean oneSlotPerCall;

	private final ConcurrentHashMap<RateLimitPolicy, PolicyScript> policies = new ConcurrentHashMap<>();

	/** When idle policies were last looked for, in local milliseconds. */
	private final AtomicLong lastSweep = new AtomicLong(Long.MIN_VALUE / 2);

	private final PrefixedKeys prefixedKeys;

	private final LongAdder scriptCalls = new LongAdder();

	private final LongAdder decisions = new LongAdder();

	private RedisRateLimitStore(Builder builder) {
		this.keys = new RedisKeys(builder.keyPrefix);
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
		this.sharedChanges = new RedisSharedChanges(builder.connectionFactory, builder.keyPrefix);
		this.timeout = builder.timeout;
		this.timeoutNanos = builder.timeout.toNanos();
		this.clock = builder.clock;
		this.leastTtl = PolicyScript.bytes((builder.clock != null) ? Duration.ofHours(1).toMillis() : 0);
		this.versions = new PolicyVersions(this.executor, this.keys, builder.clock, this.leastTtl);
		// On a Cluster, or where the topology is unknown, one script call holds keys of one hash slot only.
		this.oneSlotPerCall = cluster;
		this.coalescer = builder.coalesce ? new Coalescer(this::send, cluster, this.timeoutNanos, builder.maxBatchSize,
				builder.maxInFlight, "ratelimit-redis-timeouts-" + builder.keyPrefix) : null;
	}

	private static boolean mayBeCluster(RedisConnectionFactory connectionFactory) {
		if (JEDIS_PRESENT && connectionFactory instanceof JedisConnectionFactory jedis) {
			return jedis.isRedisClusterAware();
		}
		return true; // unknown topology: keep every call within one hash slot, which is always safe
	}

	private static byte[][] algorithmCodes() {
		byte[][] codes = new byte[Algorithm.values().length][];
		for (Algorithm algorithm : Algorithm.values()) {
			codes[algorithm.ordinal()] = RedisKeys.bytes(RateLimitScript.code(algorithm));
		}
		return codes;
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
		if (this.coalescer != null) {
			this.coalescer.start();
		}
	}

	@Override
	public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
		if (cost < 1) {
			throw new IllegalArgumentException("'cost' must be at least 1 but was " + cost);
		}
		long start = System.nanoTime();
		PolicyScript script = ownScript(policy);
		script.lastUsed = localMillis(start);
		List<RateLimitPolicy> others = this.versions.others(script.versions, start + this.timeoutNanos);
		if (!others.isEmpty()) {
			return decideWithOthers(List.of(new Acquisition(policy, key, cost)), List.of(others), start).decisions()
				.get(0);
		}
		PendingDecision call = new PendingDecision(script.layout.keys(key), cost, start);
		try {
			Coalescer.Lanes lanes = script.lanes;
			if (lanes != null && this.coalescer != null) {
				return this.coalescer.decide(lanes, call);
			}
			send(script, List.of(call));
			return call.result.get(Math.max(0, this.timeoutNanos - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			call.abandoned = true;
			throw timedOut(policy);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			if (cause == Coalescer.OVERDUE) {
				throw timedOut(policy);
			}
			throw failed("policy '" + policy.name() + "'", cause);
		}
		catch (InterruptedException ex) {
			call.abandoned = true;
			Thread.currentThread().interrupt();
			throw new RateLimitStoreException("Interrupted while waiting for Redis for policy '" + policy.name() + "'",
					ex);
		}
	}

	static RateLimitStoreException failed(String what, Throwable cause) {
		if (isOutOfMemory(cause)) {
			return new RateLimitStoreException("Redis is out of memory (maxmemory reached, and its "
					+ "maxmemory-policy may not evict these keys): it refuses every write, so no decision for " + what
					+ " can be made until memory is freed. Give rate limits a Redis of their own, or "
					+ "set maxmemory-policy to volatile-ttl (see docs/reliability.md).", cause);
		}
		return new RateLimitStoreException("Redis failed to decide for " + what + ": " + cause.getMessage(), cause);
	}

	/**
	 * Decide the acquisitions in one script call, all or nothing inside it; on a Cluster, one call per hash slot,
	 * sent together, and when a slot rejects, the others give back what they took.
	 */
	@Override
	public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
		long start = System.nanoTime();
		List<PolicyVersions.View> views = views(acquisitions, start);
		List<List<RateLimitPolicy>> others = new ArrayList<>(acquisitions.size());
		for (PolicyVersions.View view : views) {
			others.add(this.versions.others(view, start + this.timeoutNanos));
		}
		if (!anyOthers(others)) {
			return decideTogether(acquisitions, start);
		}
		return decideWithOthers(acquisitions, others, start);
	}

	private Reservation decideWithOthers(List<Acquisition> acquisitions, List<List<RateLimitPolicy>> others,
			long start) {
		WithOthers withOthers = new WithOthers(acquisitions, others);
		try {
			return withOthers.combined(decideTogether(withOthers.all, start));
		}
		catch (PartialStoreFailureException ex) {
			throw withOthers.combined(ex);
		}
	}

	/**
	 * Decide as {@link #tryAcquireAll} does without waiting: the stage completes on the thread that receives the
	 * last answer (a client's I/O thread), or with a timeout after {@link Builder#timeout(Duration)}. No thread
	 * waits, here or in the client.
	 */
	@Override
	public CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions) {
		try {
			long start = System.nanoTime();
			List<PolicyVersions.View> views = views(acquisitions, start);
			List<CompletableFuture<List<RateLimitPolicy>>> known = new ArrayList<>(views.size());
			for (PolicyVersions.View view : views) {
				known.add(this.versions.othersAsync(view, start + this.timeoutNanos));
			}
			return CompletableFuture.allOf(known.toArray(new CompletableFuture<?>[0])).thenCompose((ignored) -> {
				List<List<RateLimitPolicy>> others = known.stream().map(CompletableFuture::join).toList();
				if (!anyOthers(others)) {
					return decideTogetherAsync(acquisitions, start);
				}
				WithOthers withOthers = new WithOthers(acquisitions, others);
				return decideTogetherAsync(withOthers.all, start).handle((reservation, failure) -> {
					if (failure == null) {
						return withOthers.combined(reservation);
					}
					Throwable cause = unwrap(failure);
					throw (cause instanceof PartialStoreFailureException partial) ? withOthers.combined(partial)
							: new CompletionException(cause);
				});
			});
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private List<PolicyVersions.View> views(List<Acquisition> acquisitions, long start) {
		List<PolicyVersions.View> views = new ArrayList<>(acquisitions.size());
		long used = localMillis(start);
		for (Acquisition acquisition : acquisitions) {
			PolicyScript script = ownScript(acquisition.policy());
			script.lastUsed = used;
			PolicyVersions.View view = script.versions;
			this.versions.refreshIfDue(view); // all under way before any is awaited
			views.add(view);
		}
		return views;
	}

	private static boolean anyOthers(List<List<RateLimitPolicy>> others) {
		for (List<RateLimitPolicy> of : others) {
			if (!of.isEmpty()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Each acquisition decided together with the same key under its policy's other parameter sets in use: a request
	 * passes only if the state of each admits it (they share the key's hash slot).
	 */
	private static final class WithOthers {

		final List<Acquisition> all;

		/** Where each acquisition's other sets start in {@link #all}, and where the last ones end. */
		private final int[] from;

		private final int size;

		WithOthers(List<Acquisition> acquisitions, List<List<RateLimitPolicy>> others) {
			this.size = acquisitions.size();
			this.all = new ArrayList<>(acquisitions);
			this.from = new int[this.size + 1];
			for (int i = 0; i < this.size; i++) {
				this.from[i] = this.all.size();
				Acquisition acquisition = acquisitions.get(i);
				for (RateLimitPolicy other : others.get(i)) {
					this.all.add(new Acquisition(other, acquisition.key(), acquisition.cost()));
				}
			}
			this.from[this.size] = this.all.size();
		}

		Reservation combined(Reservation reservation) {
			List<Decision> decisions = new ArrayList<>(this.size);
			long[] times = new long[this.size];
			for (int i = 0; i < this.size; i++) {
				decisions.add(PolicyVersions.combined(reservation.decisions().get(i),
						reservation.decisions().subList(this.from[i], this.from[i + 1])));
				times[i] = reservation.countedAt(i);
			}
			return new Reservation(decisions, times);
		}

		/** A key and its other sets share a hash slot: they failed, or were decided, together. */
		PartialStoreFailureException combined(PartialStoreFailureException ex) {
			Decision[] decisions = new Decision[this.size];
			long[] times = new long[this.size];
			for (int i = 0; i < this.size; i++) {
				Decision own = ex.decision(i);
				if (own != null) {
					List<Decision> otherDecisions = new ArrayList<>();
					for (int j = this.from[i]; j < this.from[i + 1]; j++) {
						otherDecisions.add(Objects.requireNonNull(ex.decision(j)));
					}
					decisions[i] = PolicyVersions.combined(own, otherDecisions);
					times[i] = ex.countedAt(i);
				}
			}
			return new PartialStoreFailureException(decisions, times,
					(ex.getCause() instanceof RuntimeException cause) ? cause : ex);
		}

	}

	private Reservation decideTogether(List<Acquisition> acquisitions, long start) {
		SlotDecision decision = new SlotDecision(this::call, acquisitions, groupBySlot(acquisitions));
		String what = describe(acquisitions);
		for (int g = 0; g < decision.groups(); g++) {
			try {
				decision.answered(g, await(decision.call(g), start, what));
			}
			catch (RateLimitStoreException ex) {
				decision.failed(ex);
			}
		}
		for (CompletableFuture<List<Object>> refund : decision.giveBackIfRejected()) {
			try {
				await(refund, start, what);
			}
			catch (RateLimitStoreException ex) {
				// The units stay taken: the client is counted once more than it should, never less.
			}
		}
		return decision.reservation();
	}

	private CompletableFuture<Reservation> decideTogetherAsync(List<Acquisition> acquisitions, long start) {
		SlotDecision decision = new SlotDecision(this::call, acquisitions, groupBySlot(acquisitions));
		String what = describe(acquisitions);
		CompletableFuture<?>[] answered = new CompletableFuture<?>[decision.groups()];
		for (int g = 0; g < answered.length; g++) {
			int group = g;
			answered[g] = within(decision.call(g), start, what).handle((answers, failure) -> {
				if (failure == null) {
					decision.answered(group, answers);
				}
				else {
					decision.failed(storeFailure(unwrap(failure)));
				}
				return null;
			});
		}
		return CompletableFuture.allOf(answered).thenCompose((ignored) -> {
			List<CompletableFuture<List<Object>>> refunds = decision.giveBackIfRejected();
			CompletableFuture<?>[] given = new CompletableFuture<?>[refunds.size()];
			for (int i = 0; i < given.length; i++) {
				// The units of a refund that fails stay taken: the client is counted once more, never less.
				given[i] = within(refunds.get(i), start, what).exceptionally((failure) -> null);
			}
			return CompletableFuture.allOf(given);
		}).thenApply((ignored) -> decision.reservation());
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
		settle(REFUND, acquisitions, countedAtMillis);
	}

	/**
	 * Take the extra units in one script call, from the key's state and from its state under the policy's other
	 * parameter sets that took the admission's units.
	 */
	@Override
	public void charge(Acquisition acquisition, long countedAtMillis) {
		settle(CHARGE, List.of(acquisition), new long[] { countedAtMillis });
	}

	private void settle(byte[] mode, List<Acquisition> acquisitions, long[] countedAtMillis) {
		long start = System.nanoTime();
		List<CompletableFuture<List<Object>>> calls = sendRefunds(mode, acquisitions, countedAtMillis);
		String what = describe(acquisitions);
		RateLimitStoreException failure = null;
		for (CompletableFuture<List<Object>> refund : calls) {
			try {
				await(refund, start, what);
			}
			catch (RateLimitStoreException ex) {
				failure = (failure != null) ? failure : ex;
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	/**
	 * Give the units back as {@link #refundAll} does, without waiting.
	 */
	@Override
	public CompletionStage<Void> refundAllAsync(List<Acquisition> acquisitions, long[] countedAtMillis) {
		try {
			long start = System.nanoTime();
			List<CompletableFuture<List<Object>>> calls = sendRefunds(REFUND, acquisitions, countedAtMillis);
			String what = describe(acquisitions);
			CompletableFuture<?>[] given = new CompletableFuture<?>[calls.size()];
			for (int i = 0; i < given.length; i++) {
				given[i] = within(calls.get(i), start, what);
			}
			return CompletableFuture.allOf(given);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private List<CompletableFuture<List<Object>>> sendRefunds(byte[] mode, List<Acquisition> acquisitions,
			long[] countedAtMillis) {
		List<Acquisition> all = new ArrayList<>(acquisitions.size() + 1);
		List<Long> times = new ArrayList<>(acquisitions.size() + 1);
		for (int i = 0; i < acquisitions.size(); i++) {
			Acquisition acquisition = acquisitions.get(i);
			all.add(acquisition);
			times.add(countedAtMillis[i]);
			for (RateLimitPolicy other : this.versions.othersSince(ownScript(acquisition.policy()).versions,
					countedAtMillis[i])) {
				all.add(new Acquisition(other, acquisition.key(), acquisition.cost()));
				times.add(countedAtMillis[i]);
			}
		}
		long[] at = times.stream().mapToLong(Long::longValue).toArray();
		List<CompletableFuture<List<Object>>> calls = new ArrayList<>();
		for (List<Integer> group : groupBySlot(all)) {
			calls.add(call(mode, all, group, at));
		}
		return calls;
	}

	@Override
	public long currentTimeMillis() {
		return (this.clock != null) ? this.clock.currentTimeMillis() : System.currentTimeMillis();
	}

	private List<List<Integer>> groupBySlot(List<Acquisition> acquisitions) {
		List<Integer> all = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			all.add(i);
		}
		if (!this.oneSlotPerCall || acquisitions.size() == 1) {
			return List.of(all);
		}
		Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
		for (int i = 0; i < acquisitions.size(); i++) {
			Acquisition acquisition = acquisitions.get(i);
			int slot = RedisKeys.slot(script(acquisition.policy()).layout.keys(acquisition.key())[0]);
			bySlot.computeIfAbsent(slot, (s) -> new ArrayList<>()).add(i);
		}
		return new ArrayList<>(bySlot.values());
	}

	private CompletableFuture<List<Object>> call(byte[] mode, List<Acquisition> acquisitions, List<Integer> group,
			long @Nullable [] times) {
		List<byte[]> keys = new ArrayList<>(group.size() * 2);
		byte[][] args = new byte[3 + 8 * group.size()][];
		args[0] = mode;
		args[1] = (this.clock != null) ? PolicyScript.bytes(this.clock.currentTimeMillis()) : PolicyScript.EMPTY;
		args[2] = this.leastTtl;
		int a = 3;
		for (int i : group) {
			Acquisition acquisition = acquisitions.get(i);
			PolicyScript script = script(acquisition.policy());
			Collections.addAll(keys, script.layout.keys(acquisition.key()));
			args[a++] = ALGORITHM_CODES[acquisition.policy().algorithm().ordinal()];
			System.arraycopy(script.args, 1, args, a, 5);
			a += 5;
			args[a++] = (acquisition.cost() == 1) ? ONE : PolicyScript.bytes(acquisition.cost());
			args[a++] = (times != null) ? PolicyScript.bytes(times[i]) : ZERO;
		}
		this.scriptCalls.increment();
		this.decisions.add(group.size());
		try {
			return this.executor.execute(RateLimitScript.ALL_OR_NOTHING, keys.toArray(new byte[0][]), args);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private List<Object> await(CompletableFuture<List<Object>> call, long start, String what) {
		try {
			return call.get(Math.max(0, this.timeoutNanos - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			throw timedOut(what);
		}
		catch (ExecutionException ex) {
			throw failed(what, (ex.getCause() != null) ? ex.getCause() : ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RateLimitStoreException("Interrupted while waiting for Redis for " + what, ex);
		}
	}

	/**
	 * The call's answer, or its failure as {@link #await} would throw it, by the decision's deadline: what
	 * {@code await} is to a thread that waits, without one.
	 */
	private CompletableFuture<List<Object>> within(CompletableFuture<List<Object>> call, long start, String what) {
		long remaining = Math.max(0, this.timeoutNanos - (System.nanoTime() - start));
		// A copy times out, not the call: a call that answers late still completes, as for a thread that stopped
		// waiting for it.
		return call.copy().orTimeout(remaining, TimeUnit.NANOSECONDS).handle((answers, failure) -> {
			if (failure == null) {
				return answers;
			}
			Throwable cause = unwrap(failure);
			throw (cause instanceof TimeoutException) ? timedOut(what) : failed(what, cause);
		});
	}

	private static RuntimeException storeFailure(Throwable failure) {
		return (failure instanceof RuntimeException ex) ? ex
				: new RateLimitStoreException("Redis failed: " + failure.getMessage(), failure);
	}

	private static Throwable unwrap(Throwable failure) {
		Throwable cause = failure;
		while ((cause instanceof CompletionException || cause instanceof ExecutionException)
				&& cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private RateLimitStoreException timedOut(String what) {
		return new RateLimitStoreException("Redis did not answer within " + this.timeout.toMillis() + "ms for " + what);
	}

	private static String describe(List<Acquisition> acquisitions) {
		StringBuilder names = new StringBuilder((acquisitions.size() == 1) ? "policy " : "policies ");
		for (int i = 0; i < acquisitions.size(); i++) {
			names.append((i > 0) ? ", '" : "'").append(acquisitions.get(i).policy().name()).append('\'');
		}
		return names.toString();
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
		return (nodes != null) ? nodes.nodeOf(RedisKeys.slot(ownScript(policy).layout.keys(key)[0])) : "";
	}

	/**
	 * Delete the key's state under this policy, and under the policy's other parameter sets in use (every Redis key
	 * of the decision, in one {@code DEL}).
	 */
	@Override
	public void reset(RateLimitPolicy policy, String key) {
		PolicyScript script = ownScript(policy);
		List<byte[]> all = new ArrayList<>(List.of(script.layout.keys(key)));
		// Asked, not remembered: an instance that never decided the policy (one an operator calls) learns them.
		for (RateLimitPolicy other : this.versions.others(script.versions, System.nanoTime() + this.timeoutNanos)) {
			Collections.addAll(all, script(other).layout.keys(key));
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

	private PolicyScript script(RateLimitPolicy policy) {
		PolicyScript script = this.policies.get(policy);
		if (script != null) {
			return script;
		}
		if (this.policies.size() >= SWEEP_ABOVE_POLICIES) {
			dropIdlePolicies();
		}
		return this.policies.computeIfAbsent(policy, (p) -> {
			PolicyScript created = new PolicyScript(p, this.keys, this.leastTtl, this.coalescer, this.versions);
			created.lastUsed = localMillis(System.nanoTime());
			return created;
		});
	}

	/**
	 * Drop what the store keeps for policies no decision used for {@value #IDLE_POLICY_MILLIS} ms (a tenant's variant
	 * gone quiet), at most once a second: a policy that comes back is set up again, and says which parameters it
	 * decides with before its first decision, as a new one does.
	 */
	private void dropIdlePolicies() {
		long now = localMillis(System.nanoTime());
		long last = this.lastSweep.get();
		if (now - last < 1_000 || !this.lastSweep.compareAndSet(last, now)) {
			return;
		}
		this.policies.forEach((policy, script) -> {
			if (now - script.lastUsed >= IDLE_POLICY_MILLIS && this.policies.remove(policy, script) && script.own) {
				this.names.forget(policy);
			}
		});
	}

	/** How many policies the store keeps scripts for, its own and other instances' parameter sets. */
	int policies() {
		return this.policies.size();
	}

	/** Milliseconds for the policies' idle times: monotonic, unless a clock drives the store. */
	private long localMillis(long nanoTime) {
		return (this.clock != null) ? this.clock.currentTimeMillis() : nanoTime / 1_000_000;
	}

	/**
	 * The script of a policy this instance decides with (not another instance's parameter set of it): the first
	 * time, checked to be the only configuration of its name and variant here, so that this instance's own sets are
	 * never taken for a rolling deploy.
	 */
	private PolicyScript ownScript(RateLimitPolicy policy) {
		PolicyScript script = script(policy);
		if (!script.own) {
			this.names.check(policy);
			script.own = true;
		}
		return script;
	}

	/**
	 * Send one script call for the batch; the future completes once each decision of the batch is completed.
	 */
	private CompletableFuture<?> send(PolicyScript script, List<PendingDecision> batch) {
		int keysPerCall = batch.get(0).keys.length;
		byte[][] keys = new byte[batch.size() * keysPerCall][];
		byte[][] args = new byte[script.args.length + batch.size()][];
		System.arraycopy(script.args, 0, args, 0, script.args.length);
		args[0] = (this.clock != null) ? PolicyScript.bytes(this.clock.currentTimeMillis()) : PolicyScript.EMPTY;
		for (int i = 0; i < batch.size(); i++) {
			PendingDecision call = batch.get(i);
			System.arraycopy(call.keys, 0, keys, i * keysPerCall, keysPerCall);
			args[script.args.length + i] = (call.cost == 1) ? ONE : PolicyScript.bytes(call.cost);
		}
		this.scriptCalls.increment();
		this.decisions.add(batch.size());
		CompletableFuture<List<Object>> result;
		try {
			result = this.executor.execute(script.script, keys, args);
		}
		catch (RuntimeException ex) {
			result = CompletableFuture.failedFuture(ex);
		}
		return result.whenComplete((answers, failure) -> completed(script, batch, answers, failure));
	}

	private static void completed(PolicyScript script, List<PendingDecision> batch, @Nullable List<Object> answers,
			@Nullable Throwable failure) {
		long capacity = script.policy.capacity();
		for (int i = 0; i < batch.size(); i++) {
			PendingDecision call = batch.get(i);
			if (failure != null || answers == null || answers.size() < 5 * batch.size()) {
				call.result.completeExceptionally((failure != null) ? failure
						: new IllegalStateException("unexpected reply from the rate limit script: " + answers));
			}
			else {
				int offset = 5 * i;
				long remaining = Math.max(0, Math.min(capacity, number(answers, offset + 1)));
				call.result.complete(new Decision(number(answers, offset) == 1, capacity, remaining,
						number(answers, offset + 2), number(answers, offset + 3), number(answers, offset + 4),
						Decision.Origin.STORE));
			}
		}
	}

	private static long number(List<Object> answers, int index) {
		return ((Number) answers.get(index)).longValue();
	}

	/**
	 * Whether Redis refused a write for want of memory ({@code OOM command not allowed when used memory >
	 * 'maxmemory'}), inside a script or not.
	 */
	static boolean isOutOfMemory(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			String message = cause.getMessage();
			if (message != null && (message.startsWith("OOM ") || message.contains("ERR OOM ")
					|| message.contains("OOM command not allowed"))) {
				return true;
			}
		}
		return false;
	}

	private RateLimitStoreException timedOut(RateLimitPolicy policy) {
		return timedOut("policy '" + policy.name() + "'");
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
	 * Fail the decisions still waiting, stop the timeout thread and release the connection; the connection factory
	 * is left open.
	 */
	/**
	 * {@inheritDoc}
	 * <p>
	 * Over Redis pub/sub, on the channel {@code <key prefix>:resets}: every instance sharing the prefix hears of a
	 * reset or clear made through any of them, subscribed from the first listener on.
	 */
	@Override
	public void addResetListener(ResetListener listener) {
		this.resets.addListener(listener);
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

	@Override
	public void close() {
		if (this.coalescer != null) {
			this.coalescer.close();
		}
		this.resets.close();
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
