package io.github.ratelimit;

import io.github.ratelimit.internal.Durations;
import java.time.Duration;

/**
 * The answer to one request: whether it may pass, and what a client needs to pace itself.
 *
 * @param allowed whether the request may pass
 * @param limit the most units that can be available at once (the limit, or the burst for the bucket algorithms)
 * @param remaining how many units could pass right now, after this request; never negative
 * @param resetAfterMillis milliseconds until the full capacity is available again (for the buckets: until full)
 * @param retryAfterMillis {@code 0} when allowed; otherwise milliseconds until a request of the same cost could
 * pass, or {@link #NEVER} if its cost exceeds the capacity
 * @param nextUnitAfterMillis milliseconds until more than {@code remaining} units are available: within that time no
 * more than {@code remaining} can pass (the <em>effective window</em> of the RateLimit header fields' draft 11);
 * {@code 0} when not known. When nothing is used, the time after which a unit used now could come back at the earliest
 * @param origin where the answer came from
 * @since 0.1.0
 */
public record Decision(boolean allowed, long limit, long remaining, long resetAfterMillis, long retryAfterMillis,
		long nextUnitAfterMillis, Origin origin) {

	/**
	 * Create a decision whose next unit is not known.
	 * @param allowed whether the request may pass
	 * @param limit the capacity
	 * @param remaining the units that could pass now
	 * @param resetAfterMillis milliseconds until the full capacity is available again
	 * @param retryAfterMillis {@code 0} when allowed, else the wait, or {@link #NEVER}
	 * @param origin where the answer came from
	 */
	public Decision(boolean allowed, long limit, long remaining, long resetAfterMillis, long retryAfterMillis,
			Origin origin) {
		this(allowed, limit, remaining, resetAfterMillis, retryAfterMillis, 0, origin);
	}

	/**
	 * The units left as a client may be told them: never below 0 (a limit lowered under what the state already
	 * counts) nor above the capacity.
	 */
	private static long clamp(long limit, long remaining) {
		return Math.max(0, Math.min(limit, remaining));
	}

	/** Value of {@link #retryAfterMillis()} for a request whose cost exceeds what can ever be available. */
	public static final long NEVER = -1;

	/**
	 * Create a decision that lets the request pass.
	 * @param limit the capacity
	 * @param remaining the units left after this request
	 * @param resetAfterMillis milliseconds until the full capacity is available again
	 * @return the decision
	 */
	public static Decision allowed(long limit, long remaining, long resetAfterMillis) {
		return new Decision(true, limit, clamp(limit, remaining), resetAfterMillis, 0, Origin.STORE);
	}

	/**
	 * Create a decision that lets the request pass, saying when the next unit comes back.
	 * @param limit the capacity
	 * @param remaining the units left after this request
	 * @param resetAfterMillis milliseconds until the full capacity is available again
	 * @param nextUnitAfterMillis milliseconds until more than {@code remaining} units are available
	 * @return the decision
	 * @since 0.2.0
	 */
	public static Decision allowed(long limit, long remaining, long resetAfterMillis, long nextUnitAfterMillis) {
		return new Decision(true, limit, clamp(limit, remaining), resetAfterMillis, 0, nextUnitAfterMillis,
				Origin.STORE);
	}

	/**
	 * Create a decision that rejects the request.
	 * @param limit the capacity
	 * @param remaining the units left
	 * @param resetAfterMillis milliseconds until the full capacity is available again
	 * @param retryAfterMillis milliseconds until a request of the same cost could pass, or {@link #NEVER}
	 * @return the decision
	 */
	public static Decision rejected(long limit, long remaining, long resetAfterMillis, long retryAfterMillis) {
		return new Decision(false, limit, clamp(limit, remaining), resetAfterMillis, retryAfterMillis, Origin.STORE);
	}

	/**
	 * Create a decision that rejects the request, saying when the next unit comes back.
	 * @param limit the capacity
	 * @param remaining the units left
	 * @param resetAfterMillis milliseconds until the full capacity is available again
	 * @param retryAfterMillis milliseconds until a request of the same cost could pass, or {@link #NEVER}
	 * @param nextUnitAfterMillis milliseconds until more than {@code remaining} units are available
	 * @return the decision
	 * @since 0.2.0
	 */
	public static Decision rejected(long limit, long remaining, long resetAfterMillis, long retryAfterMillis,
			long nextUnitAfterMillis) {
		return new Decision(false, limit, clamp(limit, remaining), resetAfterMillis, retryAfterMillis, nextUnitAfterMillis,
				Origin.STORE);
	}

	/**
	 * Return this decision with another origin.
	 * @param origin the origin
	 * @return a decision with the same values and the given origin
	 */
	public Decision withOrigin(Origin origin) {
		return (origin == this.origin) ? this
				: new Decision(this.allowed, this.limit, this.remaining, this.resetAfterMillis, this.retryAfterMillis,
						this.nextUnitAfterMillis, origin);
	}

	/**
	 * Return whether the counters were consulted: {@code false} when the store failed and the policy fails open or
	 * closed, in which case {@link #remaining()} and the reset mean nothing.
	 * @return whether remaining and reset are known
	 */
	public boolean isKnown() {
		return this.origin != Origin.FAIL_OPEN && this.origin != Origin.FAIL_CLOSED;
	}

	/**
	 * Return the time until the full capacity is available again.
	 * @return the reset duration
	 */
	public Duration resetAfter() {
		return Duration.ofMillis(this.resetAfterMillis);
	}

	/**
	 * Return the seconds until the full capacity is available again, rounded up (for a {@code RateLimit-Reset}
	 * header).
	 * @return the reset in whole seconds
	 */
	public long resetAfterSeconds() {
		return Durations.toSecondsRoundedUp(this.resetAfterMillis);
	}

	/**
	 * Return the seconds a rejected client should wait before retrying, rounded up and at least 1 (for a
	 * {@code Retry-After} header). When the cost can never pass, the time until the capacity is full again.
	 * @return the retry delay in whole seconds, at least 1
	 */
	public long retryAfterSeconds() {
		long millis = (this.retryAfterMillis == NEVER) ? this.resetAfterMillis : this.retryAfterMillis;
		return Math.max(1, Durations.toSecondsRoundedUp(millis));
	}

	/**
	 * Return whether the request was rejected because its cost exceeds what can ever be available.
	 * @return whether the cost can never pass
	 */
	public boolean exceedsCapacity() {
		return !this.allowed && this.retryAfterMillis == NEVER;
	}

	/**
	 * Where a {@link Decision} came from.
	 */
	public enum Origin {

		/** The store decided. */
		STORE,

		/**
		 * This instance admitted from a block of units it had leased from the store for the key
		 * ({@link RateLimitPolicy#lease()}), without a round trip; the remaining units are the store's when the block
		 * was taken, plus what the block holds.
		 */
		LEASE,

		/**
		 * This instance rejected locally, without asking the store: the store had rejected this key until a known
		 * time, or the request costs more than the capacity, which no store admits (then the remaining units are
		 * reported as the capacity, unasked).
		 */
		DENY_CACHE,

		/** The store failed and the in-memory fallback of this instance decided ({@link FailureMode#LOCAL}). */
		LOCAL_FALLBACK,

		/** The store failed and the request passed uncounted ({@link FailureMode#ALLOW}). */
		FAIL_OPEN,

		/**
		 * The store failed and the request was rejected as if the service were unavailable
		 * ({@link FailureMode#DENY}); the retry delay is when the store will be tried again.
		 */
		FAIL_CLOSED,

		/**
		 * The key is locked out: it broke a policy with a penalty, and every policy of the penalty group rejects it
		 * until the lock ends, which the retry delay says, whether the store or the deny cache told it.
		 * @since 0.5.0
		 */
		PENALTY

	}

}
