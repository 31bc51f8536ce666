package io.github.ratelimit.limiter;

import io.github.ratelimit.internal.Checks;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.Decision;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.OneByOne;
import io.github.ratelimit.store.PartialStoreFailureException;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.store.ResetListener;
import io.github.ratelimit.store.StoreKeys;
import org.jspecify.annotations.Nullable;

/**
 * Decides whether a request may pass: asks a {@link RateLimitStore}, and applies what surrounds every remote
 * decision.
 * <ul>
 * <li>Keys longer than 256 UTF-8 bytes are replaced by their SHA-256, so that clients cannot inflate the store.
 * <li>In front of a remote store, a local deny cache rejects a key that the store has rejected until the time the
 * store gave, without a round trip (see {@link Decision.Origin#DENY_CACHE}); a request whose cost exceeds the
 * capacity, which no store admits, is rejected without one too.
 * <li>When the store fails (any exception but {@link IllegalArgumentException}, typically a
 * {@link io.github.ratelimit.store.RateLimitStoreException}), the policy's {@link FailureMode} decides; a circuit breaker stops calling a store that
 * keeps failing and probes it again after a delay.
 * </ul>
 * Thread-safe; one instance serves the whole application.
 *
 * @since 0.1.0
 */
public final class RateLimiter {

	/** How many keys the deny cache holds at most, by default. */
	public static final int DEFAULT_DENY_CACHE_MAX_KEYS = 100_000;

	/** How many consecutive store failures open the circuit, by default. */
	public static final int DEFAULT_FAILURE_THRESHOLD = 3;

	/** How long the circuit stays open before a probe, by default, in milliseconds. */
	public static final long DEFAULT_OPEN_DURATION_MILLIS = 2_000;

	/** The least time between two WARN messages about store failures, by default, in milliseconds. */
	public static final long DEFAULT_FAILURE_LOG_INTERVAL_MILLIS = 60_000;

	private static final Logger logger = System.getLogger(RateLimiter.class.getName());

	private static final int MAX_PARTITIONS = 1024;

	private final RateLimitStore store;

	private final @Nullable LocalDenyCache denyCache;

	/** The breaker of the whole store, or of its default part. */
	private final CircuitBreaker circuitBreaker;

	/** Whether the store has parts (nodes) that fail on their own, each with a breaker of its own. */
	private final boolean partitioned;

	private final ConcurrentHashMap<String, CircuitBreaker> partitionBreakers = new ConcurrentHashMap<>();

	/** How many resets and deny-cache clears there have been: a denial learned across one is not remembered. */
	private final AtomicLong resets = new AtomicLong();

	private final int failureThreshold;

	private final long openMillis;

	private final TimeSource clock;

	private final RateLimitListener listener;

	private final RateLimitStore fallbackStore;

	private final ThrottledLogger failureLogger;

	private RateLimiter(Builder builder) {
		this.store = builder.store;
		this.clock = builder.clock;
		this.listener = builder.listener;
		boolean denyCache = (builder.denyCache != null) ? builder.denyCache : !builder.store.isLocal();
		this.denyCache = denyCache ? new LocalDenyCache(builder.denyCacheMaxKeys) : null;
		this.failureThreshold = builder.failureThreshold;
		this.openMillis = builder.openDuration.toMillis();
		this.circuitBreaker = new CircuitBreaker(this.failureThreshold, this.openMillis, "");
		this.partitioned = builder.store.isPartitioned();
		this.fallbackStore = (builder.fallbackStore != null) ? builder.fallbackStore
				: InMemoryRateLimitStore.builder().clock(builder.clock).maxKeys(builder.fallbackMaxKeys).build();
		this.failureLogger = new ThrottledLogger(logger, builder.failureLogInterval.toMillis());
		if (this.denyCache != null) {
			builder.store.addResetListener(new ForgetResetDenials(this.denyCache, this.resets));
		}
	}

	/** Forgets the denials of keys reset through any instance sharing the store. */
	private record ForgetResetDenials(LocalDenyCache denyCache, AtomicLong resets) implements ResetListener {

		@Override
		public void onReset(String policy, String variant, String key) {
			this.resets.incrementAndGet(); // decisions under way may have been made on the old state
			this.denyCache.evict(policy, variant, key);
		}

		@Override
		public void onClear() {
			this.resets.incrementAndGet();
			this.denyCache.clear();
		}

	}

	/**
	 * Create a limiter over the given store with default settings.
	 * @param store the store
	 * @return the limiter
	 */
	public static RateLimiter of(RateLimitStore store) {
		return builder(store).build();
	}

	/**
	 * Start building a limiter over the given store.
	 * @param store the store
	 * @return a builder
	 */
	public static Builder builder(RateLimitStore store) {
		return new Builder(store);
	}

	/**
	 * Take one unit for {@code key} under {@code policy} if available.
	 * @param policy the policy
	 * @param key the counter key
	 * @return the decision
	 */
	public Decision tryAcquire(RateLimitPolicy policy, String key) {
		return tryAcquire(policy, key, 1);
	}

	/**
	 * Take {@code cost} units for {@code key} under {@code policy} if available. Never throws for a store failure:
	 * the policy's failure mode decides instead.
	 * @param policy the policy
	 * @param key the counter key
	 * @param cost the units this request takes, at least 1
	 * @return the decision
	 * @throws IllegalArgumentException if {@code cost} is less than 1
	 */
	public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
		if (cost < 1) {
			throw new IllegalArgumentException("'cost' must be at least 1 but was " + cost);
		}
		if (cost > policy.capacity()) {
			return notify(policy, neverFits(policy)); // no store admits it: not worth a call
		}
		key = StoreKeys.bounded(key);
		if (this.denyCache == null && !this.partitioned && !this.circuitBreaker.isOpen()) {
			// The common path for a local store, kept small so that the JIT can inline it whole.
			Decision decision;
			try {
				decision = this.store.tryAcquire(policy, key, cost);
			}
			catch (RuntimeException ex) {
				return onStoreException(policy, key, cost, this.circuitBreaker, CircuitBreaker.Permission.CALL, ex);
			}
			this.circuitBreaker.onSuccess();
			return notify(policy, decision);
		}
		return tryAcquireGuarded(policy, key, cost);
	}

	/**
	 * Decide a request that several limits apply to, all or nothing: it passes only if every acquisition is
	 * admitted, and a request rejected by any of them takes nothing from any of them. Every acquisition's deny cache
	 * is checked before the store is asked; the store decides them together (on Redis, one script call per hash
	 * slot). When the store fails, each policy's failure mode decides for it. Never throws for a store failure.
	 * @param acquisitions the acquisitions, of different policies or keys, at least one
	 * @return the admission, whose units can be given back one by one
	 * @throws IllegalArgumentException if there is no acquisition
	 * @since 0.2.0
	 */
	public Admission tryAcquireAll(List<Acquisition> acquisitions) {
		if (acquisitions.isEmpty()) {
			throw new IllegalArgumentException("'acquisitions' must not be empty");
		}
		List<Acquisition> bounded = bounded(acquisitions);
		int size = bounded.size();
		@Nullable Decision[] decisions = new Decision[size];
		long[] countedAt = new long[size];
		@Nullable RateLimitStore[] heldBy = new RateLimitStore[size];
		long now = this.clock.currentTimeMillis();
		long resets = this.resets.get();
		boolean neverFits = false;
		for (int i = 0; i < size; i++) {
			RateLimitPolicy policy = bounded.get(i).policy();
			if (bounded.get(i).cost() > policy.capacity()) {
				decisions[i] = notify(policy, neverFits(policy));
				neverFits = true;
			}
		}
		if (neverFits) {
			return new Admission(this, bounded, decisions, countedAt, heldBy); // no store admits it: not worth a call
		}
		if (this.denyCache != null) {
			boolean denied = false;
			for (int i = 0; i < size; i++) {
				Acquisition acquisition = bounded.get(i);
				Decision cached = this.denyCache.check(acquisition.policy(), acquisition.key(), acquisition.cost(), now);
				if (cached != null) {
					decisions[i] = notify(acquisition.policy(), cached);
					denied = true;
				}
			}
			if (denied) {
				return new Admission(this, bounded, decisions, countedAt, heldBy);
			}
		}
		// Each part of the store (a Cluster master, a group of DynamoDB keys) is asked, or not, on its own breaker.
		CircuitBreaker[] breakerOf = new CircuitBreaker[size];
		List<CircuitBreaker> breakers = new ArrayList<>(2);
		List<CircuitBreaker.Permission> permissions = new ArrayList<>(2);
		boolean[] failed = new boolean[size];
		List<Integer> asked = new ArrayList<>(size);
		for (int i = 0; i < size; i++) {
			CircuitBreaker breaker = this.partitioned
					? breaker(this.store.partitionOf(bounded.get(i).policy(), bounded.get(i).key()))
					: this.circuitBreaker;
			breakerOf[i] = breaker;
			int b = breakers.indexOf(breaker);
			if (b < 0) {
				breakers.add(breaker);
				permissions.add(breaker.tryCall(now));
				b = breakers.size() - 1;
			}
			failed[i] = permissions.get(b) == CircuitBreaker.Permission.SKIP;
			if (!failed[i]) {
				asked.add(i);
			}
		}
		RuntimeException failure = null;
		boolean storeRejected = false;
		if (!asked.isEmpty()) {
			List<Acquisition> subset = (asked.size() == size) ? bounded : asked.stream().map(bounded::get).toList();
			boolean reported = false;
			try {
				Reservation reservation = this.store.tryAcquireAll(subset);
				reportToBreakers(breakers, permissions, breakerOf, asked, null, null);
				reported = true;
				storeRejected = !reservation.allowed();
				for (int j = 0; j < asked.size(); j++) {
					int i = asked.get(j);
					Decision decision = reservation.decisions().get(j);
					if (!decision.allowed() && this.denyCache != null && this.resets.get() == resets) {
						this.denyCache.remember(subset.get(j).policy(), subset.get(j).key(), subset.get(j).cost(),
								decision, now);
					}
					decisions[i] = decision;
					countedAt[i] = reservation.countedAt(j);
					heldBy[i] = storeRejected ? null : this.store;
				}
			}
			catch (PartialStoreFailureException ex) {
				failure = ex;
				boolean[] partFailed = new boolean[size];
				for (int j = 0; j < asked.size(); j++) {
					int i = asked.get(j);
					partFailed[i] = ex.failed(j);
					if (partFailed[i]) {
						failed[i] = true;
					}
					else {
						decisions[i] = ex.decision(j);
						countedAt[i] = ex.countedAt(j);
						heldBy[i] = this.store;
					}
				}
				reportToBreakers(breakers, permissions, breakerOf, asked, partFailed, ex);
				reported = true;
			}
			catch (RuntimeException ex) {
				if (ex instanceof IllegalArgumentException) {
					throw ex; // a programming error, not an outage: the finally block releases the permissions
				}
				failure = ex;
				for (int i : asked) {
					failed[i] = true;
				}
				reportToBreakers(breakers, permissions, breakerOf, asked, failed, ex);
				reported = true;
			}
			finally {
				if (!reported) {
					for (int b = 0; b < breakers.size(); b++) {
						breakers.get(b).release(permissions.get(b)); // a probe must not stay taken by an error or a bug
					}
				}
			}
		}
		if (storeRejected) {
			// Rejected by a part that decided: the failed parts' policies could not change that.
			for (int i = 0; i < size; i++) {
				if (failed[i]) {
					logFailure(bounded.get(i).policy(), now, failure);
					decisions[i] = OneByOne.notDecided(bounded.get(i));
				}
				decisions[i] = notify(bounded.get(i).policy(), Objects.requireNonNull(decisions[i]));
			}
			return new Admission(this, bounded, decisions, countedAt, heldBy);
		}
		return settleFailedParts(bounded, decisions, countedAt, heldBy, failed, breakerOf, now, failure);
	}

	/**
	 * Tell each breaker whether its part answered: a part fails if any acquisition on it failed.
	 * @param partFailed per acquisition, whether its part failed; {@code null} if none did
	 */
	private void reportToBreakers(List<CircuitBreaker> breakers, List<CircuitBreaker.Permission> permissions,
			CircuitBreaker[] breakerOf, List<Integer> asked, boolean @Nullable [] partFailed,
			@Nullable RuntimeException failure) {
		long failedAt = (failure != null) ? this.clock.currentTimeMillis() : 0;
		for (int b = 0; b < breakers.size(); b++) {
			CircuitBreaker breaker = breakers.get(b);
			boolean askedHere = false;
			boolean failedHere = false;
			for (int i : asked) {
				if (breakerOf[i] == breaker) {
					askedHere = true;
					failedHere |= partFailed != null && partFailed[i];
				}
			}
			if (!askedHere) {
				continue; // skipped: its circuit is open
			}
			if (failedHere && failure != null) {
				breaker.onFailure(failedAt, permissions.get(b), failure);
			}
			else {
				breaker.onSuccess();
			}
		}
	}

	/**
	 * Decide the acquisitions whose part of the store failed by their policies' failure modes (the in-memory
	 * fallback decides the {@code LOCAL} ones together), then the request all or nothing: if any answer rejects it,
	 * what the store and the fallback hold for it is given back.
	 */
	private Admission settleFailedParts(List<Acquisition> acquisitions, @Nullable Decision[] decisions,
			long[] countedAt, @Nullable RateLimitStore[] heldBy, boolean[] failed, CircuitBreaker[] breakerOf, long now,
			@Nullable RuntimeException failure) {
		int size = acquisitions.size();
		List<Acquisition> local = new ArrayList<>();
		List<Integer> localIndexes = new ArrayList<>();
		boolean allowed = true;
		for (int i = 0; i < size; i++) {
			if (!failed[i]) {
				allowed &= Objects.requireNonNull(decisions[i]).allowed();
				continue;
			}
			RateLimitPolicy policy = acquisitions.get(i).policy();
			if (policy.failureMode() == FailureMode.LOCAL) {
				local.add(acquisitions.get(i));
				localIndexes.add(i);
				logFailure(policy, now, failure);
			}
			else {
				decisions[i] = onStoreFailure(policy, acquisitions.get(i).key(), acquisitions.get(i).cost(), now,
						breakerOf[i], failure);
				allowed &= decisions[i].allowed();
			}
		}
		Reservation fallback = local.isEmpty() ? null : this.fallbackStore.tryAcquireAll(local);
		if (fallback != null) {
			allowed &= fallback.allowed();
			for (int j = 0; j < local.size(); j++) {
				int i = localIndexes.get(j);
				decisions[i] = fallback.decisions().get(j).withOrigin(Decision.Origin.LOCAL_FALLBACK);
				countedAt[i] = fallback.countedAt(j);
				heldBy[i] = fallback.allowed() ? this.fallbackStore : null;
			}
		}
		if (!allowed) {
			// Rejected by a failure mode, or by the fallback: what the others took is given back, in one call each.
			List<Integer> taken = new ArrayList<>();
			for (int i = 0; i < size; i++) {
				if (heldBy[i] != null) {
					taken.add(i);
				}
			}
			new Admission(this, acquisitions, decisions, countedAt, heldBy)
				.refund(taken.stream().mapToInt(Integer::intValue).toArray());
			for (int i : taken) {
				decisions[i] = OneByOne.givenBack(Objects.requireNonNull(decisions[i]), acquisitions.get(i).cost());
			}
		}
		for (int i = 0; i < size; i++) {
			if (!failed[i] || (fallback != null && localIndexes.contains(i))) {
				decisions[i] = notify(acquisitions.get(i).policy(), Objects.requireNonNull(decisions[i]));
			}
		}
		return new Admission(this, acquisitions, decisions, countedAt, heldBy);
	}

	/**
	 * The rejection of a request whose cost exceeds the capacity, answered here: every store rejects it and counts
	 * nothing, so its remaining units are not asked for (reported as the capacity).
	 */
	private static Decision neverFits(RateLimitPolicy policy) {
		return new Decision(false, policy.capacity(), policy.capacity(), 0, Decision.NEVER, Decision.Origin.DENY_CACHE);
	}

	private static List<Acquisition> bounded(List<Acquisition> acquisitions) {
		List<Acquisition> bounded = new ArrayList<>(acquisitions.size());
		for (Acquisition acquisition : acquisitions) {
			String key = StoreKeys.bounded(acquisition.key());
			bounded.add(key.equals(acquisition.key()) ? acquisition
					: new Acquisition(acquisition.policy(), key, acquisition.cost()));
		}
		return bounded;
	}

	/** Give back what admitted acquisitions hold, in one call; a store that cannot be reached keeps it. */
	void refund(RateLimitStore holder, List<Acquisition> acquisitions, long[] countedAt) {
		try {
			if (acquisitions.size() == 1) {
				holder.refund(acquisitions.get(0), countedAt[0]);
			}
			else {
				holder.refundAll(acquisitions, countedAt);
			}
		}
		catch (RuntimeException ex) {
			long now = this.clock.currentTimeMillis();
			String policies = acquisitions.stream().map((acquisition) -> "'" + acquisition.policy().name() + "'")
				.distinct().collect(Collectors.joining(", "));
			this.failureLogger.log(Level.WARNING, now, (skipped) -> "Rate limit store could not give back units of "
					+ "policy " + policies + " (" + ex.getMessage() + "); the client stays counted"
					+ ((skipped > 0) ? " (" + skipped + " more failures since the last message)" : ""), null);
		}
	}

	/**
	 * Read the state of {@code key} under {@code policy} from the store, taking nothing and keeping nothing (see
	 * {@link RateLimitStore#peek}).
	 * @param policy the policy
	 * @param key the counter key, as passed to {@code tryAcquire}
	 * @return a rejection that tells the remaining units and the reset
	 * @throws io.github.ratelimit.store.RateLimitStoreException if the store cannot be reached
	 * @since 0.2.0
	 */
	public Decision peek(RateLimitPolicy policy, String key) {
		return this.store.peek(policy, StoreKeys.bounded(key));
	}

	/**
	 * Forget the state of {@code key} under {@code policy}, in the store and in this limiter's deny cache, so that
	 * its next request is decided as a new client's: what an operator does to unblock a customer.
	 * @param policy the policy
	 * @param key the counter key, as passed to {@code tryAcquire}
	 * @throws io.github.ratelimit.store.RateLimitStoreException if the store cannot be reached (the deny cache is
	 * cleared for the key all the same)
	 */
	public void reset(RateLimitPolicy policy, String key) {
		key = StoreKeys.bounded(key);
		// Decisions under way may have been made on the old state: none learned before this point is remembered.
		this.resets.incrementAndGet();
		try {
			this.fallbackStore.reset(policy, key);
			this.store.reset(policy, key);
		}
		finally {
			if (this.denyCache != null) {
				this.denyCache.evict(policy, key);
			}
		}
	}

	/**
	 * Forget every counter: in the store (of a shared store, those under its key prefix only), in the in-memory
	 * fallback and in the deny cache. What tests do between cases; see {@link RateLimitStore#clear()}.
	 * @throws io.github.ratelimit.store.RateLimitStoreException if the store cannot be reached (the local state is
	 * cleared all the same)
	 * @throws UnsupportedOperationException if the store cannot forget all its counters
	 */
	public void clear() {
		this.resets.incrementAndGet();
		try {
			this.fallbackStore.clear();
			this.store.clear();
		}
		finally {
			if (this.denyCache != null) {
				this.denyCache.clear();
			}
		}
	}

	/**
	 * Forget every rejection this limiter remembers locally, for every policy: after the store lost its state
	 * (restarted empty, failed over, flushed by an operator), so that clients it would now admit are not turned
	 * away until their cached denials end.
	 */
	public void clearDenyCache() {
		this.resets.incrementAndGet();
		if (this.denyCache != null) {
			this.denyCache.clear();
		}
	}

	private Decision tryAcquireGuarded(RateLimitPolicy policy, String key, long cost) {
		long now = this.clock.currentTimeMillis();
		long resets = this.resets.get();
		if (this.denyCache != null) {
			Decision denied = this.denyCache.check(policy, key, cost, now);
			if (denied != null) {
				return notify(policy, denied);
			}
		}
		CircuitBreaker breaker = this.partitioned ? breaker(this.store.partitionOf(policy, key)) : this.circuitBreaker;
		CircuitBreaker.Permission permission = breaker.tryCall(now);
		if (permission == CircuitBreaker.Permission.SKIP) {
			return onStoreFailure(policy, key, cost, now, breaker, null);
		}
		Decision decision;
		boolean reported = false;
		try {
			decision = this.store.tryAcquire(policy, key, cost);
			breaker.onSuccess();
			reported = true;
		}
		catch (RuntimeException ex) {
			if (!(ex instanceof IllegalArgumentException)) {
				reported = true;
			}
			return onStoreException(policy, key, cost, breaker, permission, ex);
		}
		finally {
			if (!reported) {
				breaker.release(permission); // a probe must not stay taken by an error or a bug
			}
		}
		if (this.denyCache != null && !decision.allowed() && this.resets.get() == resets) {
			this.denyCache.remember(policy, key, cost, decision, now);
		}
		return notify(policy, decision);
	}

	private Decision onStoreException(RateLimitPolicy policy, String key, long cost, CircuitBreaker breaker,
			CircuitBreaker.Permission permission, RuntimeException ex) {
		if (ex instanceof IllegalArgumentException) {
			throw ex; // a programming error, not an outage
		}
		long now = this.clock.currentTimeMillis();
		breaker.onFailure(now, permission, ex);
		return onStoreFailure(policy, key, cost, now, breaker, ex);
	}

	/**
	 * Return the circuit breaker of one part of a partitioned store, created on first use.
	 */
	private CircuitBreaker breaker(String partition) {
		if (partition.isEmpty()) {
			return this.circuitBreaker;
		}
		CircuitBreaker breaker = this.partitionBreakers.get(partition);
		if (breaker != null) {
			return breaker;
		}
		if (this.partitionBreakers.size() >= MAX_PARTITIONS) {
			// Partitions are nodes; so many means ids that churn (failovers): forget the old ones.
			this.partitionBreakers.clear();
		}
		return this.partitionBreakers.computeIfAbsent(partition,
				(name) -> new CircuitBreaker(this.failureThreshold, this.openMillis, name));
	}

	/**
	 * Return the listener this limiter reports decisions to.
	 * @return the listener
	 * @since 0.2.0
	 */
	public RateLimitListener listener() {
		return this.listener;
	}

	/**
	 * Return the store this limiter asks.
	 * @return the store
	 */
	public RateLimitStore store() {
		return this.store;
	}

	/**
	 * Return whether a circuit breaker is open: the store (or, for a store of several parts such as a Redis Cluster,
	 * one of its parts) failed repeatedly and is not being called.
	 * @return whether a circuit is open
	 */
	public boolean isCircuitOpen() {
		if (this.circuitBreaker.isOpen()) {
			return true;
		}
		for (CircuitBreaker breaker : this.partitionBreakers.values()) {
			if (breaker.isOpen()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Return whether the circuit breaker of the part of the store that holds {@code key} is open.
	 * @param policy the policy
	 * @param key the counter key
	 * @return whether that circuit is open
	 */
	public boolean isCircuitOpen(RateLimitPolicy policy, String key) {
		String bounded = StoreKeys.bounded(key);
		return (this.partitioned ? breaker(this.store.partitionOf(policy, bounded)) : this.circuitBreaker).isOpen();
	}

	private Decision onStoreFailure(RateLimitPolicy policy, String key, long cost, long now, CircuitBreaker breaker,
			@Nullable RuntimeException failure) {
		logFailure(policy, now, failure);
		FailureMode mode = policy.failureMode();
		Decision decision = switch (mode) {
			case ALLOW -> new Decision(true, policy.capacity(), policy.capacity(), 0, 0, Decision.Origin.FAIL_OPEN);
			case DENY -> {
				long retry = breaker.millisUntilRetry(this.clock.currentTimeMillis());
				yield new Decision(false, policy.capacity(), 0, retry, retry, Decision.Origin.FAIL_CLOSED);
			}
			case LOCAL -> this.fallbackStore.tryAcquire(policy, key, cost).withOrigin(Decision.Origin.LOCAL_FALLBACK);
		};
		return notify(policy, decision);
	}

	private void logFailure(RateLimitPolicy policy, long now, @Nullable RuntimeException failure) {
		this.listener.onStoreFailure(policy, failure);
		FailureMode mode = policy.failureMode();
		String cause = (failure != null) ? failure.getMessage() : "circuit open after repeated failures";
		this.failureLogger.log(Level.WARNING, now, (skipped) -> "Rate limit store could not decide for policy '"
				+ policy.name() + "' (" + cause + "); failure mode " + mode + ": " + describe(mode)
				+ ((skipped > 0) ? " (" + skipped + " more failures since the last message)" : ""), null);
	}

	private static String describe(FailureMode mode) {
		return switch (mode) {
			case ALLOW -> "requests pass uncounted";
			case DENY -> "requests are rejected with 503";
			case LOCAL -> "requests are limited by this instance alone";
		};
	}

	private Decision notify(RateLimitPolicy policy, Decision decision) {
		this.listener.onDecision(policy, decision);
		return decision;
	}

	/**
	 * Builder for {@link RateLimiter}.
	 */
	public static final class Builder {

		private final RateLimitStore store;

		private TimeSource clock = TimeSource.system();

		private RateLimitListener listener = RateLimitListener.NONE;

		private @Nullable Boolean denyCache;

		private int denyCacheMaxKeys = DEFAULT_DENY_CACHE_MAX_KEYS;

		private int failureThreshold = DEFAULT_FAILURE_THRESHOLD;

		private Duration openDuration = Duration.ofMillis(DEFAULT_OPEN_DURATION_MILLIS);

		private Duration failureLogInterval = Duration.ofMillis(DEFAULT_FAILURE_LOG_INTERVAL_MILLIS);

		private @Nullable RateLimitStore fallbackStore;

		private long fallbackMaxKeys = InMemoryRateLimitStore.DEFAULT_MAX_KEYS;

		private Builder(RateLimitStore store) {
			this.store = Checks.notNull(store, "store");
		}

		/**
		 * Set the clock used for local decisions (deny cache, circuit breaker, fallback store); the system clock by
		 * default.
		 * @param clock the clock
		 * @return this builder
		 */
		public Builder clock(TimeSource clock) {
			this.clock = Checks.notNull(clock, "clock");
			return this;
		}

		/**
		 * Set the listener told of every decision and store failure.
		 * @param listener the listener
		 * @return this builder
		 */
		public Builder listener(RateLimitListener listener) {
			this.listener = Checks.notNull(listener, "listener");
			return this;
		}

		/**
		 * Set whether to reject locally the keys the store has rejected until a known time. On by default for
		 * stores that are not {@linkplain RateLimitStore#isLocal() local}.
		 * @param enabled whether to use the deny cache
		 * @return this builder
		 */
		public Builder denyCache(boolean enabled) {
			this.denyCache = enabled;
			return this;
		}

		/**
		 * Set how many keys the deny cache holds at most; 100,000 by default.
		 * @param maxKeys the maximum, at least 1
		 * @return this builder
		 */
		public Builder denyCacheMaxKeys(int maxKeys) {
			this.denyCacheMaxKeys = (int) Checks.atLeast(maxKeys, 1, "denyCacheMaxKeys");
			return this;
		}

		/**
		 * Set how many consecutive store failures open the circuit; 3 by default.
		 * @param failureThreshold the threshold, at least 1
		 * @return this builder
		 */
		public Builder failureThreshold(int failureThreshold) {
			this.failureThreshold = (int) Checks.atLeast(failureThreshold, 1, "failureThreshold");
			return this;
		}

		/**
		 * Set how long the circuit stays open before a probe; 2 seconds by default.
		 * @param openDuration the duration, at least 1ms
		 * @return this builder
		 */
		public Builder openDuration(Duration openDuration) {
			this.openDuration = Checks.positiveWholeMillis(openDuration, "openDuration");
			return this;
		}

		/**
		 * Set the least time between two WARN messages about store failures; 1 minute by default.
		 * @param interval the interval
		 * @return this builder
		 */
		public Builder failureLogInterval(Duration interval) {
			this.failureLogInterval = Checks.notNull(interval, "failureLogInterval");
			return this;
		}

		/**
		 * Set the store used by policies whose failure mode is {@link FailureMode#LOCAL}; an in-memory store on
		 * this limiter's clock by default.
		 * @param fallbackStore the fallback store
		 * @return this builder
		 */
		public Builder fallbackStore(RateLimitStore fallbackStore) {
			this.fallbackStore = Checks.notNull(fallbackStore, "fallbackStore");
			return this;
		}

		/**
		 * Set how many keys the default fallback store holds at most; 100,000 by default.
		 * @param maxKeys the maximum, at least 1
		 * @return this builder
		 */
		public Builder fallbackMaxKeys(long maxKeys) {
			this.fallbackMaxKeys = Checks.atLeast(maxKeys, 1, "fallbackMaxKeys");
			return this;
		}

		/**
		 * Build the limiter.
		 * @return the limiter
		 */
		public RateLimiter build() {
			return new RateLimiter(this);
		}

	}

}
