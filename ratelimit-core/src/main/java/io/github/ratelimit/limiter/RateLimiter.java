package io.github.ratelimit.limiter;

import io.github.ratelimit.internal.Checks;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Algorithm;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.OneByOne;
import io.github.ratelimit.store.PartialStoreFailureException;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
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
 * <li>In front of a remote store, a policy that leases ({@link RateLimitPolicy#lease()}) has this instance take a
 * hot key's units a block at a time and admit from the block without a round trip (see
 * {@link Decision.Origin#LEASE}); a reset drops this instance's block of the key.
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

	/** What decisions, refunds and resets go to: the store, behind this instance's leased blocks if it is shared. */
	private final RateLimitStore asked;

	private final @Nullable LocalDenyCache denyCache;

	/** Whether this is {@link #unlimited()}, which admits even a cost beyond the capacity. */
	private final boolean unlimited;

	/** The breaker of a partitioned store's default part. */
	private final CircuitBreaker circuitBreaker;

	/**
	 * On a store of one part, a breaker per algorithm, each a script of its own on Redis: one that fails (a script
	 * error, a slow key) does not send the policies of the others to their failure modes.
	 */
	private final EnumMap<Algorithm, CircuitBreaker> algorithmBreakers = new EnumMap<>(Algorithm.class);

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

	private final ThrottledLogger chargeLogger;

	private RateLimiter(Builder builder) {
		this.store = builder.store;
		this.asked = builder.store.isLocal() ? builder.store : new LeasingStore(builder.store, builder.clock);
		this.clock = builder.clock;
		this.listener = builder.listener;
		boolean denyCache = (builder.denyCache != null) ? builder.denyCache : !builder.store.isLocal();
		this.denyCache = denyCache ? new LocalDenyCache(builder.denyCacheMaxKeys) : null;
		this.unlimited = builder.store == UnlimitedStore.INSTANCE;
		this.failureThreshold = builder.failureThreshold;
		this.openMillis = builder.openDuration.toMillis();
		this.circuitBreaker = new CircuitBreaker(this.failureThreshold, this.openMillis, "");
		for (Algorithm algorithm : Algorithm.values()) {
			this.algorithmBreakers.put(algorithm, new CircuitBreaker(this.failureThreshold, this.openMillis, ""));
		}
		this.partitioned = builder.store.isPartitioned();
		this.fallbackStore = (builder.fallbackStore != null) ? builder.fallbackStore
				: InMemoryRateLimitStore.builder().clock(builder.clock).maxKeys(builder.fallbackMaxKeys).build();
		this.failureLogger = new ThrottledLogger(logger, builder.failureLogInterval.toMillis());
		this.chargeLogger = new ThrottledLogger(logger, builder.failureLogInterval.toMillis());
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
	 * Return a limiter that admits every request, whatever its cost, with the policy's whole capacity left: it has no
	 * store, so it counts nothing, keeps nothing and calls nothing, and resets and clears have nothing to forget. What
	 * an application whose limits are switched off injects, so that its code runs unchanged.
	 * @return the limiter
	 * @since 0.3.0
	 */
	public static RateLimiter unlimited() {
		return builder(UnlimitedStore.INSTANCE).fallbackStore(UnlimitedStore.INSTANCE).build();
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
		if (cost > policy.capacity() && !this.unlimited) {
			return notify(policy, neverFits(policy)); // no store admits it: not worth a call
		}
		key = StoreKeys.bounded(key);
		@Nullable CircuitBreaker single = this.partitioned ? null : this.algorithmBreakers.get(policy.algorithm());
		if (this.denyCache == null && single != null && !single.isOpen()) {
			// The common path for a local store, kept small so that the JIT can inline it whole.
			Decision decision;
			try {
				decision = this.asked.tryAcquire(policy, key, cost);
			}
			catch (RuntimeException ex) {
				return onStoreException(policy, key, cost, single, CircuitBreaker.Permission.CALL, ex);
			}
			single.onSuccess();
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
		AdmissionAttempt attempt = attempt(acquisitions, false);
		Admission decided = attempt.beforeStore();
		if (decided != null) {
			return decided;
		}
		Reservation reservation;
		try {
			reservation = this.asked.tryAcquireAll(attempt.toAsk());
		}
		catch (RuntimeException ex) {
			return attempt.afterFailure(ex);
		}
		catch (Error error) {
			attempt.releasePermissions();
			throw error;
		}
		return attempt.afterStore(reservation);
	}

	/**
	 * Decide a request that several limits apply to as {@link #tryAcquireAll} does, without making the calling
	 * thread wait for the store (see {@link RateLimitStore#tryAcquireAllAsync}): what a non-blocking web stack asks
	 * on its event loop. Deny cache, circuit breakers, failure modes and the in-memory fallback decide exactly as on
	 * the blocking path; what a rejected request's other limits took is given back before the stage completes.
	 * @param acquisitions the acquisitions, of different policies or keys, at least one
	 * @return a stage that completes with the admission; exceptionally only for a programming error (an
	 * {@link IllegalArgumentException} from the store), never for a store failure
	 * @throws IllegalArgumentException if there is no acquisition
	 * @since 0.2.0
	 */
	public CompletionStage<Admission> tryAcquireAllAsync(List<Acquisition> acquisitions) {
		AdmissionAttempt attempt = attempt(acquisitions, true);
		Admission decided = attempt.beforeStore();
		if (decided != null) {
			return attempt.givenBack(decided);
		}
		CompletionStage<Reservation> answer;
		try {
			answer = this.asked.tryAcquireAllAsync(attempt.toAsk());
		}
		catch (RuntimeException ex) {
			answer = CompletableFuture.failedFuture(ex);
		}
		catch (Error error) {
			attempt.releasePermissions();
			throw error;
		}
		return answer.handle((reservation, failure) -> settle(attempt, reservation, failure))
			.thenCompose(attempt::givenBack);
	}

	/**
	 * Take {@code cost} units for {@code key} under {@code policy} as {@link #tryAcquire(RateLimitPolicy, String, long)}
	 * does, without making the calling thread wait for the store (see {@link #tryAcquireAllAsync}).
	 * @param policy the policy
	 * @param key the counter key
	 * @param cost the units this request takes, at least 1
	 * @return a stage that completes with the decision
	 * @throws IllegalArgumentException if {@code cost} is less than 1
	 * @since 0.2.0
	 */
	public CompletionStage<Decision> tryAcquireAsync(RateLimitPolicy policy, String key, long cost) {
		return tryAcquireAllAsync(List.of(new Acquisition(policy, key, cost)))
			.thenApply((admission) -> Objects.requireNonNull(admission.decision(0)));
	}

	private AdmissionAttempt attempt(List<Acquisition> acquisitions, boolean nonBlocking) {
		if (acquisitions.isEmpty()) {
			throw new IllegalArgumentException("'acquisitions' must not be empty");
		}
		return new AdmissionAttempt(this, this.asked, bounded(acquisitions), this.clock.currentTimeMillis(),
				this.resets.get(), nonBlocking);
	}

	private static Admission settle(AdmissionAttempt attempt, @Nullable Reservation reservation,
			@Nullable Throwable failure) {
		if (failure == null) {
			return attempt.afterStore(Objects.requireNonNull(reservation));
		}
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		if (cause instanceof RuntimeException ex) {
			return attempt.afterFailure(ex);
		}
		if (cause instanceof Error error) {
			attempt.releasePermissions();
			throw error;
		}
		// A checked exception through a stage: the store could not decide.
		return attempt.afterFailure(new RateLimitStoreException("Rate limit store failed: " + cause, cause));
	}

	/**
	 * The rejection of a request whose cost exceeds the capacity, answered here: every store rejects it and counts
	 * nothing, so its remaining units are not asked for (reported as the capacity).
	 */
	static Decision neverFits(RateLimitPolicy policy) {
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
			logRefundFailure(acquisitions, ex);
		}
	}

	/**
	 * Take the extra units of an admission whose cost turned out higher. A failed charge is tried once more (a charge
	 * that landed although its answer was lost is then taken twice: too much rather than nothing); one that fails
	 * again leaves the key with what it reserved, and is told to the listener and logged at WARN.
	 */
	void charge(RateLimitStore holder, Acquisition extra, long countedAt) {
		RuntimeException failure;
		try {
			holder.charge(extra, countedAt);
			return;
		}
		catch (UnsupportedOperationException ex) {
			failure = ex;
		}
		catch (RuntimeException ex) {
			try {
				holder.charge(extra, countedAt);
				return;
			}
			catch (RuntimeException again) {
				failure = again;
			}
		}
		this.listener.onChargeLost(extra.policy(), extra.cost(), failure);
		String message = failure.getMessage();
		this.chargeLogger.log(Level.WARNING, this.clock.currentTimeMillis(),
				(skipped) -> "Rate limit store could not charge " + extra.cost() + " units of policy '"
						+ extra.policy().name() + "' settled after the response (" + message
						+ "); the client is counted for its reservation only"
						+ ((skipped > 0) ? " (" + skipped + " more lost charges since the last message)" : ""),
				null);
	}

	/** Give back what admitted acquisitions hold, in one call, without waiting for it; never completes exceptionally. */
	CompletionStage<Void> refundAsync(RateLimitStore holder, List<Acquisition> acquisitions, long[] countedAt) {
		CompletionStage<Void> given;
		try {
			given = holder.refundAllAsync(acquisitions, countedAt);
		}
		catch (RuntimeException ex) {
			given = CompletableFuture.failedFuture(ex);
		}
		return given.handle((ignored, failure) -> {
			if (failure != null) {
				logRefundFailure(acquisitions,
						(failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
								: failure);
			}
			return null;
		});
	}

	private void logRefundFailure(List<Acquisition> acquisitions, Throwable failure) {
		long now = this.clock.currentTimeMillis();
		String policies = acquisitions.stream().map((acquisition) -> "'" + acquisition.policy().name() + "'")
			.distinct().collect(Collectors.joining(", "));
		this.failureLogger.log(Level.WARNING, now, (skipped) -> "Rate limit store could not give back units of "
				+ "policy " + policies + " (" + failure.getMessage() + "); the client stays counted"
				+ ((skipped > 0) ? " (" + skipped + " more failures since the last message)" : ""), null);
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
			this.asked.reset(policy, key);
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
			this.asked.clear();
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
			Decision denied = cachedDenial(this.denyCache, policy, key, cost, now);
			if (denied != null) {
				return notify(policy, denied);
			}
		}
		CircuitBreaker breaker = breakerOf(policy, key);
		CircuitBreaker.Permission permission = breaker.tryCall(now);
		if (permission == CircuitBreaker.Permission.SKIP) {
			return onStoreFailure(policy, key, cost, now, breaker, null);
		}
		Decision decision;
		boolean reported = false;
		try {
			decision = this.asked.tryAcquire(policy, key, cost);
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

	/** Return the circuit breaker of the part of the store that decides for an acquisition. */
	CircuitBreaker breakerOf(Acquisition acquisition) {
		return breakerOf(acquisition.policy(), acquisition.key());
	}

	/** The breaker of the store's part holding the key, or, on a store of one part, of the policy's algorithm. */
	private CircuitBreaker breakerOf(RateLimitPolicy policy, String key) {
		return this.partitioned ? breaker(this.store.partitionOf(policy, key))
				: Objects.requireNonNull(this.algorithmBreakers.get(policy.algorithm()));
	}

	/**
	 * Return the cached denial of a request, unless this instance holds leased units of the key that it can admit
	 * from: a denial learned while another request of this instance was taking a block must not shadow the block.
	 */
	@Nullable Decision cachedDenial(LocalDenyCache denyCache, RateLimitPolicy policy, String key, long cost, long now) {
		Decision denied = denyCache.check(policy, key, cost, now);
		if (denied != null && LeasingStore.leases(policy) && this.asked instanceof LeasingStore leasing
				&& leasing.holds(policy, key, cost)) {
			return null;
		}
		return denied;
	}

	@Nullable LocalDenyCache denyCache() {
		return this.denyCache;
	}

	boolean isUnlimited() {
		return this.unlimited;
	}

	/** Return how many resets and clears this limiter has seen: a denial decided across one is not cached. */
	long resets() {
		return this.resets.get();
	}

	long currentTimeMillis() {
		return this.clock.currentTimeMillis();
	}

	RateLimitStore fallbackStore() {
		return this.fallbackStore;
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
		for (CircuitBreaker breaker : this.algorithmBreakers.values()) {
			if (breaker.isOpen()) {
				return true;
			}
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
		return breakerOf(policy, bounded).isOpen();
	}

	Decision onStoreFailure(RateLimitPolicy policy, String key, long cost, long now, CircuitBreaker breaker,
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

	void logFailure(RateLimitPolicy policy, long now, @Nullable RuntimeException failure) {
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

	Decision notify(RateLimitPolicy policy, Decision decision) {
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
