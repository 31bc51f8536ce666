package io.github.ratelimit.conformance;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The in-memory store, telling a test of each decision as it is asked for (to count them, or to read the stack that
 * reached the store). Every acquisition goes through {@link #tryAcquire}, also those of a batch or of the
 * non-blocking path (the SPI's defaults).
 */
public final class RecordingStore implements RateLimitStore {

	private final InMemoryRateLimitStore delegate;

	private final Runnable onDecision;

	/**
	 * Create a store.
	 * @param delegate the store that decides
	 * @param onDecision run on the deciding thread before each decision
	 */
	public RecordingStore(InMemoryRateLimitStore delegate, Runnable onDecision) {
		this.delegate = delegate;
		this.onDecision = onDecision;
	}

	@Override
	public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
		this.onDecision.run();
		return this.delegate.tryAcquire(policy, key, cost);
	}

	@Override
	public void reset(RateLimitPolicy policy, String key) {
		this.delegate.reset(policy, key);
	}

	@Override
	public boolean isLocal() {
		return true;
	}

}
