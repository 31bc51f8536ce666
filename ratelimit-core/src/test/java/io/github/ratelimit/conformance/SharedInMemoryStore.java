package io.github.ratelimit.conformance;

import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.Reservation;

/**
 * An in-memory store seen as one instances share, so that a limiter in front of it leases blocks of its units. A
 * test extends it to count or fail the store's calls.
 */
public class SharedInMemoryStore implements RateLimitStore {

	private final RateLimitStore delegate;

	/**
	 * Create a store.
	 * @param delegate the in-memory store that decides
	 */
	public SharedInMemoryStore(RateLimitStore delegate) {
		this.delegate = delegate;
	}

	@Override
	public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
		return this.delegate.tryAcquire(policy, key, cost);
	}

	@Override
	public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
		return this.delegate.tryAcquireAll(acquisitions);
	}

	@Override
	public Decision peek(RateLimitPolicy policy, String key) {
		return this.delegate.peek(policy, key);
	}

	@Override
	public void refund(Acquisition acquisition, long countedAtMillis) {
		this.delegate.refund(acquisition, countedAtMillis);
	}

	@Override
	public void refundAll(List<Acquisition> acquisitions, long[] countedAtMillis) {
		this.delegate.refundAll(acquisitions, countedAtMillis);
	}

	@Override
	public long currentTimeMillis() {
		return this.delegate.currentTimeMillis();
	}

	@Override
	public void reset(RateLimitPolicy policy, String key) {
		this.delegate.reset(policy, key);
	}

	@Override
	public boolean isLocal() {
		return false;
	}

}
