package io.github.ratelimit.limiter;

import java.lang.System.Logger;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.internal.Checks;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.Reservation;
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
 * {@link RateLimitStoreException}), the policy's {@link FailureMode} decides; a circuit breaker stops calling a
 * store that keeps failing and probes it again after a delay.
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

	private final RateLimitStore store;

	/** What decisions, refunds and resets go to: the store, behind this instance's leased blocks if it is shared. */
	private final RateLimitStore asked;

	private final Denials denials;

	/** Whether this is {@link #unlimited()}, which admits even a cost beyond the capacity. */
	private final boolean unlimited;

	private final StoreBreakers breakers;

	private final TimeSource clock;

	private final RateLimitListener listener;

	private final RateLimitStore fallbackStore;

	private final LimiterParts parts;

	private final GuardedDecision guarded;

	private RateLimiter(Builder builder) {
		this.store = builder.store;
		this.asked = builder.store.isLocal() ? builder.store : new LeasingStore(builder.store, builder.clock);
		this.clock = builder.clock;
		this.listener = builder.listener;
		boolean denyCache = (builder.denyCache != null) ? builder.denyCache : !builder.store.isLocal();
		this.denials = new Denials(denyCache ? new LocalDenyCache(builder.denyCacheMaxKeys) : null, builder.store,
				this.asked);
		this.unlimited = builder.store == UnlimitedStore.INSTANCE;
		this.breakers = new StoreBreakers(builder.store, builder.failureThreshold, builder.openDuration.toMillis());
		this.fallbackStore = (builder.fallbackStore != null) ? builder.fallbackStore
				: InMemoryRateLimitStore.builder().clock(builder.clock).maxKeys(builder.fallbackMaxKeys).build();
		ThrottledLogger failureLogger = new ThrottledLogger(logger, builder.failureLogInterval.toMillis());
		FailureModes failureModes = new FailureModes(this.listener, this.clock, this.fallbackStore, failureLogger);
		this.parts = new LimiterParts(this.asked, this.denials, this.breakers, failureModes,
				new Adjustments(this.listener, this.clock, failureLogger,
						new ThrottledLogger(logger, builder.failureLogInterval.toMillis())),
				this.clock, this.listener, this.unlimited);
		this.guarded = new GuardedDecision(this.asked, this.denials, this.breakers, failureModes, this.clock,
				this.listener);
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
		@Nullable CircuitBreaker single = this.breakers.single(policy);
		if (this.denials.isOff() && single != null && !single.isOpen()) {
			// The common path for a local store, kept small so that the JIT can inline it whole.
			Decision decision;
			try {
				decision = this.asked.tryAcquire(policy, key, cost);
			}
			catch (RuntimeException ex) {
				return this.guarded.onStoreException(policy, key, cost, single, CircuitBreaker.Permission.CALL, ex);
			}
			single.onSuccess();
			return notify(policy, decision);
		}
		return this.guarded.tryAcquire(policy, key, cost);
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
		return answer.handle(attempt::afterAnswer)
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
		return new AdmissionAttempt(this.parts, acquisitions, this.clock.currentTimeMillis(), this.denials.resets(),
				nonBlocking);
	}

	/**
	 * The rejection of a request whose cost exceeds the capacity, answered here: every store rejects it and counts
	 * nothing, so its remaining units are not asked for (reported as the capacity).
	 */
	static Decision neverFits(RateLimitPolicy policy) {
		return new Decision(false, policy.capacity(), policy.capacity(), 0, Decision.NEVER, Decision.Origin.DENY_CACHE);
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
		this.denials.resetting();
		try {
			this.fallbackStore.reset(policy, key);
			this.asked.reset(policy, key);
		}
		finally {
			this.denials.forget(policy, key);
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
		this.denials.resetting();
		try {
			this.fallbackStore.clear();
			this.asked.clear();
		}
		finally {
			this.denials.forgetAll();
		}
	}

	/**
	 * Forget every rejection this limiter remembers locally, for every policy: after the store lost its state
	 * (restarted empty, failed over, flushed by an operator), so that clients it would now admit are not turned
	 * away until their cached denials end.
	 */
	public void clearDenyCache() {
		this.denials.resetting();
		this.denials.forgetAll();
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
		return this.breakers.anyOpen();
	}

	/**
	 * Return whether the circuit breaker of the part of the store that holds {@code key} is open.
	 * @param policy the policy
	 * @param key the counter key
	 * @return whether that circuit is open
	 */
	public boolean isCircuitOpen(RateLimitPolicy policy, String key) {
		return this.breakers.of(policy, StoreKeys.bounded(key)).isOpen();
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
