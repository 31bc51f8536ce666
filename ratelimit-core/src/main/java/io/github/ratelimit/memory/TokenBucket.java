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
 * Mirrored by {@code token-bucket.lua}.
 */
final class TokenBucket extends KeyState {

	private boolean fresh = true;

	private long units;

	private long last;

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
			units = this.units;
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

	@Override
	void refund(RateLimitPolicy policy, long at, long cost) {
		// Tokens given back at the last admission's time are as good as never taken; the bucket never overfills.
		if (!this.fresh) {
			this.units = Math.min(policy.burst() * policy.unitsPerToken(), this.units + cost * policy.unitsPerToken());
		}
	}

	@Override
	long expiresAt(RateLimitPolicy policy) {
		long capacity = policy.burst() * policy.unitsPerToken();
		return this.fresh ? Long.MIN_VALUE : this.last + IntMath.ceilDiv(capacity - this.units, policy.unitsPerMilli());
	}

}
