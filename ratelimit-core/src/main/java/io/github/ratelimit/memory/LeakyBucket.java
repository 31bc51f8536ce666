package io.github.ratelimit.memory;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * Leaky bucket as a meter, in exact integer units: a request pours {@code cost·T} units into a bucket that holds
 * {@code B·T} units and drains {@code R} units per millisecond (see {@link TokenBucket} for {@code T} and
 * {@code R}). It starts empty. Requests are never queued: one that would overflow the bucket is rejected.
 * <ul>
 * <li>Admit iff {@code level + cost·T ≤ B·T}, then pour.
 * <li>Remaining: {@code ⌊(B·T - level) / T⌋}. Reset: until empty, {@code ⌈level / R⌉} ms. Retry-after:
 * {@code ⌈(level + cost·T - B·T) / R⌉} ms.
 * <li>Bound: the same as the token bucket with the same parameters, of which this is the mirror image
 * ({@code level = B·T - tokens}); both make the same decisions.
 * </ul>
 * Mirrored by {@code leaky-bucket.lua}.
 */
final class LeakyBucket extends KeyState {

	private long level;

	private long last = Long.MIN_VALUE;

	@Override
	Decision acquire(RateLimitPolicy policy, long now, long cost, boolean detailed) {
		long perToken = policy.unitsPerToken();
		long perMilli = policy.unitsPerMilli();
		long burst = policy.burst();
		long capacity = burst * perToken;
		now = Math.max(now, this.last);
		long level = this.level;
		if (level > 0) {
			long elapsed = now - this.last;
			level = (elapsed >= IntMath.ceilDiv(level, perMilli)) ? 0 : level - elapsed * perMilli;
		}
		if (cost > burst) {
			return reject(policy, detailed, (capacity - level) / perToken, IntMath.ceilDiv(level, perMilli),
					Decision.NEVER);
		}
		long need = cost * perToken;
		if (level + need > capacity) {
			return reject(policy, detailed, (capacity - level) / perToken, IntMath.ceilDiv(level, perMilli),
					IntMath.ceilDiv(level + need - capacity, perMilli));
		}
		level += need;
		this.level = level;
		this.last = now;
		return admit(policy, detailed, (capacity - level) / perToken, IntMath.ceilDiv(level, perMilli));
	}

	@Override
	long expiresAt(RateLimitPolicy policy) {
		return (this.last == Long.MIN_VALUE) ? Long.MIN_VALUE
				: this.last + IntMath.ceilDiv(this.level, policy.unitsPerMilli());
	}

}
