package io.github.ratelimit.memory;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * Token bucket with continuous refill, in exact integer units: a token is {@code T} units
 * ({@link RateLimitPolicy#unitsPerToken()}), {@code R} units accrue per millisecond
 * ({@link RateLimitPolicy#unitsPerMilli()}), the bucket holds at most {@code B·T} units and starts full.
 * <ul>
 * <li>Admit iff {@code tokens ≥ cost·T}, then take them.
 * <li>Remaining: {@code ⌊tokens / T⌋}. Reset: until full, {@code ⌈(B·T - tokens) / R⌉} ms. Retry-after:
 * {@code ⌈(cost·T - tokens) / R⌉} ms. Next unit: {@code ⌈(T - tokens mod T) / R⌉} ms.
 * <li>Bound: {@code ≤ B + ⌊L·W/W⌋ = B + L} in any closed interval of length {@code W}.
 * </ul>
 * Serves both {@link io.github.ratelimit.Algorithm#TOKEN_BUCKET} and
 * {@link io.github.ratelimit.Algorithm#LEAKY_BUCKET}: a leaky bucket as a meter, which starts empty, fills by
 * {@code cost·T} per admission and drains {@code R} per millisecond, is this bucket seen from the other side
 * ({@code level = B·T - tokens}), so it admits, rejects and answers remaining, reset and retry-after exactly as this
 * does.
 * <p>
 * A change of the policy's limit or burst keeps the bucket's level, what its admissions have used, in whole tokens
 * (a part of a token counts as a whole: never gained), clamped to the new burst, as a window keeps its count: 4 of
 * 10 tokens used leave 16 of a new burst of 20, and none of a new burst of 3. It then refills at the new rate.
 * <p>
 * Mirrored by {@code token-bucket.lua}.
 */
final class TokenBucket extends KeyState {

	private boolean fresh = true;

	private long units;

	private long last;

	/** The units of a token that {@link #units} is counted in: that of the configuration that last decided. */
	private long perToken;

	/** The capacity in those units. */
	private long capacity;

	/** When the bucket is full again, at the rate of the configuration that last decided. */
	private long expires = Long.MIN_VALUE;

	TokenBucket(String key) {
		super(key);
	}

	@Override
	Decision acquire(RateLimitPolicy policy, long now, long cost) {
		long perToken = policy.unitsPerToken();
		long perMilli = policy.unitsPerMilli();
		long burst = policy.burst();
		long capacity = burst * perToken;
		long units = capacity;
		if (!this.fresh) {
			now = Math.max(now, this.last);
			units = unitsIn(perToken, capacity);
			long missing = capacity - units;
			if (missing > 0) {
				long elapsed = now - this.last;
				units = (elapsed >= IntMath.ceilDiv(missing, perMilli)) ? capacity : units + elapsed * perMilli;
			}
		}
		long reset = IntMath.ceilDiv(capacity - units, perMilli);
		if (cost > burst) {
			return Decision.rejected(policy.capacity(), units / perToken, reset, Decision.NEVER,
					nextToken(units, perToken, perMilli));
		}
		long need = cost * perToken;
		if (units < need) {
			return Decision.rejected(policy.capacity(), units / perToken, reset,
					IntMath.ceilDiv(need - units, perMilli), nextToken(units, perToken, perMilli));
		}
		units -= need;
		this.fresh = false;
		this.units = units;
		this.last = now;
		this.perToken = perToken;
		this.capacity = capacity;
		this.expires = now + IntMath.ceilDiv(capacity - units, perMilli);
		return Decision.allowed(policy.capacity(), units / perToken, IntMath.ceilDiv(capacity - units, perMilli),
				nextToken(units, perToken, perMilli));
	}

	/**
	 * The time until the bucket holds one more whole token than now; for a full bucket, what a token taken now takes
	 * to come back.
	 */
	private static long nextToken(long units, long perToken, long perMilli) {
		return IntMath.ceilDiv(perToken - units % perToken, perMilli);
	}

	/**
	 * The units in the bucket at the last admission under a configuration of {@code perToken} units a token and this
	 * capacity: under another one, what was used, in whole tokens, is kept.
	 */
	private long unitsIn(long perToken, long capacity) {
		if (this.perToken == perToken && this.capacity == capacity) {
			return this.units;
		}
		long usedTokens = IntMath.ceilDiv(this.capacity - this.units, this.perToken);
		return Math.max(0, capacity - usedTokens * perToken);
	}

	@Override
	void refund(RateLimitPolicy policy, long at, long cost) {
		// Tokens given back at the last admission's time are as good as never taken; the bucket never overfills.
		if (!this.fresh) {
			long perToken = policy.unitsPerToken();
			long capacity = policy.burst() * perToken;
			this.units = Math.min(capacity, unitsIn(perToken, capacity) + cost * perToken);
			this.perToken = perToken;
			this.capacity = capacity;
			this.expires = this.last + IntMath.ceilDiv(capacity - this.units, policy.unitsPerMilli());
		}
	}

	@Override
	void charge(RateLimitPolicy policy, long at, long cost) {
		// Below empty: the refill repays the debt before the next request can pass.
		if (!this.fresh) {
			long perToken = policy.unitsPerToken();
			long capacity = policy.burst() * perToken;
			// Saturating: a debt past a quarter of the range is as good as endless, and must not wrap around.
			long extra = (cost > (Long.MAX_VALUE / 4) / perToken) ? Long.MAX_VALUE / 4 : cost * perToken;
			this.units = Math.max(-(Long.MAX_VALUE / 4), unitsIn(perToken, capacity) - extra);
			this.perToken = perToken;
			this.capacity = capacity;
			this.expires = this.last + IntMath.ceilDiv(capacity - this.units, policy.unitsPerMilli());
		}
	}

	@Override
	long expiresAt(RateLimitPolicy policy) {
		// Kept from the last decision, whose configuration it is full again under; the table's may be another.
		return this.expires;
	}

}
