package io.github.ratelimit;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;

import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import org.jspecify.annotations.Nullable;

/**
 * Decides whether a request may pass: asks a {@link RateLimitStore}, and applies what surrounds every remote
 * decision.
 * <ul>
 * <li>Keys longer than 256 UTF-8 bytes are replaced by their SHA-256, so that clients cannot inflate the store.
 * <li>In front of a remote store, a local deny cache rejects a key that the store has rejected until the time the
 * store gave, without a round trip (see {@link Decision.Origin#DENY_CACHE}).
 * <li>When the store fails (any exception but {@link IllegalArgumentException}, typically a
 * {@link io.github.ratelimit.store.RateLimitStoreException}), the policy's {@link FailureMode} decides; a circuit breaker stops calling a store that
 * keeps failing and probes it again after a delay.
 * </ul>
 * Thread-safe; one instance serves the whole application.
 *
 * @since 0.1.0
 */
public final class RateLimiter {

	private static final Logger logger = System.getLogger(RateLimiter.class.getName());

	private final RateLimitStore store;

	private final @Nullable LocalDenyCache denyCache;

	private final CircuitBreaker circuitBreaker;

	private final TimeSource clock;

	private final RateLimitListener listener;

	private final @Nullable RateLimitStore fallbackStore;

	private final ThrottledLogger failureLogger;

	private RateLimiter(Builder builder) {
		this.store = builder.store;
		this.clock = builder.clock;
		this.listener = builder.listener;
		boolean denyCache = (builder.denyCache != null) ? builder.denyCache : !builder.store.isLocal();
		this.denyCache = denyCache ? new LocalDenyCache(builder.denyCacheMaxKeys) : null;
		this.circuitBreaker = new CircuitBreaker(builder.failureThreshold, builder.openDuration.toMillis());
		this.fallbackStore = (builder.fallbackStore != null) ? builder.fallbackStore
				: InMemoryRateLimitStore.builder().clock(builder.clock).maxKeys(builder.fallbackMaxKeys).build();
		this.failureLogger = new ThrottledLogger(logger, builder.failureLogInterval.toMillis());
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
		key = Keys.bounded(key);
		if (this.denyCache == null && !this.circuitBreaker.isOpen()) {
			// The common path for a local store, kept small so that the JIT can inline it whole.
			Decision decision;
			try {
				decision = this.store.tryAcquire(policy, key, cost);
			}
			catch (RuntimeException ex) {
				return onStoreException(policy, key, cost, CircuitBreaker.Permission.CALL, ex);
			}
			this.circuitBreaker.onSuccess();
			return notify(policy, decision);
		}
		return tryAcquireGuarded(policy, key, cost);
	}

	/**
	 * Take one unit for {@code key} under {@code policy} if available, answering only whether the request may pass.
	 * @param policy the policy
	 * @param key the counter key
	 * @return whether the request may pass
	 * @see #tryAcquirePermit(RateLimitPolicy, String, long)
	 */
	public boolean tryAcquirePermit(RateLimitPolicy policy, String key) {
		return tryAcquirePermit(policy, key, 1);
	}

	/**
	 * Take {@code cost} units as {@link #tryAcquire(RateLimitPolicy, String, long)} does, answering only whether the
	 * request may pass: for callers that write no headers, such as a filter that only rejects. The counters, the
	 * failure mode and the listener are the same, and it never throws for a store failure either. With no listener
	 * and a store that implements {@link RateLimitStore#tryAcquirePermit} without allocating (the in-memory store
	 * does, for a key it already holds), it allocates nothing for keys of up to 85 characters; otherwise it costs
	 * what {@code tryAcquire} costs.
	 * @param policy the policy
	 * @param key the counter key
	 * @param cost the units this request takes, at least 1
	 * @return whether the request may pass
	 * @throws IllegalArgumentException if {@code cost} is less than 1
	 */
	public boolean tryAcquirePermit(RateLimitPolicy policy, String key, long cost) {
		if (this.denyCache != null || this.listener != RateLimitListener.NONE || this.circuitBreaker.isOpen()) {
			return tryAcquire(policy, key, cost).allowed(); // they need the whole decision
		}
		if (cost < 1) {
			throw new IllegalArgumentException("'cost' must be at least 1 but was " + cost);
		}
		key = Keys.bounded(key);
		boolean allowed;
		try {
			allowed = this.store.tryAcquirePermit(policy, key, cost);
		}
		catch (RuntimeException ex) {
			return onStoreException(policy, key, cost, CircuitBreaker.Permission.CALL, ex).allowed();
		}
		this.circuitBreaker.onSuccess();
		return allowed;
	}

	private Decision tryAcquireGuarded(RateLimitPolicy policy, String key, long cost) {
		long now = this.clock.currentTimeMillis();
		if (this.denyCache != null) {
			Decision denied = this.denyCache.check(policy, key, cost, now);
			if (denied != null) {
				return notify(policy, denied);
			}
		}
		CircuitBreaker.Permission permission = this.circuitBreaker.tryCall(now);
		if (permission == CircuitBreaker.Permission.SKIP) {
			return onStoreFailure(policy, key, cost, now, null);
		}
		Decision decision;
		boolean reported = false;
		try {
			decision = this.store.tryAcquire(policy, key, cost);
			this.circuitBreaker.onSuccess();
			reported = true;
		}
		catch (RuntimeException ex) {
			if (!(ex instanceof IllegalArgumentException)) {
				reported = true;
			}
			return onStoreException(policy, key, cost, permission, ex);
		}
		finally {
			if (!reported) {
				this.circuitBreaker.release(permission); // a probe must not stay taken by an error or a bug
			}
		}
		if (this.denyCache != null && !decision.allowed()) {
			this.denyCache.remember(policy, key, cost, decision, now);
		}
		return notify(policy, decision);
	}

	private Decision onStoreException(RateLimitPolicy policy, String key, long cost,
			CircuitBreaker.Permission permission, RuntimeException ex) {
		if (ex instanceof IllegalArgumentException) {
			throw ex; // a programming error, not an outage
		}
		long now = this.clock.currentTimeMillis();
		this.circuitBreaker.onFailure(now, permission, ex);
		return onStoreFailure(policy, key, cost, now, ex);
	}

	/**
	 * Return the store this limiter asks.
	 * @return the store
	 */
	public RateLimitStore store() {
		return this.store;
	}

	/**
	 * Return whether the circuit breaker is open: the store failed repeatedly and is not being called.
	 * @return whether the circuit is open
	 */
	public boolean isCircuitOpen() {
		return this.circuitBreaker.isOpen();
	}

	private Decision onStoreFailure(RateLimitPolicy policy, String key, long cost, long now,
			@Nullable RuntimeException failure) {
		this.listener.onStoreFailure(policy, failure);
		FailureMode mode = policy.failureMode();
		String cause = (failure != null) ? failure.getMessage() : "circuit open after repeated failures";
		this.failureLogger.log(Level.WARNING, now, (skipped) -> "Rate limit store could not decide for policy '"
				+ policy.name() + "' (" + cause + "); failure mode " + mode + ": " + describe(mode)
				+ ((skipped > 0) ? " (" + skipped + " more failures since the last message)" : ""), null);
		Decision decision = switch (mode) {
			case ALLOW -> new Decision(true, policy.capacity(), policy.capacity(), 0, 0, Decision.Origin.FAIL_OPEN);
			case DENY -> {
				long retry = this.circuitBreaker.millisUntilRetry(this.clock.currentTimeMillis());
				yield new Decision(false, policy.capacity(), 0, retry, retry, Decision.Origin.FAIL_CLOSED);
			}
			case LOCAL -> this.fallbackStore.tryAcquire(policy, key, cost).withOrigin(Decision.Origin.LOCAL_FALLBACK);
		};
		return notify(policy, decision);
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

		private int denyCacheMaxKeys = 100_000;

		private int failureThreshold = 3;

		private Duration openDuration = Duration.ofSeconds(2);

		private Duration failureLogInterval = Duration.ofMinutes(1);

		private @Nullable RateLimitStore fallbackStore;

		private long fallbackMaxKeys = 100_000;

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
