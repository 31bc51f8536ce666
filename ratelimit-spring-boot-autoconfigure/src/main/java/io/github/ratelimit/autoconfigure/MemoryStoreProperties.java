package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.memory.InMemoryRateLimitStore;

/**
 * Settings of the in-memory store, and of the in-memory fallback of the 'local' failure mode.
 */
public class MemoryStoreProperties {

	/**
	 * Maximum number of keys held across all policies. When full, the keys nearest a fresh state are evicted
	 * (never rejected): expired ones first, then those whose counts forgive the fewest units.
	 */
	private long maxKeys = InMemoryRateLimitStore.DEFAULT_MAX_KEYS;

	/**
	 * Maximum number of keys one policy may hold, so that a flood of new keys on one endpoint only evicts keys of
	 * that endpoint.
	 */
	private long maxKeysPerPolicy = InMemoryRateLimitStore.DEFAULT_MAX_KEYS_PER_POLICY;

	public long getMaxKeys() {
		return this.maxKeys;
	}

	public void setMaxKeys(long maxKeys) {
		this.maxKeys = maxKeys;
	}

	public long getMaxKeysPerPolicy() {
		return this.maxKeysPerPolicy;
	}

	public void setMaxKeysPerPolicy(long maxKeysPerPolicy) {
		this.maxKeysPerPolicy = maxKeysPerPolicy;
	}

	InMemoryRateLimitStore build(io.github.ratelimit.TimeSource clock) {
		return InMemoryRateLimitStore.builder()
			.clock(clock)
			.maxKeys(this.maxKeys)
			.maxKeysPerPolicy(this.maxKeysPerPolicy)
			.build();
	}

}
