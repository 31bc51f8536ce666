package io.github.ratelimit.limiter;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The store of {@link RateLimiter#unlimited()}: admits every request with the whole capacity left, counts nothing
 * and calls nothing, so that giving back, charging, resetting and clearing have nothing to do.
 */
final class UnlimitedStore implements RateLimitStore {

	static final UnlimitedStore INSTANCE = new UnlimitedStore();

	private UnlimitedStore() {
	}

	@Override
	public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
		return Decision.allowed(policy.capacity(), policy.capacity(), 0);
	}

	@Override
	public Decision peek(RateLimitPolicy policy, String key) {
		return Decision.allowed(policy.capacity(), policy.capacity(), 0);
	}

	@Override
	public void refund(Acquisition acquisition, long countedAtMillis) {
	}

	@Override
	public void charge(Acquisition acquisition, long countedAtMillis) {
	}

	@Override
	public void reset(RateLimitPolicy policy, String key) {
	}

	@Override
	public void clear() {
	}

	/** Local: the limiter puts no deny cache and no leases in front of it. */
	@Override
	public boolean isLocal() {
		return true;
	}

	@Override
	public String toString() {
		return "UnlimitedStore";
	}

}
